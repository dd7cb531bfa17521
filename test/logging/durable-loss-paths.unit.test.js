'use strict'

// Issue 37's loss paths of durable mode, each reproduced deterministically: a full journal disk
// (test/support/faulty-fs.js) under the spill journal, the write-ahead log on the real disk, and
// an HBase that does not answer. "What a crash keeps" is read
// from the files themselves: every record of every journal and WAL file in the directory, plus
// what HBase took. After each step it must hold every entry accepted so far.
//
// Each failed on the code before issue 37's fix (they were committed as `test.failing`, 715949a).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createJournal, formatRecord, journalFiles, parseRecord } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { accessEntry } = require('../../logging/access-entry')
const { createFaultyFs } = require('../support/faulty-fs')
// Real time, for waiting on real file I/O while the sink's own timers are fake.
const { setTimeout: realDelay } = require('node:timers/promises')

/** @type {string[]} */
const dirs = []
/** @type {Array<() => Promise<unknown>>} */
const cleanups = []

afterEach(async () => {
  jest.useRealTimers()
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {})
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-loss-paths-'))
  dirs.push(dir)
  return dir
}

/** An HBase whose every put fails as an unreachable one does (retryable). */
function unreachableHBase () {
  return {
    /** @param {string} table @param {Array<{ row: string }>} puts */
    async multiPut (table, puts) {
      const err = Object.assign(new Error('connection refused'), { code: 'HBASE_CONNECTION', retryable: true, unsent: true })
      return puts.map(() => err)
    }
  }
}

/** The row keys a crash now would keep: every record in every journal and WAL file of `dir`. */
function keptOnDisk (dir) {
  const keys = new Set()
  for (const file of journalFiles(dir)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const record = line ? parseRecord(line) : null
      if (record) keys.add(record.key)
    }
  }
  return keys
}

/**
 * Waits (real time, bounded) until the WAL files on disk are the ones the WAL still holds: a
 * released segment is unlinked asynchronously, and a crash after the unlink is what counts.
 * @param {string} dir
 * @param {ReturnType<typeof createHBaseSink>} sink
 */
async function walUnlinksDone (dir, sink) {
  const walFilesOnDisk = () => fs.readdirSync(dir).filter((name) => name.includes('-loss-wal-')).length
  for (let i = 0; walFilesOnDisk() !== sink.stats().walFiles; i++) {
    if (i > 200) throw new Error(`WAL files on disk: ${walFilesOnDisk()}, held: ${sink.stats().walFiles}`)
    await realDelay(10)
  }
}

/** Fake time forward in steps, letting real file I/O (libuv) complete between them. */
async function advance (ms, step = 50) {
  for (let t = 0; t < ms; t += step) {
    await jest.advanceTimersByTimeAsync(step)
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  }
}

/** Steps fake time until `predicate` holds, at most `maxMs` of it. */
async function until (what, predicate, maxMs = 10000) {
  for (let t = 0; !predicate(); t += 50) {
    if (t > maxMs) throw new Error(`${what}: not within ${maxMs} ms of fake time`)
    await advance(50)
  }
}

/** @param {number} i */
const entry = (i) => accessEntry({ ts: Date.now(), endpoint: 'sample5', id: String(i), status: 200, ms: 1, ip: '127.0.0.2' })

/**
 * A durable sink over a journal disk that is full, HBase refusing.
 * @param {object} [extra] sink options
 */
function durableSinkOnFullDisk (extra = {}) {
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'performance'] })
  const dir = tempDir()
  const disk = createFaultyFs({ freeBytes: 0 })
  const sink = createHBaseSink({
    client: unreachableHBase(),
    table: 'beacon_access_log',
    journalDir: dir,
    writerId: 'loss',
    durable: true,
    journalFs: disk.io,
    retryMaxMs: 0,
    flushIntervalMs: 10,
    ...extra
  })
  cleanups.push(async () => {
    jest.useRealTimers()
    await sink.close({ timeoutMs: 200 })
  })
  return { dir, sink }
}

test('journal.flush() does not resolve while lines lent to a replay are in no file', async () => {
  // The root of the first loss path: the WAL guard releases a spilled entry's record once
  // journal.flush() resolves, and a line lent to a replay's put is in no file until that put
  // is confirmed (giveBack() returns it to memory when the put fails).
  const dir = tempDir()
  const disk = createFaultyFs({ freeBytes: 0 })
  const journal = createJournal({ dir, writerId: 'lend', fs: disk.io, retryMs: 1000 })
  cleanups.push(() => journal.close())
  journal.append(formatRecord('k1', '{"i":1}'))
  journal.append(formatRecord('k2', '{"i":2}'))
  await expect(journal.flush()).rejects.toMatchObject({ code: 'ENOSPC' })
  const lent = journal.lend(2)
  expect(lent).toHaveLength(2)
  const settled = await Promise.race([
    journal.flush().then(() => 'resolved', () => 'rejected'),
    realDelay(200).then(() => 'pending')
  ])
  expect(settled).not.toBe('resolved')
  journal.giveBack(lent)
})

test('a line the journal refuses keeps its WAL record: the journal of last resort', async () => {
  const { dir, sink } = durableSinkOnFullDisk({ journalMaxBuffered: 1 })
  sink.write(entry(1))
  await until('the first waits in memory for the full disk', () => sink.stats().journalBuffered === 1)
  await advance(1100) // a segment age: the next entry starts a WAL segment of its own
  sink.write(entry(2))
  const accepted = keptOnDisk(dir)
  expect(accepted.size).toBe(2)
  await until('the second is refused by the journal', () => sink.stats().shed === 1)
  await advance(1100)
  sink.write(entry(3)) // seals the second entry's WAL segment
  await advance(100)
  await walUnlinksDone(dir, sink)
  const kept = keptOnDisk(dir)
  for (const key of accepted) expect(kept.has(key)).toBe(true)
  // The third is refused too (the disk is still full): shed, its record kept in a file of its own.
  await until('the third is refused too', () => sink.stats().shed === 2)
  expect(sink.stats()).toMatchObject({ shed: 2, shedKeptInWal: 2, walKeptFiles: 2 })
  const all = keptOnDisk(dir)
  expect(all.size).toBe(3)
  // A close keeps those files, whatever becomes of the rest: the next start replays them.
  jest.useRealTimers()
  const { leftOnDisk } = await sink.close({ timeoutMs: 200 })
  const afterClose = keptOnDisk(dir)
  for (const key of all) expect(afterClose.has(key)).toBe(true)
  expect(leftOnDisk.entries).toBeGreaterThanOrEqual(3)
})

test('a stop that can write entries nowhere says how many it lost; with the write-ahead log, none', async () => {
  const balanced = (s) => s.accepted + s.claimed ===
    s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt + s.lostInMemory
  for (const durability of ['memory', 'process']) {
    const { sink } = durableSinkOnFullDisk({ durability })
    for (let i = 0; i < 5; i++) sink.write(entry(i))
    await until('the entries wait in memory for the full disk', () => sink.stats().journalBuffered === 5)
    jest.useRealTimers()
    const closed = await sink.close({ timeoutMs: 200 })
    const s = sink.stats()
    expect(balanced(s)).toBe(true)
    if (durability === 'memory') {
      expect(closed.lostInMemory).toBe(5)
      expect(s).toMatchObject({ lostInMemory: 5, journalBuffered: 0 })
    } else {
      expect(closed.lostInMemory).toBe(0) // every one is a record of a write-ahead-log file kept on disk
      expect(closed.leftOnDisk.entries).toBe(5)
    }
  }
})
