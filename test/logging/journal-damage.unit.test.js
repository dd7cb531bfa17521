'use strict'

// Torn and damaged journal / write-ahead-log files, crafted on real files, claimed and replayed
// by an HBase sink (its HBase a stand-in: test/support/fake-hbase.js; the real one in the fault
// test). Replay takes every whole record, skips and counts what is not, quarantines the file
// (renamed <name>.damaged-<ms>, never deleted), and one bad file never holds up the others.
//
// "Unreadable" is made two honest ways, since these tests run as root and chmod 000 does not
// stop root: a directory where a file should be (EISDIR), and an injected EIO on read
// (test/support/faulty-fs.js).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { journalFiles, quarantinedFiles, readRecords } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { createFaultyFs } = require('../support/faulty-fs')
const { createFakeHBase } = require('../support/fake-hbase')
const { orphanPath, writeOrphan, recordKey, record, records, garbage } = require('../support/crafted-files')

const dirs = []
const sinks = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-damage-'))
  dirs.push(dir)
  return dir
}

afterAll(async () => {
  for (const s of sinks) await s.close({ timeoutMs: 500 })
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

let heirs = 0
function startSink (journalDir, options = {}) {
  const hbase = createFakeHBase()
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir,
    writerId: `heir${heirs++}`,
    flushIntervalMs: 10,
    batchSize: 50,
    ...options
  })
  sinks.push(sink)
  return { hbase, sink }
}

function balanced (s) {
  return s.accepted + s.claimed === s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt
}

/** The one quarantined file that came from `original`, and its bytes. */
function quarantinedFrom (dir, original) {
  const found = quarantinedFiles(dir).filter((f) => path.basename(f).startsWith(path.basename(original) + '.damaged-'))
  expect(found).toHaveLength(1)
  return found[0]
}

test('a journal cut mid-record (as a crash leaves it): every whole record replayed, the cut one counted, the file quarantined ' +
  'intact', async () => {
  const dir = tempDir()
  const file = orphanPath(dir)
  const whole = records('a', 40)
  const cut = record('a', 40).slice(0, 37)
  fs.writeFileSync(file, whole + cut)
  const { hbase, sink } = startSink(dir)
  expect(await sink.replay()).toBe(true)
  const s = sink.stats()
  expect(s).toMatchObject({ claimed: 41, written: 40, replayed: 40, corrupt: 1, journalPending: 0, quarantinedFiles: 1 })
  expect(balanced(s)).toBe(true)
  expect(hbase.rows.size).toBe(40)
  expect(journalFiles(dir)).toEqual([])
  expect(fs.readFileSync(quarantinedFrom(dir, file), 'utf8')).toBe(whole + cut) // renamed, not rewritten
})

test('a record cut in the middle of a file, the next glued to it: that line is skipped, every other replayed', async () => {
  const dir = tempDir()
  const file = orphanPath(dir, 'wal1-wal') // a write-ahead-log segment: same format, same path
  const lines = records('b', 30).split('\n').filter(Boolean)
  lines[10] = lines[10].slice(0, 25) + lines[11] // a short write, then the next record after it
  lines.splice(11, 1)
  fs.writeFileSync(file, lines.join('\n') + '\n')
  const { hbase, sink } = startSink(dir)
  expect(await sink.replay()).toBe(true)
  const s = sink.stats()
  expect(s).toMatchObject({ claimed: 29, claimedFromWal: 29, written: 28, corrupt: 1, quarantinedFiles: 1 })
  expect(balanced(s)).toBe(true)
  expect(hbase.rows.has(recordKey('b', 10))).toBe(false)
  expect(hbase.rows.has(recordKey('b', 11))).toBe(false) // glued to the cut one: lost with it, counted as its one line
  expect(hbase.rows.size).toBe(28)
  quarantinedFrom(dir, file)
})

test('zero-length, garbage, a directory in place of a file, an I/O error: each quarantined and counted; the good files around them all ' +
  'replayed', async () => {
  const dir = tempDir()
  writeOrphan(dir, records('g1', 120))
  const empty = writeOrphan(dir, '')
  const noise = garbage(20000)
  const junk = writeOrphan(dir, noise.bytes)
  const directory = orphanPath(dir)
  fs.mkdirSync(directory)
  fs.writeFileSync(path.join(directory, 'inside'), 'x')
  const eioAtClaim = writeOrphan(dir, records('io1', 7)) // cannot even be opened: its lines cannot be counted
  const eioAtReplay = writeOrphan(dir, records('io2', 15)) // counted when claimed, then the disk fails on the read
  writeOrphan(dir, records('g2', 80))
  const disk = createFaultyFs()
  await disk.failReads(eioAtClaim, 'EIO')
  await disk.failReads(eioAtReplay, 'EIO', ['read'], { opensSpared: 1 })

  const { hbase, sink } = startSink(dir, { journalFs: disk.io })
  expect(await sink.replay()).toBe(true)
  const s = sink.stats()
  expect(hbase.rows.size).toBe(200) // every record of the good files
  expect(s.written).toBe(200)
  // garbage: all its lines; EIO on the read: the 15 lines counted when it was claimed; empty,
  // the directory and the file that could not be opened: no lines known to count.
  expect(s.claimed).toBe(200 + noise.lines + 15)
  expect(s.corrupt).toBe(noise.lines + 15)
  expect(s.quarantinedFiles).toBe(5)
  expect(s.journalPending).toBe(0)
  expect(balanced(s)).toBe(true)
  expect(journalFiles(dir)).toEqual([])
  for (const f of [empty, junk, directory, eioAtClaim, eioAtReplay]) quarantinedFrom(dir, f)
  expect(fs.readFileSync(path.join(quarantinedFrom(dir, directory), 'inside'), 'utf8')).toBe('x')
  expect(fs.readFileSync(quarantinedFrom(dir, junk)).equals(noise.bytes)).toBe(true)
  expect(sink.stats().lastError).toBe('EIO') // the read that failed
  // The sink is fine: new entries still go through.
  sink.write({ ts: Date.now(), endpoint: 'sample5', id: '1', status: 200, ms: 1, ip: null, ua: null, ref: null })
  await sink.flush()
  expect(hbase.rows.size).toBe(201)
})

test('an error that passes by itself (EMFILE) does not quarantine: the file is claimed and replayed once it reads', async () => {
  const dir = tempDir()
  const atClaim = writeOrphan(dir, records('t1', 10))
  const atReplay = writeOrphan(dir, records('t2', 10))
  const atClaimInode = fs.statSync(atClaim).ino
  const disk = createFaultyFs()
  await disk.failReads(atClaim, 'EMFILE')
  await disk.failReads(atReplay, 'EMFILE', ['read'], { opensSpared: 1 })
  const { hbase, sink } = startSink(dir, { journalFs: disk.io, claimIntervalMs: 50 })
  expect(await sink.replay()).toBe(false) // the one it could claim does not read yet
  expect(sink.stats()).toMatchObject({ claimed: 10, journalPending: 10, corrupt: 0, quarantinedFiles: 0, lastError: 'EMFILE' })
  // Left as it was: the same file (inode), still a journal file, not quarantined. Not by name: a
  // periodic claim (every 50 ms) may be between its rename and its rename back just now.
  expect(journalFiles(dir).map((f) => fs.statSync(f).ino)).toContain(atClaimInode)
  expect(quarantinedFiles(dir)).toEqual([])
  disk.healReads()
  const started = Date.now()
  while (sink.stats().claimed < 20 && Date.now() - started < 5000) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(await sink.replay()).toBe(true)
  expect(sink.stats()).toMatchObject({ claimed: 20, written: 20, journalPending: 0, corrupt: 0, quarantinedFiles: 0 })
  expect(hbase.rows.size).toBe(20)
  expect(quarantinedFiles(dir)).toEqual([])
})

test('a file too big to hold in memory is quarantined unread, its lines counted', async () => {
  const dir = tempDir()
  const big = writeOrphan(dir, records('big', 200))
  writeOrphan(dir, records('small', 5))
  const { hbase, sink } = startSink(dir, { maxReplayFileBytes: 4096 })
  expect(await sink.replay()).toBe(true)
  expect(sink.stats()).toMatchObject({ claimed: 205, written: 5, corrupt: 200, quarantinedFiles: 1 })
  expect(hbase.rows.size).toBe(5)
  quarantinedFrom(dir, big)
})

test('quarantined files are never claimed again', async () => {
  const dir = tempDir()
  writeOrphan(dir, records('q', 3) + '{"k":"x')
  const first = startSink(dir)
  expect(await first.sink.replay()).toBe(true)
  expect(first.sink.stats()).toMatchObject({ written: 3, corrupt: 1, quarantinedFiles: 1 })
  const second = startSink(dir)
  expect(await second.sink.replay()).toBe(true)
  expect(second.sink.stats()).toMatchObject({ claimed: 0, written: 0, corrupt: 0, quarantinedFiles: 0 })
  expect(quarantinedFiles(dir)).toHaveLength(1)
})

test('readRecords: whole records only; a blank line or a record cut short is counted', async () => {
  const dir = tempDir()
  const file = path.join(dir, 'x.ndjson')
  fs.writeFileSync(
    file,
    record('r', 1) + '\n\n' + record('r', 2) + '\n' + '{"k":"bad key","v":{}}\n' + '{"k":"k","v":[1]}\n' + record('r', 3).slice(0, -3)
  )
  const { records: got, corrupt } = await readRecords(file)
  expect(got.map((r) => r.key)).toEqual([recordKey('r', 1), recordKey('r', 2)])
  expect(corrupt).toBe(4)
})

test('a read that fails part-way through a file: the records read are written, the lines not read counted, the file ' +
  'quarantined', async () => {
  const dir = tempDir()
  const file = writeOrphan(dir, records('mid', 300)) // ~70 blocks of 512 bytes
  const disk = createFaultyFs()
  const { hbase, sink } = startSink(dir, { journalFs: disk.io, replayReadBytes: 4096, batchSize: 100 })
  hbase.up = false
  expect(await sink.replay()).toBe(false) // a block read, its first write refused: the file stays open
  expect(sink.stats()).toMatchObject({ claimed: 300, written: 0 })
  // HBase comes back for two writes, then goes again: the replay stops part-way through the file.
  const multiPut = hbase.client.multiPut
  let allowed = 2
  hbase.client.multiPut = async (table, puts) => {
    hbase.up = allowed-- > 0
    return multiPut(table, puts)
  }
  expect(await sink.replay()).toBe(false)
  const written = sink.stats().written
  expect(written).toBeGreaterThan(0)
  expect(written).toBeLessThan(300)
  // The disk fails under the open file, part-way through it (the claim renamed it).
  await disk.failReads(journalFiles(dir)[0], 'EIO', ['read'])
  hbase.client.multiPut = multiPut
  hbase.up = true
  let done = false
  for (let i = 0; i < 20 && !done; i++) done = await sink.replay()
  expect(done).toBe(true)
  const s = sink.stats()
  expect(s.written).toBeGreaterThanOrEqual(written) // what was read before the failure, at least
  expect(s.written).toBeLessThan(300)
  expect(s.corrupt).toBe(300 - s.written) // every line not read is counted
  expect(s).toMatchObject({ quarantinedFiles: 1, journalPending: 0, lastError: 'EIO' })
  expect(balanced(s)).toBe(true)
  expect(hbase.rows.size).toBe(s.written)
  quarantinedFrom(dir, file)
})
