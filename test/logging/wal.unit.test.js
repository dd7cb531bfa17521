'use strict'

// The write-ahead log of a durable HBase sink, on real files.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createWal } = require('../../logging/hbase-sink/journal/wal')
const { createJournal, journalFiles, readRecords } = require('../../logging/hbase-sink/journal')
const { until } = require('../support/until')

const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-wal-'))
  dirs.push(dir)
  return dir
}
/**
 * Waits (at most 5 s) until the files on disk are the WAL's own segments: the WAL drops a segment
 * at once, and deletes its file asynchronously. Not a fixed wait: a loaded machine may take longer.
 */
const settled = (wal, dir) =>
  until('the files on disk are the WAL\'s segments', () => journalFiles(dir).length === wal.stats().walFiles, 5000, 5)

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('each append is on disk when it returns, in the journal\'s record format', async () => {
  const dir = tempDir()
  const wal = createWal({ dir, writerId: 'w1-wal' })
  wal.append('00k1', '{"a":1}')
  wal.append('01k2', '{"a":2}')
  const [file] = journalFiles(dir)
  expect(path.basename(file)).toMatch(new RegExp(`^j-${process.pid}-w1-wal-\\d+\\.ndjson$`))
  expect((await readRecords(file)).records).toEqual([{ key: '00k1', value: '{"a":1}' }, { key: '01k2', value: '{"a":2}' }])
  expect(wal.stats()).toMatchObject({ walAppended: 2, walPending: 2, walFiles: 1 })
  await wal.close()
  expect(journalFiles(dir)).toHaveLength(1) // kept: its entries were never marked done
})

test('a segment goes away once it is sealed (by size or age) and all its entries are done', async () => {
  const dir = tempDir()
  const wal = createWal({ dir, writerId: 'w2-wal', segmentLines: 3, segmentMaxAgeMs: 60000 })
  const first = [1, 2, 3].map((i) => wal.append(`k${i}`, '{}')) // the third seals it
  const fourth = wal.append('k4', '{}')
  expect(journalFiles(dir)).toHaveLength(2)
  for (const s of first.slice(0, 2)) wal.done(s)
  await settled(wal, dir)
  expect(journalFiles(dir)).toHaveLength(2) // one entry of the sealed segment is still pending
  wal.done(first[2])
  await settled(wal, dir)
  expect(journalFiles(dir)).toHaveLength(1)
  wal.done(fourth)
  await settled(wal, dir)
  // The active one too, once none of its entries is pending: an idle log leaves no file behind.
  expect(journalFiles(dir)).toHaveLength(0)
  wal.append('k5', '{}') // in a new file
  expect(journalFiles(dir)).toHaveLength(1)
  await wal.close({ discard: true })
  await settled(wal, dir)
  expect(journalFiles(dir)).toHaveLength(0)
})

test('segments older than segmentMaxAgeMs are sealed on the next append', async () => {
  const dir = tempDir()
  const wal = createWal({ dir, writerId: 'w3-wal', segmentMaxAgeMs: 30 })
  wal.done(wal.append('a', '{}'))
  await new Promise((resolve) => setTimeout(resolve, 40))
  wal.append('b', '{}') // seals the first (all done: deleted) and opens a new one
  await settled(wal, dir)
  const files = journalFiles(dir)
  expect(files).toHaveLength(1)
  expect((await readRecords(files[0])).records.map((r) => r.key)).toEqual(['b'])
  await wal.close()
})

test('a live writer\'s log is never claimed by a journal of the same process; a closed one is', async () => {
  const dir = tempDir()
  const wal = createWal({ dir, writerId: 'w4-wal' })
  wal.append('x', '{}')
  const heir = createJournal({ dir, writerId: 'heir' })
  expect(await heir.claimOrphans()).toEqual([])
  await wal.close()
  const claimed = await heir.claimOrphans()
  expect(claimed).toHaveLength(1)
  expect(claimed[0]).toMatchObject({ lines: 1 })
  expect(claimed[0].from).toMatch(/-w4-wal-/)
  await heir.close()
})

test('a disk that fills up mid-record: the partial record is cut back off, the append throws, the next starts a new segment', async () => {
  const dir = tempDir()
  // node:fs with a byte budget on writeSync: the write that crosses it goes through in part.
  const disk = { free: 200 }
  const io = {
    ...fs,
    writeSync (fd, buffer, offset, length) {
      if (disk.free <= 0) throw Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })
      const n = fs.writeSync(fd, buffer, offset, Math.min(length, disk.free))
      disk.free -= n
      return n
    }
  }
  const wal = createWal({ dir, writerId: 'w5-wal', fs: io })
  const value = '{"pad":"' + 'x'.repeat(40) + '"}'
  let ok = 0
  let failures = 0
  for (let i = 0; i < 10; i++) {
    try {
      wal.append(`k${i}`, value)
      ok++
    } catch (err) {
      expect(err.code).toBe('ENOSPC')
      failures++
    }
  }
  expect(ok).toBeGreaterThan(0)
  expect(failures).toBe(10 - ok)
  expect(wal.stats()).toMatchObject({ walAppended: ok, walErrors: failures })
  await settled(wal, dir) // segments whose every append failed are deleted (asynchronously)
  // Every byte on disk is a whole record: nothing for a replay to skip.
  let records = 0
  for (const file of journalFiles(dir)) {
    const text = fs.readFileSync(file, 'utf8')
    expect(text === '' || text.endsWith('\n')).toBe(true)
    const read = await readRecords(file)
    expect(read.corrupt).toBe(0)
    records += read.records.length
  }
  expect(records).toBe(ok)
  disk.free = Infinity
  wal.append('after', value) // room again: appends work, in a segment of their own
  expect(wal.stats().walAppended).toBe(ok + 1)
  await wal.close()
})
