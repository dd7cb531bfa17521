'use strict'

// The spill journal's byte budget (logging/hbase-sink/journal/index.js maxBytes, the sink's journalMaxSize), on
// real files: past it the journal refuses lines as journal_full, holds no more than the budget
// and what one write adds, takes lines again once a replay frees room, and the HBase sink counts
// the refused entries as shed for that reason with its books balanced. (HBase is the fake of
// test/support/fake-hbase.js, down; the spill and replay it stands in for meet the real HBase in
// test/faults/hbase-outage.test.js.)

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createJournal, formatRecord } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { accessEntry } = require('../../logging/access-entry')
const { createFakeHBase } = require('../support/fake-hbase')
const { sizeBytes } = require('../../config/size')
const { until } = require('../support/until')

const dirs = []
const closers = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-journal-budget-'))
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const close of closers) await close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

const bytesOnDisk = (dir) => fs.readdirSync(dir).reduce((n, name) => n + fs.statSync(path.join(dir, name)).size, 0)

test('sizes: bytes, k, m, g; 0; anything else refused', () => {
  expect(['0', '512', '4k', '100m', '2g'].map(sizeBytes)).toEqual([0, 512, 4096, 100 * 1024 ** 2, 2 * 1024 ** 3])
  for (const bad of ['', '1.5g', '-1', '2t', '01k', 2]) expect(() => sizeBytes(bad)).toThrow(RangeError)
})

test('past its budget the journal refuses as journal_full, holds about the budget, and takes lines again once room is freed', async () => {
  const dir = tempDir()
  const journal = createJournal({ dir, writerId: 'budget', maxBytes: 8192, maxFileBytes: 2048, maxBufferedLines: 100000 })
  closers.push(() => journal.close())
  const line = (i) => formatRecord(`k${String(i).padStart(6, '0')}`, JSON.stringify({ i, pad: 'x'.repeat(60) }))
  let taken = 0
  let i = 0
  // Appends a line a tick, so the writer keeps up: the budget, not memory, is what refuses.
  while (i < 1000) {
    if (!journal.append(line(i++))) break
    taken++
    if (i % 10 === 0) await journal.flush()
  }
  await journal.flush()
  expect(journal.refusalReason()).toBe('journal_full')
  expect(taken).toBeGreaterThan(50)
  expect(journal.stats().diskBytes).toBe(bytesOnDisk(dir))
  expect(bytesOnDisk(dir)).toBeGreaterThanOrEqual(8192)
  expect(bytesOnDisk(dir)).toBeLessThan(8192 + 10 * (line(0).length + 1)) // at most the last flush's lines past it
  expect(journal.append(line(i))).toBe(false)
  // A replay removes the oldest file: there is room again.
  await journal.remove(journal.nextSealed())
  expect(journal.append(line(i))).toBe(true)
  await journal.flush()
  expect(journal.stats().diskBytes).toBe(bytesOnDisk(dir))
})

test('the HBase sink, HBase down: entries past the budget are shed as journal_full, every one accounted for; HBase back ' +
  'drains it', async () => {
  const hbase = createFakeHBase()
  hbase.up = false
  const dir = tempDir()
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: dir,
    writerId: 'budget',
    durability: 'memory', // the journal's own bounds: no write-ahead log files beside it
    journalMaxSize: '16k',
    journalFileBytes: 4096,
    maxQueue: 50,
    flushIntervalMs: 10,
    replayBaseMs: 20,
    replayMaxBackoffMs: 40
  })
  closers.push(() => sink.close({ timeoutMs: 500 }))
  const entry = (i) => accessEntry({
    ts: 1700000000000 + i, endpoint: 'sample5', id: String(i), status: 200, ms: 1, ip: null, ua: null, ref: null
  })
  const balanced = (s) => s.accepted + s.claimed === s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt
  for (let i = 0; i < 2000; i++) {
    sink.write(entry(i))
    if (i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 2))
  }
  await until('the journal full', () => sink.stats().shedBy.journal_full > 0, 10000)
  const s = sink.stats()
  expect(balanced(s)).toBe(true)
  expect(s.shed).toBe(s.shedBy.journal_full)
  expect(bytesOnDisk(dir)).toBeLessThan(16 * 1024 + 64 * 1024) // the budget, and at most what one write adds past it
  hbase.up = true
  await until('the journal replayed', () => sink.stats().journalPending === 0 && sink.stats().pending === 0, 10000)
  const after = sink.stats()
  expect(balanced(after)).toBe(true)
  expect(hbase.rows.size).toBe(after.written)
  expect(after.written + after.shed).toBe(2000)
})

/**
 * The real file system, with every datasync held until the test lets them go: a disk slow to
 * sync, as a loaded CI machine's is.
 */
function slowSyncFs () {
  const fsp = require('node:fs/promises')
  /** @type {Array<() => void>} */
  const held = []
  let holding = true
  const io = {
    ...fsp,
    /** @param {string} file @param {string} flags */
    async open (file, flags) {
      const fh = await fsp.open(file, flags)
      return {
        fd: fh.fd,
        write: (/** @type {any[]} */ ...args) => fh.write(...args),
        truncate: (/** @type {number} */ len) => fh.truncate(len),
        read: (/** @type {any[]} */ ...args) => fh.read(...args),
        stat: () => fh.stat(),
        datasync: () => holding ? new Promise((resolve) => held.push(() => resolve(fh.datasync()))) : fh.datasync(),
        close: () => fh.close()
      }
    }
  }
  return {
    io: /** @type {typeof fsp} */ (/** @type {unknown} */ (io)),
    /** Syncs go through again, the held ones first. */
    release: () => {
      holding = false
      for (const go of held.splice(0)) go()
    }
  }
}

test('a disk slow to sync or to write: files being sealed and lines waiting count against the budget', async () => {
  const dir = tempDir()
  const disk = slowSyncFs()
  const budget = 8192
  const journal = createJournal({ dir, writerId: 'slow', fs: disk.io, maxBytes: budget, maxFileBytes: 1024, maxBufferedLines: 100000 })
  closers.push(async () => { disk.release(); await journal.close() })
  const line = (i) => formatRecord(`k${String(i).padStart(6, '0')}`, JSON.stringify({ i, pad: 'x'.repeat(60) }))
  let refused = false
  for (let i = 0; i < 2000 && !refused; i++) {
    refused = !journal.append(line(i))
    // Writes go through a tick at a time; every sealed file's sync waits.
    if (i % 5 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  expect(refused).toBe(true)
  expect(journal.refusalReason()).toBe('journal_full')
  disk.release()
  await journal.flush()
  expect(bytesOnDisk(dir)).toBeLessThanOrEqual(budget + line(0).length + 1) // the budget, and the line that reached it
})
