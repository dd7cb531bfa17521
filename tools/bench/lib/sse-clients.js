'use strict'

/**
 * The clients of tools/bench/sse.js, in a process of their own (forked with IPC): many change streams
 * over raw sockets, each holding only its socket and a few numbers, so one process holds tens of
 * thousands and the server's figures are the server's alone.
 *
 * Messages from the parent, each answered with `{ type: <same>, ... }`:
 *   { type: 'open', port, path, count, concurrency }  opens `count` streams; answers when each
 *                                                     has its first bytes: { opened, failed, ms }
 *   { type: 'arm' }                                   forget arrivals; the next event of each
 *                                                     stream is timed
 *   { type: 'arrivals', timeoutMs }                   waits until every open stream has had
 *                                                     one (or the timeout): { times, missing }
 *   { type: 'wait-ended', timeoutMs }                 waits until every stream is closed by the
 *                                                     server: { ended, clean, lastEndedAt }
 * Times are epoch milliseconds with sub-millisecond precision (performance.timeOrigin + now()),
 * comparable with the parent's on the same machine.
 */

const net = require('node:net')

const now = () => performance.timeOrigin + performance.now()
const streams = []
let armed = false

// Every socket reads into this one buffer (net's `onread`, without the stream machinery a
// 'data' event costs): each read is handled before the next, so one buffer serves them all, and
// reading ten thousand sockets costs the client little beside the server it measures.
const READ_BUFFER = Buffer.alloc(64 * 1024)
const DATA = Buffer.from('data: ')
const TERMINATOR = Buffer.from('0\r\n\r\n')

/** Opens one stream; resolves true once its response head and first event bytes are in. */
function openOne (port, path) {
  return new Promise((resolve) => {
    const stream = { socket: null, opened: false, arrival: 0, ended: false, endedAt: 0, clean: false, head: '' }
    /** @param {number} n @param {Buffer} buf @returns {boolean} true: keep reading */
    const onRead = (n, buf) => {
      if (!stream.opened) {
        stream.head += buf.toString('latin1', 0, n)
        if (!stream.head.includes('\nid: ')) return true
        stream.opened = stream.head.startsWith('HTTP/1.1 200')
        stream.head = ''
        streams.push(stream)
        resolve(stream.opened)
        return true
      }
      if (armed && stream.arrival === 0 && buf.subarray(0, n).includes(DATA)) stream.arrival = now()
      // The last chunk of a stream the server ended (chunked encoding's terminator).
      if (n >= TERMINATOR.length && buf.subarray(n - TERMINATOR.length, n).equals(TERMINATOR)) stream.clean = true
      return true
    }
    const socket = net.connect({ port, host: '127.0.0.1', onread: { buffer: READ_BUFFER, callback: onRead } })
    stream.socket = socket
    socket.setNoDelay(true)
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`))
    socket.on('error', () => {})
    socket.on('close', () => {
      stream.ended = true
      stream.endedAt = now()
      if (!stream.opened) resolve(false)
    })
  })
}

async function open ({ port, path, count, concurrency }) {
  const started = now()
  let next = 0
  let failed = 0
  async function worker () {
    while (next < count) {
      next++
      if (!(await openOne(port, path))) failed++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { opened: streams.filter((s) => s.opened && !s.ended).length, failed, ms: now() - started }
}

function until (done, timeoutMs) {
  const deadline = now() + timeoutMs
  return new Promise((resolve) => {
    const check = () => (done() || now() > deadline ? resolve() : setTimeout(check, 5))
    check()
  })
}

async function handle (msg) {
  if (msg.type === 'open') return open(msg)
  if (msg.type === 'arm') {
    for (const s of streams) s.arrival = 0
    armed = true
    return {}
  }
  if (msg.type === 'arrivals') {
    const live = streams.filter((s) => s.opened && !s.ended)
    await until(() => live.every((s) => s.arrival > 0), msg.timeoutMs)
    armed = false
    const times = live.filter((s) => s.arrival > 0).map((s) => s.arrival)
    return { times, missing: live.length - times.length }
  }
  if (msg.type === 'wait-ended') {
    await until(() => streams.every((s) => s.ended), msg.timeoutMs)
    const ended = streams.filter((s) => s.ended)
    return { ended: ended.length, clean: streams.filter((s) => s.clean).length, lastEndedAt: Math.max(0, ...ended.map((s) => s.endedAt)) }
  }
  throw new Error(`unknown message ${msg.type}`)
}

process.on('message', (/** @type {any} */ msg) => {
  handle(msg).then(
    (result) => process.send({ type: msg.type, ...result }),
    (err) => process.send({ type: msg.type, error: err.message })
  )
})
process.on('disconnect', () => process.exit(0))
