'use strict'

// What a stop of the HBase sink leaves behind, with its HBase a stand-in
// (test/support/fake-hbase.js; the real one in test/faults/server-signals.test.js):
// - close() replays every journal file, claimed orphans included, and deletes them: nothing is
//   left on disk while HBase answers;
// - what HBase cannot take stays in files, counted exactly in close()'s answer;
// - a stop that comes while the replay is reading a file waits for that read: the healthy file
//   is never taken for damaged;
// - a replay waiting out a long backoff goes as soon as a live write shows HBase answers.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { journalFiles, quarantinedFiles } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { createFaultyFs } = require('../support/faulty-fs')
const { createFakeHBase } = require('../support/fake-hbase')
const { writeOrphan, records } = require('../support/crafted-files')
const { until } = require('../support/until')

const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-stop-'))
  dirs.push(dir)
  return dir
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

let writers = 0
function startSink (journalDir, hbase = createFakeHBase(), options = {}) {
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir,
    writerId: `stop${writers++}`,
    flushIntervalMs: 10,
    batchSize: 100,
    strictLedger: true,
    ...options
  })
  return { hbase, sink }
}

function entry (i) {
  return { ts: 1700000000000 + i, endpoint: 'sample5', id: String(i), status: 200 }
}

test('close replays the orphans it claimed and the entries it spilled: nothing left on disk, every entry a row', async () => {
  const dir = tempDir()
  writeOrphan(dir, records('dead', 3000), 'gone-wal')
  writeOrphan(dir, records('older', 1000))
  const hbase = createFakeHBase()
  hbase.up = false
  const { sink } = startSink(dir, hbase)
  await sink.ready
  for (let i = 0; i < 500; i++) sink.write(entry(i))
  await until('the sink finds HBase down', () => sink.stats().state === 'down', 5000)
  hbase.up = true
  const closed = await sink.close({ timeoutMs: 5000 })
  expect(closed.leftOnDisk).toEqual({ entries: 0, files: [] })
  expect(journalFiles(dir)).toEqual([])
  expect(quarantinedFiles(dir)).toEqual([])
  expect(hbase.rows.size).toBe(4500)
  expect(sink.stats()).toMatchObject({ accepted: 500, claimed: 4000, claimedFromWal: 3000, written: 4500, leftOnDisk: 0 })
})

test('close with HBase down: what stays on disk is counted exactly and named; the next writer sends it', async () => {
  const dir = tempDir()
  writeOrphan(dir, records('dead', 700), 'gone-wal')
  const hbase = createFakeHBase()
  hbase.up = false
  const { sink } = startSink(dir, hbase)
  await sink.ready
  for (let i = 0; i < 300; i++) sink.write(entry(i))
  const closed = await sink.close({ timeoutMs: 1500 })
  expect(closed.leftOnDisk.entries).toBe(1000)
  expect(closed.leftOnDisk.files.map((f) => f.file).sort()).toEqual(journalFiles(dir).sort())
  expect(sink.stats()).toMatchObject({ written: 0, journalPending: 1000, leftOnDisk: 1000 })

  hbase.up = true
  const heir = startSink(dir, hbase)
  expect(await heir.sink.replay()).toBe(true)
  expect(hbase.rows.size).toBe(1000)
  expect((await heir.sink.close()).leftOnDisk.entries).toBe(0)
  expect(journalFiles(dir)).toEqual([])
})

test('a stop while the replay waits on a read: the read ends first, the healthy file is not quarantined', async () => {
  const dir = tempDir()
  const file = writeOrphan(dir, records('slow', 2000))
  const faulty = createFaultyFs()
  // The claim counts the file's lines through one handle; the replay reads through the next.
  const held = await faulty.holdRead(file, { opensSpared: 1 })
  const hbase = createFakeHBase()
  const { sink } = startSink(dir, hbase, { journalFs: faulty.io })
  await held.reading
  const closed = await sink.close({ timeoutMs: 300 })
  // The read was still held when the budget ended: the file stays, whole, for a later replay.
  expect(closed.leftOnDisk.entries).toBe(2000)
  held.release()
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(quarantinedFiles(dir)).toEqual([])
  expect(sink.stats()).toMatchObject({ corrupt: 0, quarantinedFiles: 0 })
  const [left] = journalFiles(dir)
  expect(fs.readFileSync(left, 'utf8')).toBe(records('slow', 2000))

  const heir = startSink(dir, hbase)
  expect(await heir.sink.replay()).toBe(true)
  expect(hbase.rows.size).toBe(2000)
  await heir.sink.close()
})

test('a replay waiting out a long backoff goes once a live write shows HBase answers again', async () => {
  const dir = tempDir()
  const hbase = createFakeHBase()
  hbase.up = false
  // Shed policy: live entries stay queued and retry, so a live write is the first to succeed.
  const slowReplay = { replayBaseMs: 60000, replayMaxBackoffMs: 60000 }
  const { sink } = startSink(dir, hbase, { overload: 'shed', retryMaxMs: 50, retryBaseMs: 10, ...slowReplay })
  for (let i = 0; i < 50; i++) sink.write(entry(i))
  await until('every entry spilled', () => sink.stats().journalPending + sink.stats().journalBuffered === 50, 5000)
  // The first replay is due a minute after the spill: only a live write can bring it forward.
  hbase.up = true
  for (let i = 50; i < 60; i++) sink.write(entry(i))
  await until('the journal replayed', () => sink.stats().written === 60, 5000)
  expect(hbase.rows.size).toBe(60)
  await sink.close()
})

test('a probe that fails after a whole batch failed keeps the rest of that batch for the next try', async () => {
  const dir = tempDir()
  writeOrphan(dir, records('probe', 90))
  const hbase = createFakeHBase()
  hbase.up = false
  const { sink } = startSink(dir, hbase, { batchSize: 50, probeSize: 10 })
  expect(await sink.replay()).toBe(false) // a batch of 50 fails: HBase is down
  expect(await sink.replay()).toBe(false) // a probe of 10 of them fails too
  hbase.up = true
  expect(await sink.replay()).toBe(true)
  expect(hbase.rows.size).toBe(90)
  expect(sink.stats()).toMatchObject({ claimed: 90, written: 90, journalPending: 0 })
  await sink.close()
})

test('a close that comes while a periodic claim is counting a file waits for that claim, then replays the file', async () => {
  const dir = tempDir()
  const faulty = createFaultyFs()
  const hbase = createFakeHBase()
  const { sink } = startSink(dir, hbase, { journalFs: faulty.io, claimIntervalMs: 20 })
  await sink.ready
  const file = writeOrphan(dir, records('late', 600))
  // The periodic claim renames the file, then counts its lines: that count is held.
  const held = await faulty.holdRead(file)
  await held.reading
  const closing = sink.close({ timeoutMs: 3000 })
  setTimeout(held.release, 100)
  const closed = await closing
  expect(closed.leftOnDisk).toEqual({ entries: 0, files: [] })
  expect(hbase.rows.size).toBe(600)
  expect(journalFiles(dir)).toEqual([])
})
