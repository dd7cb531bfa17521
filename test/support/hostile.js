'use strict'

// What the hostile-input tests share (test/security/): a seeded PRNG, senders over node's http
// client and over raw sockets (for bytes the client refuses to send), a concurrent corpus
// runner, and a heap reading after a full GC.

const http = require('node:http')
const net = require('node:net')
const v8 = require('node:v8')
const vm = require('node:vm')

const CONCURRENCY = 32

// Mulberry32: small, fast, and the same sequence on every run.
function prng (seed) {
  let a = seed >>> 0
  return function next () {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The bytes of one request that closes its connection. */
function rawRequest (method, path, headers = {}, extra = '') {
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`
  return Buffer.from(head + extra + '\r\n', 'utf8')
}

/** One case through node's http client; resolves { status, contentType, setCookie, acao, body } or { error }. */
function httpSend (base, c, agent) {
  return new Promise((resolve) => {
    const headers = { ...(c.headers || {}) }
    if (c.body !== undefined) headers['Content-Length'] = Buffer.byteLength(c.body)
    const req = http.request(base + c.path, { method: c.method, headers, agent }, (res) => {
      const chunks = []
      res.on('data', (d) => chunks.push(d))
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          contentType: res.headers['content-type'],
          setCookie: res.headers['set-cookie'],
          acao: res.headers['access-control-allow-origin'],
          body: Buffer.concat(chunks).toString('utf8')
        })
      )
      res.on('error', (err) => resolve({ error: err.code || err.message }))
    })
    req.on('error', (err) => resolve({ error: err.code || err.message }))
    req.setTimeout(10000, () => req.destroy(new Error('client timeout')))
    req.end(c.body)
  })
}

// One request on its own connection; reads until the server closes. A reset after the status
// line arrived still counts as answered (the server may cut a socket it already answered).
function rawSend (port, bytes) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks = []
    const done = (error) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(parseRaw(Buffer.concat(chunks), error))
    }
    const timer = setTimeout(() => done('client timeout'), 10000)
    socket.on('data', (d) => chunks.push(d))
    socket.on('end', () => done())
    socket.on('error', (err) => done(err.code || err.message))
    socket.on('connect', () => socket.write(bytes))
  })
}

// A change stream (GET …/changes): resolves at the first bytes of a 200 (a stream never ends on
// its own) and then cuts it, or at the end of any other answer.
function streamSend (base, c) {
  return new Promise((resolve) => {
    let timer = null
    const req = http.request(base + c.path, { method: c.method, headers: c.headers, agent: false }, (res) => {
      let body = ''
      const done = () => {
        clearTimeout(timer)
        req.destroy()
        resolve({
          status: res.statusCode,
          contentType: res.headers['content-type'],
          setCookie: res.headers['set-cookie'],
          acao: res.headers['access-control-allow-origin'],
          body
        })
      }
      res.setEncoding('utf8')
      if (res.statusCode === 200) {
        res.once('data', (d) => { body += d; done() })
      } else {
        res.on('data', (d) => { body += d })
        res.on('end', done)
      }
      res.on('error', (err) => resolve({ error: err.code || err.message }))
    })
    req.on('error', (err) => resolve({ error: err.code || err.message }))
    timer = setTimeout(() => req.destroy(new Error('client timeout')), 10000)
    req.end()
  })
}

function parseRaw (buf, error) {
  const text = buf.toString('utf8')
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
  if (!m) return { error: error || 'no response' }
  const headEnd = text.indexOf('\r\n\r\n')
  const head = headEnd < 0 ? text : text.slice(0, headEnd)
  let body = headEnd < 0 ? '' : text.slice(headEnd + 4)
  if (/\r\ntransfer-encoding: chunked/i.test(head)) body = dechunk(body)
  const ct = /\r\ncontent-type: ([^\r]*)/i.exec(head)
  const acao = /\r\naccess-control-allow-origin: ([^\r]*)/i.exec(head)
  return {
    status: Number(m[1]),
    contentType: ct ? ct[1] : undefined,
    setCookie: /\r\nset-cookie:/i.test(head),
    acao: acao ? acao[1] : undefined,
    body
  }
}

function dechunk (body) {
  let out = ''
  let i = 0
  while (i < body.length) {
    const eol = body.indexOf('\r\n', i)
    if (eol < 0) break
    const size = parseInt(body.slice(i, eol), 16)
    if (!size) break
    out += body.slice(eol + 2, eol + 2 + size)
    i = eol + 4 + size
  }
  return out
}

/**
 * Sends every case of `corpus` (CONCURRENCY at a time) and checks each answer.
 * @param {{ url: string }} app
 * @param {object[]} corpus cases: { kind: 'http', method, path, headers?, body? }, { kind: 'raw', bytes }, or
 *   { kind: 'stream', method, path, headers? } (read up to a stream's first bytes, then cut)
 * @param {import('node:http').Agent} agent
 * @param {(c: object, res: object) => string|null} check why an answer is wrong, or null
 * @returns {Promise<{ counts: Record<string, number>, failures: object[] }>} answers by status
 *   ('none': no answer), and the first 20 failures
 */
async function runCorpus (app, corpus, agent, check) {
  const port = Number(new URL(app.url).port)
  const counts = {}
  const failures = []
  let next = 0
  async function worker () {
    while (next < corpus.length) {
      const c = corpus[next++]
      const res = c.kind === 'raw'
        ? await rawSend(port, c.bytes)
        : c.kind === 'stream' ? await streamSend(app.url, c) : await httpSend(app.url, c, agent)
      const key = res.error ? 'none' : String(res.status)
      counts[key] = (counts[key] || 0) + 1
      const why = check(c, res)
      if (why && failures.length < 20) failures.push({ why, request: describe(c) })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { counts, failures }
}

/**
 * The same corpus three times: the first pass warms up, and the heap is read after it and after
 * the third (each after `settle`, and after a full GC when one can be had), so a per-request
 * leak shows as growth.
 * @param {{ url: string }} app
 * @param {object[]} corpus
 * @param {import('node:http').Agent} agent
 * @param {(c: object, res: object) => string|null} check
 * @param {{ afterWarmUp?: () => Promise<void>, settle?: () => Promise<void> }} [hooks]
 * @returns {Promise<{ passes: Array<{ counts: Record<string, number>, failures: object[] }>, growthMb: number }>}
 */
async function runThreePasses (app, corpus, agent, check, { afterWarmUp = async () => {}, settle = async () => {} } = {}) {
  const warm = await runCorpus(app, corpus, agent, check)
  await afterWarmUp()
  await settle()
  const heapAfterWarmUp = settledHeapUsed()
  const second = await runCorpus(app, corpus, agent, check)
  const third = await runCorpus(app, corpus, agent, check)
  await settle()
  return { passes: [warm, second, third], growthMb: (settledHeapUsed() - heapAfterWarmUp) / 1024 / 1024 }
}

/** A case, short enough for a failure message. */
function describe (c) {
  const text = c.kind === 'raw' ? c.bytes.toString('latin1') : `${c.method} ${c.path}`
  return c.kind + ' ' + JSON.stringify(text.slice(0, 160))
}

// jest runs without --expose-gc. V8 installs `gc` in contexts created after the flag is set,
// so a fresh vm context hands us one; if that ever stops working, the raw reading is used (the
// tests' bounds allow for uncollected garbage).
let gc = null
try {
  v8.setFlagsFromString('--expose-gc')
  gc = vm.runInNewContext('gc')
} catch {}

/** @returns {number} heapUsed, after a full GC when one can be had (settledHeapUsed.afterGc) */
function settledHeapUsed () {
  if (typeof gc === 'function') gc()
  return process.memoryUsage().heapUsed
}

settledHeapUsed.afterGc = typeof gc === 'function'

module.exports = { prng, rawRequest, httpSend, rawSend, streamSend, runCorpus, runThreePasses, describe, settledHeapUsed, CONCURRENCY }
