'use strict'

// One worker's change streams, with responses and a clock of the test's own: who hears of a
// config change and of a switch, and when; what a stream that opens is told; heartbeats; the
// cap; a client that stops reading; close. (test/api/ofrep-stream.test.js runs the same over
// real sockets against HBase.)

const { EventEmitter } = require('node:events')
const { createStreamHub, MAX_BUFFERED_BYTES } = require('../../../api/public/ofrep/stream-hub')
const { parseSse } = require('../../support/sse-client')

const HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8' }
const route = (name, { configs = true, maxStreams = 100, heartbeatMs = 1600, maxStreamAgeSec = 0 } = {}) => ({
  name, configs, stream: { maxStreams, heartbeatMs, maxStreamAgeSec }
})
const ROUTES = [route('sample5'), route('sample3'), route('sample1', { configs: false }), { name: 'sample2', configs: true, stream: null }]

class FakeResponse extends EventEmitter {
  constructor () {
    super()
    this.status = null
    this.text = ''
    this.destroyed = false
    this.writableEnded = false
    this.writableLength = 0
    this.stalled = false // a client that reads nothing: what is written piles up
  }

  writeHead (status, headers) { this.status = status; this.headers = headers }
  write (bytes) { this.text += bytes; if (this.stalled) this.writableLength += bytes.length; return true }
  end (bytes) { if (bytes) this.text += bytes; this.writableEnded = true; this.emit('close') }
  destroy () { this.destroyed = true; this.emit('close') }
  blocks () { return parseSse(this.text).blocks }
  refetches () { return this.blocks().filter((b) => b.data !== undefined).map((b) => JSON.parse(b.data)) }
}

let t
function hub (options = {}) {
  t = 1_764_150_000_000
  return createStreamHub({ routes: ROUTES, controlPollMs: 1000, now: () => t, random: () => 0.5, ...options })
}
function open (h, name, id, lastEventId) {
  const res = new FakeResponse()
  const headers = lastEventId === undefined ? {} : { 'last-event-id': lastEventId }
  const outcome = h.open(ROUTES.find((r) => r.name === name), id, { socket: { destroyed: false }, headers }, res, HEADERS)
  return { res, outcome }
}
const settled = (h) => { t += 10_000; return h } // past the start margin: a fresh stream has nothing to catch up on

afterEach(() => jest.useRealTimers())

test('a stream opens with its retry delay and a stamp, and nothing to catch up on', () => {
  const h = settled(hub())
  const { res, outcome } = open(h, 'sample5', '7')
  expect(outcome).toBe('opened')
  expect(res.status).toBe(200)
  expect(res.headers).toBe(HEADERS)
  expect(res.blocks()).toEqual([{ retry: '3000', id: String(t) }])
})

test('a config change reaches the watchers of its id on every endpoint with configs, at once, with lastModified', () => {
  const h = settled(hub())
  const a = open(h, 'sample5', '7').res
  const b = open(h, 'sample3', '7').res
  const other = open(h, 'sample5', '8').res
  const fixed = open(h, 'sample1', '7').res
  t += 500
  h.configChanged('7', t - 100)
  const expected = [{ type: 'refetchEvaluation', lastModified: Math.floor((t - 100) / 1000) }]
  expect([a.refetches(), b.refetches(), other.refetches(), fixed.refetches()]).toEqual([expected, expected, [], []])
  expect(a.blocks().at(-1).id).toBe(String(t))
  h.configChanged('7')
  expect(a.refetches().at(-1)).toEqual({ type: 'refetchEvaluation' })
  expect(h.stats().counts.sample5).toMatchObject({ opened: 2, events: 2 })
})

test('a switch reaches every watcher of its endpoint once every host has applied it (controlPollMs + 1 s later)', () => {
  jest.useFakeTimers()
  const h = settled(hub())
  const a = open(h, 'sample1', '7').res
  const b = open(h, 'sample1', '8').res
  const elsewhere = open(h, 'sample5', '7').res
  h.endpointSwitched('sample1')
  jest.advanceTimersByTime(1999)
  expect(a.refetches()).toEqual([])
  jest.advanceTimersByTime(1)
  const refetch = { type: 'refetchEvaluation' }
  expect([a.refetches(), b.refetches(), elsewhere.refetches()]).toEqual([[refetch], [refetch], []])
  h.endpointSwitched('nope') // an endpoint without streams: nothing
  const single = createStreamHub({ routes: ROUTES, controlPollMs: 0, now: () => t })
  const c = open(single, 'sample1', '7').res
  single.endpointSwitched('sample1') // no other host to wait for
  expect(c.refetches()).toEqual([{ type: 'refetchEvaluation' }, { type: 'refetchEvaluation' }]) // one for its start margin
})

test('Last-Event-ID: a reconnect is told at once of a change it may have missed, and only then', () => {
  const h = settled(hub())
  const stamp = String(t)
  t += 1000
  h.configChanged('7', t - 50)
  t += 10_000
  const lastModified = Math.floor((t - 10_050) / 1000)
  expect(open(h, 'sample5', '7', stamp).res.refetches()).toEqual([{ type: 'refetchEvaluation', lastModified }])
  expect(open(h, 'sample5', '8', stamp).res.refetches()).toEqual([])
  expect(open(h, 'sample5', '7', String(t)).res.refetches()).toEqual([])
  expect(open(h, 'sample5', '7', 'evt-1').res.refetches()).toEqual([{ type: 'refetchEvaluation' }]) // not ours: cannot vouch
  expect(open(h, 'sample5', '7', String(t - 3_600_000)).res.refetches()).toEqual([{ type: 'refetchEvaluation' }]) // before this worker
})

test('heartbeats: every stream gets a comment each heartbeatMs, a slot at a time', () => {
  jest.useFakeTimers()
  const h = settled(hub())
  const streams = Array.from({ length: 32 }, (_, i) => open(h, 'sample5', String(i)).res)
  const beats = () => streams.map((res) => res.blocks().filter((b) => b.comment !== undefined).length)
  jest.advanceTimersByTime(100) // one tick: one slot of 16
  expect(beats().filter((n) => n === 1)).toHaveLength(2)
  jest.advanceTimersByTime(1500)
  expect(beats()).toEqual(streams.map(() => 1))
  jest.advanceTimersByTime(1600)
  expect(beats()).toEqual(streams.map(() => 2))
})

test('a stream past its maximum age ends at a heartbeat with a reconnect hint; each age is spread, younger ones stay', () => {
  jest.useFakeTimers()
  const routes = [route('sample5', { maxStreamAgeSec: 100 })]
  // Draws in order: the first stream's age (the whole 100 s), its retry, the second's (about
  // 80 s), its retry; then each reconnect hint's retry.
  const draws = [0, 0.5, 0.99, 0.5]
  t = 1_764_150_000_000
  const h = createStreamHub({ routes, controlPollMs: 1000, now: () => t, random: () => draws.shift() ?? 0.99 })
  const req = { socket: { destroyed: false }, headers: {} }
  const [long, short] = [new FakeResponse(), new FakeResponse()]
  expect([h.open(routes[0], '7', req, long, HEADERS), h.open(routes[0], '8', req, short, HEADERS)]).toEqual(['opened', 'opened'])
  const tick = (ms) => { t += ms; jest.advanceTimersByTime(ms) }
  tick(79_000)
  expect([long.writableEnded, short.writableEnded]).toEqual([false, false])
  tick(3_200) // two heartbeat rounds past 80.2 s
  expect([long.writableEnded, short.writableEnded]).toEqual([false, true])
  expect(short.text.endsWith(': reconnect\nretry: 4960\n\n')).toBe(true)
  tick(17_000)
  expect(long.writableEnded).toBe(false)
  tick(3_200)
  expect(long.writableEnded).toBe(true)
  expect(h.stats().counts.sample5).toMatchObject({ opened: 2, aged: 2 })
  expect(h.stats().open).toEqual({ sample5: 0 })
})

test('maxStreamAgeSec 0: a stream is never ended for its age', () => {
  jest.useFakeTimers()
  const h = settled(hub())
  const { res } = open(h, 'sample5', '7')
  t += 30 * 86_400_000
  jest.advanceTimersByTime(16_000)
  expect(res.writableEnded).toBe(false)
})

test('the cap: past maxStreams, "full" and nothing written; a closed stream frees its place', () => {
  const routes = [route('sample5', { maxStreams: 2 })]
  const h = createStreamHub({ routes, controlPollMs: 1000, now: () => t })
  const req = { socket: { destroyed: false }, headers: {} }
  const first = new FakeResponse()
  expect(h.open(routes[0], '7', req, first, HEADERS)).toBe('opened')
  expect(h.open(routes[0], '7', req, new FakeResponse(), HEADERS)).toBe('opened')
  const refused = new FakeResponse()
  expect(h.open(routes[0], '8', req, refused, HEADERS)).toBe('full')
  expect([refused.status, refused.text]).toEqual([null, ''])
  first.emit('close')
  expect(h.open(routes[0], '8', req, new FakeResponse(), HEADERS)).toBe('opened')
  expect(h.stats().open).toEqual({ sample5: 2 })
})

test('a client that stops reading is cut once too much waits for it', () => {
  const h = settled(hub())
  const { res } = open(h, 'sample5', '7')
  res.stalled = true
  for (let n = 0; !res.destroyed && n < 100000; n++) h.configChanged('7', t)
  expect(res.destroyed).toBe(true)
  expect(res.writableLength).toBeGreaterThan(MAX_BUFFERED_BYTES)
  expect(res.writableLength).toBeLessThan(MAX_BUFFERED_BYTES + 200)
  expect(h.stats()).toMatchObject({ open: { sample5: 0 }, counts: { sample5: { cut: 1 } } })
})

test('close ends every stream; one asked for afterwards, or by a client already gone, is ended at once', () => {
  const h = settled(hub())
  const streams = [open(h, 'sample5', '7').res, open(h, 'sample3', '8').res, open(h, 'sample1', '9').res]
  h.close()
  h.close()
  expect(streams.map((res) => res.writableEnded)).toEqual([true, true, true])
  expect(h.stats().open).toEqual({ sample5: 0, sample3: 0, sample1: 0 })
  const late = open(h, 'sample5', '7')
  expect(late.outcome).toBe('ended')
  expect([late.res.status, late.res.writableEnded, late.res.blocks()]).toEqual([200, true, [{ retry: '3000', id: String(t) }]])
  h.configChanged('7', t) // nothing to write to, nothing thrown

  const live = settled(hub())
  const gone = new FakeResponse()
  expect(live.open(ROUTES[0], '7', { socket: { destroyed: true }, headers: {} }, gone, HEADERS)).toBe('ended')
  expect(live.stats().open.sample5).toBe(0)
})

test('reconnection delays are spread over 1-5 s', () => {
  const delays = [0, 0.25, 0.999].map((r) => {
    const h = createStreamHub({ routes: ROUTES, controlPollMs: 1000, now: () => t, random: () => r })
    return Number(open(h, 'sample5', '7').res.blocks()[0].retry)
  })
  expect(delays).toEqual([1000, 2000, 4996])
})
