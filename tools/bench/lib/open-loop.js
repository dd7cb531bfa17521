'use strict'

/**
 * A constant-rate (open-loop) HTTP/1.1 load generator, in the manner of wrk2.
 *
 * Why not autocannon `overallRate` or hey `-q`: they let each connection fire back to back until
 * its share of the second is used, so arrivals come in bursts, and they time a request from when
 * it was sent. A server that stalls then simply receives fewer requests while it stalls, and the
 * stall shows up in one sample instead of in every request that should have arrived meanwhile
 * (coordinated omission). Here request i is *due* at start + i / rate whatever the server does,
 * and its latency is measured from that due time: a request that has to wait for a busy
 * connection is charged for the wait.
 *
 * Arrivals are spread round-robin over a pool of keep-alive connections (request i goes to
 * connection i mod C), each with its own FIFO of due requests. Raw `net` sockets and a minimal
 * response parser keep the generator's own cost per request small (node:http's client costs
 * several times more and would make the generator the bottleneck on a 2-core machine).
 */

const net = require('node:net')
const { performance } = require('node:perf_hooks')
const { newLatencyHistogram, summarize } = require('./latency-summary')
const { validate } = require('./open-loop-options')

const TIMEOUT_CHECK_MS = 50
// Above this much time to the next due request, sleep on a timer (1 ms granularity) until 1 ms
// before it; below, poll with setImmediate so requests leave close to their due time.
const SPIN_BELOW_MS = 1.5
const HEADER_END = '\r\n\r\n'

/**
 * @typedef {{ path: string, headers?: Record<string, string>, method?: string, body?: string }} PlannedRequest
 *   headers: extra request headers (e.g. a User-Agent that marks this one request); method: GET
 *   unless given; body: sent with its Content-Length (e.g. an OFREP evaluation's JSON)
 */

/**
 * Runs one open-loop load test.
 * @param {{ host: string, port: number, rate: number, durationMs: number, connections?: number,
 *   next: () => PlannedRequest, timeoutMs?: number, lateMs?: number, precise?: boolean, localAddresses?: string[],
 *   onAnswer?: (request: PlannedRequest,
 *     outcome: { status: number, error?: string, due: number, sent: number, done: number }) => void }} options
 *   rate: requests per second; next: each request; lateMs: a request sent more than this after
 *   its due time counts as `late` (the generator or the pool could not keep the schedule);
 *   localAddresses: the addresses connections are opened from, connection i from the i-th (mod
 *   their count), so one run can be many clients (127.0.0.2, .3 … on loopback);
 *   precise: poll just before each due time instead of sleeping on timers only (more CPU);
 *   onAnswer: called once per request sent, with what `next()` returned and its outcome (status 0
 *   and an error code when it got no answer; times in epoch ms) — for runs that check every answer
 * @returns {Promise<{ offeredRate: number, rps: number, durationMs: number, sent: number,
 *   requests: number, ok: number, non2xx: number, errors: number, errorCodes: Record<string, number>,
 *   late: number, unsent: number, latencyMean: number, latencyStdev: number,
 *   min: number, p50: number, p90: number, p99: number, p999: number, max: number }>}
 *   requests = answers received; unsent: due but never sent before the run stopped
 */
async function runOpenLoop (options) {
  const o = validate(options)
  const total = Math.floor(o.rate * o.durationMs / 1000)
  const intervalMs = 1000 / o.rate
  const request = ({ planned: r }) => `${r.method || 'GET'} ${r.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\n` +
    `${r.headers ? headerLines(r.headers) : ''}` +
    `${r.body === undefined ? '' : `Content-Length: ${Buffer.byteLength(r.body)}\r\n`}\r\n${r.body ?? ''}`
  // performance.now() → epoch ms, for onAnswer
  const epoch = (t) => performance.timeOrigin + t
  const report = (item, status, error) => {
    if (o.onAnswer) {
      o.onAnswer(item.planned, { status, error, due: epoch(item.due), sent: epoch(item.sentAt), done: epoch(performance.now()) })
    }
  }

  const all = newLatencyHistogram()
  const counts = { sent: 0, requests: 0, ok: 0, non2xx: 0, errors: 0, late: 0, unsent: 0 }
  /** @type {Record<string, number>} */
  const errorCodes = {}
  let lastAnswer = 0

  let t0 = NaN // set when the clock starts, after the connections are open
  let planned = 0
  let stopping = false
  const conns = Array.from({ length: o.connections }, (_, i) => ({
    socket: null,
    queue: [],
    current: null,
    buf: '',
    localAddress: o.localAddresses ? o.localAddresses[i % o.localAddresses.length] : undefined
  }))
  // The connections are opened before the clock starts: their handshake is not what a
  // steady-state client pays per request.
  await Promise.all(conns.map((c) => connect(c).catch(() => {})))

  t0 = performance.now()
  const endAt = t0 + o.durationMs
  let done
  const finished = new Promise((resolve) => { done = resolve })

  function connect (c) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: o.host, port: o.port, noDelay: true, localAddress: c.localAddress })
      c.socket = socket
      c.buf = ''
      socket.setEncoding('latin1')
      socket.on('data', (chunk) => { if (c.socket === socket) onData(c, chunk) })
      socket.once('connect', resolve)
      socket.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
        reject(err)
        fail(c, socket, err.code || err.message)
      })
      socket.on('close', () => fail(c, socket, 'ECONNCLOSED'))
    })
  }

  // A connection lost with a request in flight fails that request; an idle one is reopened
  // lazily by the next request it has to send.
  function fail (c, socket, code) {
    if (c.socket !== socket) return
    c.socket = null
    if (c.current) {
      counts.errors++
      errorCodes[code] = (errorCodes[code] || 0) + 1
      report(c.current, 0, code)
      c.current = null
    }
    socket.destroy()
    pump(c)
  }

  function send (c) {
    const item = c.queue.shift()
    const now = performance.now()
    if (now - item.due > o.lateMs) counts.late++
    item.sentAt = now
    c.current = item
    counts.sent++
    if (!c.socket) connect(c).catch(() => {})
    c.socket.write(request(item))
  }

  function pump (c) {
    if (c.current || stopping || Number.isNaN(t0)) return
    if (c.queue.length) send(c)
    else if (planned >= total) maybeDone()
  }

  function onData (c, chunk) {
    c.buf += chunk
    for (;;) {
      const item = c.current
      if (!item) {
        c.buf = ''
        return
      }
      const headEnd = c.buf.indexOf(HEADER_END)
      if (headEnd === -1) return
      const head = c.buf.slice(0, headEnd)
      const length = contentLength(head)
      if (length === null) {
        // Chunked: the small bodies seen here arrive whole, so wait for the last-chunk marker.
        const end = c.buf.indexOf('\r\n0\r\n\r\n', headEnd)
        if (end === -1) return
        c.buf = c.buf.slice(end + 7)
      } else {
        const need = headEnd + 4 + length
        if (c.buf.length < need) return
        c.buf = c.buf.slice(need)
      }
      answered(c, item, Number(head.slice(9, 12)), /\r\nconnection:\s*close/i.test(head))
    }
  }

  function answered (c, item, status, serverCloses) {
    const now = performance.now()
    const ms = now - item.due
    lastAnswer = now
    all.recordValue(Math.max(1, Math.round(ms * 1000)))
    counts.requests++
    if (status >= 200 && status < 300) counts.ok++
    else counts.non2xx++
    report(item, status)
    c.current = null
    // A server that closes the connection: the next request opens another.
    if (serverCloses && c.socket) {
      c.socket.destroy()
      c.socket = null
    }
    pump(c)
  }

  // Per-request timeout: a request unanswered for timeoutMs fails and its connection is reset.
  const timeoutTimer = setInterval(() => {
    const now = performance.now()
    for (const c of conns) {
      if (c.current && now - c.current.sentAt > o.timeoutMs && c.socket) fail(c, c.socket, 'TIMEOUT')
    }
    if (now > endAt + o.timeoutMs) stop()
  }, TIMEOUT_CHECK_MS)

  function schedule () {
    if (stopping) return
    const now = performance.now()
    while (planned < total && t0 + planned * intervalMs <= now) {
      const c = conns[planned % o.connections]
      c.queue.push({ due: t0 + planned * intervalMs, planned: o.next() })
      planned++
      if (!c.current) pump(c)
    }
    if (planned >= total) {
      maybeDone()
      return
    }
    const wait = t0 + planned * intervalMs - performance.now()
    if (!o.precise) setTimeout(schedule, Math.max(1, wait))
    else if (wait > SPIN_BELOW_MS) setTimeout(schedule, wait - 1)
    else setImmediate(schedule)
  }

  function maybeDone () {
    if (stopping) return
    if (planned >= total && conns.every((c) => !c.current && !c.queue.length)) stop()
  }

  function stop () {
    if (stopping) return
    stopping = true
    clearInterval(timeoutTimer)
    for (const c of conns) {
      counts.unsent += c.queue.length
      c.queue = []
      if (c.current) {
        counts.errors++
        errorCodes.TIMEOUT = (errorCodes.TIMEOUT || 0) + 1
        report(c.current, 0, 'TIMEOUT')
        c.current = null
      }
      if (c.socket) c.socket.destroy()
      c.socket = null
    }
    done()
  }

  schedule()
  await finished

  const elapsedMs = Math.max(endAt - t0, (lastAnswer || performance.now()) - t0)
  const latency = summarize(all)
  return {
    offeredRate: o.rate,
    rps: round(counts.requests / (elapsedMs / 1000), 2),
    durationMs: round(elapsedMs, 1),
    ...counts,
    errorCodes,
    latencyMean: latency.mean,
    latencyStdev: latency.stdev,
    min: latency.min,
    p50: latency.p50,
    p90: latency.p90,
    p99: latency.p99,
    p999: latency.p999,
    max: latency.max
  }
}

function headerLines (headers) {
  let out = ''
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(name + value)) throw new TypeError(`open-loop: header ${JSON.stringify(name)} has a line break`)
    out += `${name}: ${value}\r\n`
  }
  return out
}

function contentLength (head) {
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head)
  if (m) return Number(m[1])
  return /\r\ntransfer-encoding:[^\r]*chunked/i.test(head) ? null : 0
}

function round (n, digits) {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

module.exports = { runOpenLoop }
