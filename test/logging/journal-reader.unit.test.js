'use strict'

// The replay's block reader over real files: records that straddle block boundaries, a line
// longer than the buffer, a buffer reused with stale bytes in it, a reader that stops part-way
// and a new one that goes on from there; and a sink replaying a many-block file through a small
// buffer.

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { RecordReader } = require('../../logging/hbase-sink/journal/reader')
const { readRecords } = require('../../logging/hbase-sink/journal')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { createFakeHBase } = require('../support/fake-hbase')
const { writeOrphan, record, records } = require('../support/crafted-files')

let dir
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-reader-')) })
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Every line of a file through one reader, `batch` lines at a time. */
async function readAll (file, buffer, batch = 7) {
  const reader = new RecordReader(await fsp.open(file, 'r'), buffer)
  const got = { records: [], corrupt: 0, calls: 0 }
  try {
    for (;;) {
      const { records: part, corrupt } = await reader.next(batch)
      got.calls++
      expect(part.length + corrupt).toBeLessThanOrEqual(batch)
      if (part.length === 0 && corrupt === 0) return got
      got.records.push(...part)
      got.corrupt += corrupt
    }
  } finally {
    await reader.close()
  }
}

test('records straddling block boundaries are read whole, in order, as reading the file whole does', async () => {
  const file = writeOrphan(dir, records('blocks', 300) + record('blocks', 300).slice(0, 50))
  const whole = await readRecords(file)
  expect(whole.records).toHaveLength(300)
  expect(whole.corrupt).toBe(1)
  for (const size of [128, 1000, 4096, 1 << 20]) {
    const got = await readAll(file, Buffer.alloc(size, 0x0a)) // stale newlines must not count
    expect(got.records).toEqual(whole.records)
    expect(got.corrupt).toBe(1)
  }
})

test('a line longer than the buffer is skipped to its newline and counted as one corrupt line', async () => {
  const long = 'x'.repeat(5000)
  const file = writeOrphan(dir, record('long', 1) + '\n' + long + '\n' + record('long', 2) + '\n' + long)
  const got = await readAll(file, Buffer.allocUnsafe(1024), 3)
  expect(got.records.map((r) => r.key)).toEqual([JSON.parse(record('long', 1)).k, JSON.parse(record('long', 2)).k])
  expect(got.corrupt).toBe(2) // the one in the middle, and the one that ends the file
})

test('a reader stopped part-way: a new one from consumed() goes on with the next line, nothing read twice or missed', async () => {
  const file = writeOrphan(dir, records('resume', 100))
  const buffer = Buffer.allocUnsafe(700)
  const first = new RecordReader(await fsp.open(file, 'r'), buffer)
  const a = await first.next(33)
  const at = first.consumed()
  await first.close()
  const second = new RecordReader(await fsp.open(file, 'r'), buffer, at)
  const b = []
  for (let part = await second.next(10); part.records.length; part = await second.next(10)) b.push(...part.records)
  await second.close()
  expect([...a.records, ...b]).toEqual((await readRecords(file)).records)
})

test('a sink replays a file of many blocks through a small buffer: every record written once, the file gone', async () => {
  const journalDir = fs.mkdtempSync(path.join(dir, 'journal-'))
  writeOrphan(journalDir, records('many', 2000))
  const hbase = createFakeHBase()
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir,
    writerId: 'reader',
    flushIntervalMs: 10,
    batchSize: 64,
    replayReadBytes: 4096
  })
  try {
    expect(await sink.replay()).toBe(true)
    expect(sink.stats()).toMatchObject({ claimed: 2000, written: 2000, corrupt: 0, journalPending: 0, quarantinedFiles: 0 })
    expect(hbase.rows.size).toBe(2000)
    expect(fs.readdirSync(journalDir)).toEqual([])
  } finally {
    await sink.close({ timeoutMs: 500 })
  }
})
