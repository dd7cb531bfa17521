'use strict'

// A disk that fills up under the spill journal, on real files through an injected file system
// (test/support/faulty-fs.js) whose byte budget runs out: the journal keeps whole records only,
// holds the rest in memory within its bound, refuses past it with the reason, and catches up by
// itself once there is room. The HBase sink on top: every entry is written, on disk, in memory
// or counted as shed, at every moment, and the backlog drains when HBase (or the disk) returns.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createJournal, formatRecord, parseRecord, journalFiles } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { accessEntry } = require('../../logging/access-entry')
const { createFaultyFs } = require('../support/faulty-fs')
const { createFakeHBase } = require('../support/fake-hbase')

const dirs = []
const closers = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-disk-full-'))
  dirs.push(dir)
  return dir
}

afterAll(async () => {
  for (const close of closers) await close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

const RETRY_MS = 20
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

async function until (what, predicate, timeoutMs = 10000) {
  const started = Date.now()
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await tick(10)
  }
}

/** The keys of every journal file's records in `dir`; throws on a line that is not a whole record. */
function wholeRecordsOnDisk (dir) {
  const keys = []
  for (const file of journalFiles(dir)) {
    const text = fs.readFileSync(file, 'utf8')
    if (text.length && !text.endsWith('\n')) throw new Error(`${file}: last line cut`)
    for (const line of text.split('\n').filter(Boolean)) {
      const record = parseRecord(line, true)
      if (!record) throw new Error(`${file}: not a whole record`)
      keys.push(record.key)
    }
  }
  return keys
}

/** Every line of every journal file in `dir`, each checked to be a whole record. */
function recordsOnDisk (dir) {
  const keys = []
  for (const file of journalFiles(dir)) {
    const text = fs.readFileSync(file, 'utf8')
    if (text.length) expect(text.endsWith('\n')).toBe(true)
    for (const line of text.split('\n').filter(Boolean)) {
      const record = parseRecord(line, true)
      expect(record).not.toBeNull()
      keys.push(record.key)
    }
  }
  return keys
}

test('a full disk: whole records only on disk, the rest waits in memory within its bound, refused past it as disk_full, written once ' +
  'there is room', async () => {
  const dir = tempDir()
  const disk = createFaultyFs({ freeBytes: 1500 })
  const journal = createJournal({ dir, writerId: 'full', fs: disk.io, retryMs: RETRY_MS, maxBufferedLines: 100, maxWriteBytes: 400 })
  closers.push(() => journal.close().catch(() => {}))
  const line = (i) => formatRecord(`k${String(i).padStart(4, '0')}`, `{"i":${i},"pad":"${'x'.repeat(20)}"}`)
  let appended = 0
  for (; appended < 80; appended++) expect(journal.append(line(appended))).toBe(true)
  await until('the disk refuses', () => journal.stats().failing === 'ENOSPC')
  expect(disk.state.freeBytes).toBeLessThan(60) // filled up to less than a line
  await until('the journal at rest (a refused write cut back)', () => {
    try {
      wholeRecordsOnDisk(dir)
      return true
    } catch {
      return false
    }
  })
  const onDisk = recordsOnDisk(dir)
  expect(onDisk.length).toBeGreaterThan(0)
  expect(onDisk.length + journal.bufferedLines()).toBe(80)
  await expect(journal.flush()).rejects.toMatchObject({ code: 'ENOSPC' })

  // The bound: 100 lines may wait; after that append refuses, and says why.
  while (journal.append(line(appended))) appended++
  expect(journal.bufferedLines()).toBe(100)
  expect(journal.refusalReason()).toBe('disk_full')
  // Retried every retryMs, not in a busy loop: three more refused writes take at least two
  // intervals. (Not a count in a fixed wait: a loaded machine runs timers late, not more often.)
  const retriesBefore = disk.state.refused
  const waitStarted = Date.now()
  await until('three more retries', () => disk.state.refused - retriesBefore >= 3)
  expect(Date.now() - waitStarted).toBeGreaterThanOrEqual(2 * RETRY_MS - 2) // timers round to the ms

  disk.state.freeBytes = Infinity // space returns
  await until('the backlog written', () => journal.bufferedLines() === 0)
  expect(journal.stats().failing).toBeNull()
  await journal.seal()
  const keys = recordsOnDisk(dir)
  expect(keys).toHaveLength(appended)
  expect(new Set(keys).size).toBe(appended)
  expect(journal.stats()).toMatchObject({ sealedLines: appended, bufferedLines: 0 })
  await journal.close()
})

test('a slow disk past the bound refuses as write_backlog, not as a full disk', async () => {
  const journal = createJournal({ dir: tempDir(), writerId: 'slow', maxBufferedLines: 10 })
  for (let i = 0; i < 10; i++) expect(journal.append(formatRecord(`k${i}`, '{}'))).toBe(true)
  expect(journal.append(formatRecord('k10', '{}'))).toBe(false) // nothing written yet this tick
  expect(journal.refusalReason()).toBe('write_backlog')
  await journal.close()
})

function entry (i) {
  return accessEntry({
    ts: 1700000000000 + i,
    endpoint: 'sample5',
    id: String(i),
    status: 200,
    ms: 0.5,
    ip: '127.0.0.1',
    ua: `ua-${i}`,
    ref: null
  })
}

function balanced (s) {
  return s.accepted + s.claimed === s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt + s.lostInMemory
}

test('HBase down and the journal\'s disk full: every entry accounted for at every step; HBase back drains memory and disk; then the disk ' +
  'back too', async () => {
  const dir = tempDir()
  const disk = createFaultyFs({ freeBytes: 30000 })
  const hbase = createFakeHBase()
  hbase.up = false
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: dir,
    writerId: 'df',
    durability: 'memory', // the journal's own bounds: no write-ahead log files beside it
    journalFs: disk.io,
    maxQueue: 200,
    journalMaxBuffered: 300,
    journalRetryMs: 20,
    replayBaseMs: 20,
    replayMaxBackoffMs: 40,
    flushIntervalMs: 10,
    batchSize: 100
  })
  closers.push(() => sink.close({ timeoutMs: 500 }))
  const unbalanced = []
  const check = () => { const s = sink.stats(); if (!balanced(s)) unbalanced.push(s) }
  let n = 0
  const burst = async (count) => {
    for (let i = 0; i < count; i++) {
      sink.write(entry(n++))
      check()
    }
    await tick(5)
    check()
  }

  for (let b = 0; b < 20; b++) await burst(100)
  await until('the disk refuses the journal', () => sink.stats().writeFailing === 'ENOSPC')
  for (let b = 0; b < 10; b++) await burst(100)
  let s = sink.stats()
  expect(unbalanced).toEqual([])
  expect(s).toMatchObject({ state: 'down', accepted: n, written: 0, writeFailing: 'ENOSPC' })
  expect(s.journalPending).toBeGreaterThan(0) // what the disk took before it was full
  expect(s.journalBuffered).toBeGreaterThan(0)
  expect(s.journalBuffered).toBeLessThanOrEqual(300)
  expect(s.shedBy.disk_full).toBeGreaterThan(0)
  // Shed because the disk is full, or (when a loaded machine delays the journal's writes before
  // it fills) because entries came faster than the disk took them: never for another reason.
  expect(s.shed).toBe(s.shedBy.disk_full + s.shedBy.write_backlog)
  // The journal keeps retrying in the background, every journalRetryMs, for as long as the disk
  // is full: a read that lands between a partial write and its cut-back sees a torn last line for
  // a moment, and so may any second read after one that found the files whole. So the files are
  // judged by one read between two retries: whole records only, exactly the ones pending.
  let atRest = null
  await until('the journal between two retries', () => {
    try {
      const keys = wholeRecordsOnDisk(dir)
      if (keys.length === sink.stats().journalPending) atRest = keys
    } catch {}
    return atRest !== null
  })
  expect(atRest).toHaveLength(sink.stats().journalPending)

  // HBase answers again, the disk is still full: memory and files both go to HBase.
  hbase.up = true
  await until('drained into HBase', () => {
    check()
    const t = sink.stats()
    return t.journalBuffered === 0 && t.journalPending === 0 && t.pending === 0
  })
  s = sink.stats()
  expect(unbalanced).toEqual([])
  expect(s).toMatchObject({ state: 'up', writeFailing: null, written: n - s.shed })
  expect(hbase.rows.size).toBe(n - s.shed)
  const shedBefore = s.shed

  // HBase down again with the disk back: everything goes to the journal, nothing is shed. Each
  // burst waits for the journal to take the last one: 100 entries every 5 ms can outrun a loaded
  // machine's disk writes past journalMaxBuffered, and that is shed as write_backlog, by design.
  disk.state.freeBytes = Infinity
  hbase.up = false
  for (let b = 0; b < 10; b++) {
    await burst(100)
    await until('the journal took the burst', () => sink.stats().journalBuffered === 0)
  }
  await until('all on disk', () => sink.stats().state === 'down' && sink.stats().journalBuffered === 0 && sink.stats().pending === 0)
  s = sink.stats()
  expect(s.shed).toBe(shedBefore)
  hbase.up = true
  await until('drained again', () => sink.stats().journalPending === 0 && sink.stats().pending === 0)
  s = sink.stats()
  expect(unbalanced).toEqual([])
  expect(s).toMatchObject({ accepted: n, written: n - shedBefore, shed: shedBefore, corrupt: 0 })
  expect(hbase.rows.size).toBe(n - shedBefore)
})

test('the shed policy and a full journal disk count their drops under their own reasons; close never hangs on the disk', async () => {
  const hbase = createFakeHBase()
  hbase.up = false
  const policy = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: tempDir(),
    writerId: 'policy',
    maxQueue: 50,
    overload: 'shed',
    flushIntervalMs: 10,
    closeTimeoutMs: 300
  })
  closers.push(() => policy.close())
  for (let i = 0; i < 100; i++) policy.write(entry(i))
  expect(policy.stats()).toMatchObject({
    accepted: 100,
    pending: 50,
    shed: 50,
    shedBy: { overload: 50, disk_full: 0, write_error: 0, write_backlog: 0 }
  })

  const disk = createFaultyFs({ freeBytes: 0 })
  const full = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: tempDir(),
    writerId: 'nospace',
    durability: 'memory', // no write-ahead log to keep what the journal cannot
    journalFs: disk.io,
    journalMaxBuffered: 20,
    journalRetryMs: 20,
    flushIntervalMs: 10
  })
  for (let i = 0; i < 10; i++) full.write(entry(i))
  await until('the journal fails', () => full.stats().writeFailing === 'ENOSPC')
  for (let i = 10; i < 110; i++) full.write(entry(i))
  let s = full.stats()
  expect(s).toMatchObject({
    accepted: 110,
    journalBuffered: 20,
    journalPending: 0,
    shed: 90,
    shedBy: { overload: 0, disk_full: 90, write_error: 0, write_backlog: 0 }
  })
  expect(balanced(s)).toBe(true)
  const started = Date.now()
  await full.close({ timeoutMs: 500 })
  expect(Date.now() - started).toBeLessThan(1000)
  // HBase and the disk both refused to the end: the 20 in memory die with the process, and the
  // books say so (lostInMemory), nothing else.
  s = full.stats()
  expect(s).toMatchObject({ journalBuffered: 0, lostInMemory: 20, shed: 90 })
  expect(balanced(s)).toBe(true)
})

test('close with HBase up and the journal\'s disk full: what waits in memory for the disk goes to HBase', async () => {
  const disk = createFaultyFs({ freeBytes: 0 })
  const hbase = createFakeHBase()
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: tempDir(),
    writerId: 'closing',
    journalFs: disk.io,
    maxQueue: 10,
    batchSize: 1000,
    flushIntervalMs: 60000,
    journalRetryMs: 20,
    replayBaseMs: 60000
  })
  for (let i = 0; i < 60; i++) sink.write(entry(i)) // 10 queued, 50 over maxQueue: to the journal
  await until('the journal fails', () => sink.stats().writeFailing === 'ENOSPC')
  expect(sink.stats()).toMatchObject({ pending: 10, journalBuffered: 50, journalPending: 0, written: 0 })
  await sink.close({ timeoutMs: 2000 })
  const s = sink.stats()
  expect(s).toMatchObject({ accepted: 60, written: 60, journalBuffered: 0, shed: 0 })
  expect(balanced(s)).toBe(true)
  expect(hbase.rows.size).toBe(60)
})

test('shed after a write whose outcome is unknown: counted as unconfirmed, for HBase may hold it; shed after a refusal: not', async () => {
  const disk = createFaultyFs({ freeBytes: 0 })
  const hbase = createFakeHBase()
  const open = (writerId) => createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: tempDir(),
    writerId,
    journalFs: disk.io,
    journalMaxBuffered: 5,
    journalRetryMs: 20,
    flushIntervalMs: 10,
    closeTimeoutMs: 300
  })
  // HBase applies the batch, and the answer never comes: the batch spills, the journal takes 5.
  hbase.applyThenTimeout = true
  const timedOut = open('timeout')
  closers.push(() => timedOut.close())
  for (let i = 0; i < 40; i++) timedOut.write(entry(i))
  await until('the batch failed and spilled', () => timedOut.stats().shed > 0)
  const s = timedOut.stats()
  expect(s).toMatchObject({ accepted: 40, written: 0, shed: 35, shedUnconfirmed: 35 })
  expect(hbase.rows.size).toBe(40) // every shed entry is a row after all: hence "unconfirmed"

  // HBase refuses the connection: nothing was applied, so the shed are lost for sure.
  hbase.applyThenTimeout = false
  hbase.up = false
  hbase.rows.clear()
  const refused = open('refused')
  closers.push(() => refused.close())
  for (let i = 100; i < 140; i++) refused.write(entry(i))
  await until('the batch failed and spilled', () => refused.stats().shed > 0)
  expect(refused.stats()).toMatchObject({ accepted: 40, written: 0, shed: 35, shedUnconfirmed: 0 })
  expect(hbase.rows.size).toBe(0)
})
