'use strict'

// The HBase sink in durability 'process' with the process's group commit: the entries of one
// turn reach the write-ahead log in one write, before any of their answers go out; a WAL that
// refuses writes is counted per entry and named in stats() and /readyz until a write works.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { GroupCommit } = require('../../logging/group-commit')
const { journalFiles, readRecords } = require('../../logging/hbase-sink/journal')
const { accessEntry } = require('../../logging/access-entry')
const { createReadiness } = require('../../api/admin/readiness')

/** @type {string[]} */
const dirs = []
/** @type {Array<() => Promise<unknown>>} */
const cleanups = []

afterEach(async () => {
  jest.useRealTimers()
  for (const cleanup of cleanups.splice(0)) await cleanup()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** An HBase that never answers: every entry stays in memory, its WAL record on disk. */
const silentHBase = { multiPut: () => new Promise(() => {}) }

/** @param {number} i */
const entry = (i) => accessEntry({ ts: 1700000000000 + i, endpoint: 'sample5', id: String(i), status: 200, ms: 1, ip: null })

/**
 * @param {object} [extra] sink options
 * @returns {{ sink: ReturnType<typeof createHBaseSink>, dir: string, groups: GroupCommit, turnEnd: () => unknown }}
 */
function durableSink (extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-group-'))
  dirs.push(dir)
  /** @type {Array<() => void>} */
  const due = []
  // The end of the turn, stepped by the test: what setImmediate would run.
  const groups = new GroupCommit({ schedule: (run) => { due.push(run) } })
  const sink = createHBaseSink({
    client: silentHBase,
    table: 't',
    journalDir: dir,
    writerId: 'group',
    flushIntervalMs: 600000,
    batchSize: 100000,
    groupCommit: groups,
    ...extra
  })
  cleanups.push(() => sink.close({ timeoutMs: 100 }))
  return { sink, dir, groups, turnEnd: () => due.splice(0).forEach((run) => run()) }
}

/** @param {string} dir @returns {Promise<number>} WAL records on disk */
async function walRecords (dir) {
  let n = 0
  for (const file of journalFiles(dir)) n += (await readRecords(file)).records.length
  return n
}

test('durability defaults to process; one turn\'s entries are one write, made before the turn\'s answers go out', async () => {
  const { sink, dir, groups, turnEnd } = durableSink()
  expect(sink.durable).toBe(true)
  expect(sink.stats().durability).toBe('process')
  /** @type {number[]} */
  const recordsSeenByAnswers = []
  for (let i = 0; i < 50; i++) {
    sink.write(entry(i))
    groups.hold(() => { recordsSeenByAnswers.push(sink.stats().walAppended) })
  }
  expect(groups.open).toBe(true)
  expect(await walRecords(dir)).toBe(0) // staged: nothing written before the end of the turn
  expect(recordsSeenByAnswers).toEqual([])
  turnEnd()
  expect(recordsSeenByAnswers).toEqual(new Array(50).fill(50)) // every answer after all 50 records
  expect(await walRecords(dir)).toBe(50)
  expect(sink.stats()).toMatchObject({ walAppended: 50, walWrites: 1, walPending: 50, walFailures: 0 })
  expect(groups.stats()).toEqual({ groups: 1, answersHeld: 50 })

  sink.write(entry(50))
  sink.write(entry(51))
  turnEnd()
  expect(sink.stats()).toMatchObject({ walAppended: 52, walWrites: 2 })
})

test('durability memory: no write-ahead log, nothing to hold an answer for', () => {
  const { sink, dir, groups } = durableSink({ durability: 'memory' })
  sink.write(entry(1))
  expect(groups.open).toBe(false)
  expect(sink.durable).toBe(false)
  expect(journalFiles(dir)).toEqual([])
})

test('a write-ahead log that refuses writes: counted per entry, named in stats() and /readyz until a write works', async () => {
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'performance'] })
  const disk = { full: true }
  const walFs = {
    ...fs,
    /** @type {typeof fs.writeSync} */
    writeSync: (...args) => {
      if (disk.full) throw Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })
      return /** @type {Function} */ (fs.writeSync)(...args)
    }
  }
  const { sink, turnEnd } = durableSink({ walFs })
  const ready = createReadiness({
    client: { ping: async () => {} },
    pingTimeoutMs: 100,
    endpoints: new Map(),
    sinks: new Map([['hbase', sink]]),
    closing: () => false
  })
  for (let i = 0; i < 3; i++) sink.write(entry(i))
  turnEnd()
  expect(sink.stats()).toMatchObject({ walFailing: 'ENOSPC', walFailures: 3, walAppended: 0, accepted: 3 })
  sink.write(entry(3)) // within the pause after a failure: not even tried, counted the same
  turnEnd()
  expect(sink.stats()).toMatchObject({ walFailing: 'ENOSPC', walFailures: 4 })
  let r = await ready()
  expect(r.ready).toBe(false)
  expect(r.checks['accessLog.hbase']).toBe('write-ahead log cannot be written: ENOSPC ' +
    '(4 entries answered without it; a crash would lose those in memory)')

  disk.full = false
  jest.advanceTimersByTime(1000) // the pause is over
  sink.write(entry(4))
  turnEnd()
  expect(sink.stats()).toMatchObject({ walFailing: null, walFailures: 4, walAppended: 1 })
  r = await ready()
  expect(r.checks['accessLog.hbase']).toBe('ok')
  expect(r.ready).toBe(true)
})
