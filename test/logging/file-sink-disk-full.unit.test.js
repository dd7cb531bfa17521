'use strict'

// The file sink's books when its disk refuses writes, with its destination stood in for (the
// real pino-roll destination on a real full tmpfs is in test/faults/host-disk.test.js): lines
// wait in memory within maxPendingLines, past that they are shed and counted by reason, the
// destination is retried every retryMs (never in a busy loop), and accepted == written +
// pending + shed at every step.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createFileSink } = require('../../logging/file-sink')
const { accessEntry } = require('../../logging/access-entry')

const dirs = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function logPath () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-file-full-'))
  dirs.push(dir)
  return path.join(dir, 'access.log')
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))
// With fake timers: the sink's batching, its retry timer and the stand-in's writes run on them,
// so a loaded machine cannot stretch a wait past what the test reads after it.
const advance = (ms) => jest.advanceTimersByTimeAsync(ms)
afterEach(() => jest.useRealTimers())

function entry (i) {
  return accessEntry({
    ts: 1700000000000 + i,
    endpoint: 'sample4',
    id: String(i),
    status: 200,
    ms: 0.2,
    ip: '127.0.0.1',
    ua: 'ua',
    ref: null
  })
}

/**
 * A destination with the file writer's interface whose disk can fail (`fault` = an errno code)
 * or stall (`stalled`: writes never finish). Lines it took are in `lines`.
 */
function fakeDestination () {
  const d = { fault: null, stalled: false, lines: 0, handed: 0, attempts: 0, retries: 0, waiting: [] }
  const on = { error: [], written: [] }
  function attempt () {
    if (d.waiting.length === 0 || d.stalled) return null
    d.attempts++
    if (d.fault) {
      const err = Object.assign(new Error(`${d.fault}: injected`), { code: d.fault })
      for (const fn of on.error) fn(err)
      return err
    }
    for (const [chunk, n] of d.waiting.splice(0)) {
      d.lines += n
      for (const fn of on.written) fn(Buffer.byteLength(chunk))
    }
    return null
  }
  d.writer = {
    settled: async () => {},
    ready: () => true,
    onError: (fn) => on.error.push(fn),
    onWritten: (fn) => on.written.push(fn),
    write (chunk, n) {
      d.handed += n
      d.waiting.push([chunk, n])
      setImmediate(attempt)
    },
    retry () {
      d.retries++
      attempt()
    },
    confirmed: () => d.lines,
    unconfirmed: () => d.handed - d.lines,
    writeSync: () => false,
    async flush () {
      const err = attempt()
      if (err) throw err
    },
    async end () {}
  }
  return d
}

function sinkOn (dest, options = {}) {
  const logged = []
  const logger = { warn: (o, m) => logged.push(m), error: (o, m) => logged.push(m), info: (o, m) => logged.push(m) }
  const sink = createFileSink({ path: logPath(), workerTag: 'w1', createWriter: () => dest.writer, retryMs: 20, logger, ...options })
  return { sink, logged }
}

const balanced = (s) => s.accepted === s.written + s.pending + s.shed

test('a full disk: lines wait within maxPendingLines, then are shed as disk_full; retried every retryMs; all written once the disk takes ' +
  'them', async () => {
  jest.useFakeTimers()
  const dest = fakeDestination()
  const { sink, logged } = sinkOn(dest, { maxPendingLines: 500 })
  for (let i = 0; i < 100; i++) sink.write(entry(i))
  await sink.flush()
  expect(sink.stats()).toMatchObject({ accepted: 100, written: 100, pending: 0, shed: 0, writeFailing: null })

  dest.fault = 'ENOSPC'
  let n = 100
  const unbalanced = []
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 50; i++) sink.write(entry(n++))
    if (!balanced(sink.stats())) unbalanced.push(sink.stats())
    await advance(5)
  }
  let s = sink.stats()
  expect(unbalanced).toEqual([])
  expect(s).toMatchObject({ accepted: 1100, written: 100, pending: 500, shed: 500, writeFailing: 'ENOSPC' })
  expect(s.shedBy).toEqual({ disk_full: 500, write_error: 0, write_backlog: 0 })
  await expect(sink.flush()).rejects.toMatchObject({ code: 'ENOSPC' })
  expect(logged.filter((m) => /cannot be written/.test(m))).toHaveLength(1) // once, not per write

  const before = dest.attempts
  await advance(300)
  expect(dest.attempts - before).toBeGreaterThan(3) // retried...
  expect(dest.attempts - before).toBeLessThan(40) // ...every retryMs (20 ms), not in a loop

  dest.fault = null // space returns
  const started = Date.now()
  while (sink.stats().pending > 0 && Date.now() - started < 5000) await advance(10) // fake time
  s = sink.stats()
  expect(s).toMatchObject({ accepted: 1100, written: 600, pending: 0, shed: 500, writeFailing: null })
  expect(dest.lines).toBe(600)
  expect(logged).toContain('file access log writable again')
  await sink.close()
})

test('another I/O error is write_error; a disk merely slower than the lines is write_backlog', async () => {
  jest.useFakeTimers()
  const failing = fakeDestination()
  failing.fault = 'EIO'
  const a = sinkOn(failing, { maxPendingLines: 10 }).sink
  for (let i = 0; i < 10; i++) a.write(entry(i))
  await advance(30)
  for (let i = 10; i < 15; i++) a.write(entry(i))
  expect(a.stats()).toMatchObject({ pending: 10, shed: 5, shedBy: { write_error: 5, disk_full: 0, write_backlog: 0 }, writeFailing: 'EIO' })

  const slow = fakeDestination()
  slow.stalled = true
  const b = sinkOn(slow, { maxPendingLines: 10 }).sink
  for (let i = 0; i < 15; i++) b.write(entry(i))
  await advance(30)
  expect(b.stats()).toMatchObject({ pending: 10, shed: 5, shedBy: { write_backlog: 5, disk_full: 0, write_error: 0 }, writeFailing: null })
  await Promise.all([a.close({ timeoutMs: 100 }), b.close({ timeoutMs: 100 })])
})

test('close with the disk still refusing keeps to its budget, and says what it could not write', async () => {
  const dest = fakeDestination()
  dest.fault = 'ENOSPC'
  const { sink, logged } = sinkOn(dest)
  for (let i = 0; i < 300; i++) sink.write(entry(i))
  await tick(30)
  const started = Date.now()
  await sink.close({ timeoutMs: 200 })
  expect(Date.now() - started).toBeLessThan(600)
  expect(sink.stats()).toMatchObject({ accepted: 300, written: 0, pending: 300, shed: 0 })
  expect(logged).toContain('file access log closed with lines it could not write')
})
