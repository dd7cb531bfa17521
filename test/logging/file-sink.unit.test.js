'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createFileSink } = require('../../logging/file-sink')
const { countLines } = require('../../logging/count-lines')
const { accessEntry } = require('../../logging/access-entry')

const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-file-sink-'))
  dirs.push(dir)
  return dir
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function entry (i) {
  return accessEntry({
    ts: 1700000000000 + i,
    endpoint: 'sample4',
    id: String(i),
    status: 200,
    ms: i / 7,
    ip: '127.0.0.1',
    ua: `agent ${i} "quoted"`,
    ref: i % 2 ? null : 'https://page.test/a'
  })
}

function readEntries (files) {
  return files.flatMap((f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean)).map((l) => JSON.parse(l))
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

describe('file sink', () => {
  test('10,000 writes → flush → 10,000 lines, each the entry', async () => {
    const dir = tempDir()
    const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w1' })
    const n = 10000
    for (let i = 0; i < n; i++) sink.write(entry(i))
    // write() only queued: nothing reached the file on the caller's stack.
    expect(countLines(dir)).toBe(0)
    await sink.flush()
    expect(countLines(dir)).toBe(n)
    expect(sink.stats()).toMatchObject({ accepted: n, written: n, pending: 0, errors: 0 })
    const files = sink.files()
    expect(files.map((f) => path.basename(f))).toEqual([expect.stringMatching(/^access-w1\.\d{4}-\d\d-\d\d\.\d+\.log$/)])
    const entries = readEntries(files)
    expect(entries).toHaveLength(n)
    for (let i = 0; i < n; i++) expect(entries[i]).toEqual(entry(i))
    await sink.close()
  })

  test('size rotation produces several files and countLines still totals exactly', async () => {
    const dir = tempDir()
    const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w2', rotateSize: '20k', keepFiles: 1000 })
    const n = 10000
    for (let i = 0; i < n; i++) {
      sink.write(entry(i))
      if (i % 500 === 499) await tick(15) // lets each batch reach the file, so rotation can cut
    }
    await sink.flush()
    const files = sink.files()
    expect(files.length).toBeGreaterThan(3)
    expect(countLines(dir)).toBe(n)
    expect(countLines(files)).toBe(n)
    const ids = readEntries(files).map((e) => Number(e.id)).sort((a, b) => a - b)
    expect(ids).toEqual(Array.from({ length: n }, (_, i) => i))
    await sink.close()
  })

  test('close is idempotent, flushes, and counts later writes as rejected without throwing', async () => {
    const dir = tempDir()
    const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w3', batchMs: 60000 })
    for (let i = 0; i < 1234; i++) sink.write(entry(i))
    const first = sink.close()
    expect(sink.close()).toBe(first)
    await first
    await sink.close()
    expect(countLines(dir)).toBe(1234)
    expect(() => sink.write(entry(1))).not.toThrow()
    expect(sink.stats()).toMatchObject({ accepted: 1234, written: 1234, pending: 0, rejectedAfterClose: 1 })
    expect(countLines(dir)).toBe(1234)
  })
})

test('an unserializable entry is counted as an error, never thrown', async () => {
  const dir = tempDir()
  const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w4' })
  const cyclic = { ts: 1 }
  cyclic.self = cyclic
  expect(() => sink.write(cyclic)).not.toThrow()
  expect(() => sink.write({ ts: 1n })).not.toThrow()
  sink.write(entry(1))
  await sink.close()
  expect(sink.stats()).toMatchObject({ accepted: 1, written: 1, errors: 2 })
  expect(countLines(dir)).toBe(1)
})

test('workers write separate files; countLines of the directory totals both', async () => {
  const dir = tempDir()
  const a = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w1', rotateSize: '10k', keepFiles: 1000 })
  const b = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w10', rotateSize: '10k', keepFiles: 1000 })
  for (let i = 0; i < 3000; i++) {
    a.write(entry(i))
    if (i % 2) b.write(entry(i))
    if (i % 500 === 499) await tick(15)
  }
  await Promise.all([a.close(), b.close()])
  expect(countLines(a.files())).toBe(3000)
  expect(countLines(b.files())).toBe(1500)
  expect(countLines(dir)).toBe(4500)
  expect(a.files().every((f) => path.basename(f).startsWith('access-w1.'))).toBe(true)
})

test('keepFiles bounds the rotated files kept', async () => {
  const dir = tempDir()
  const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w5', rotateSize: '5k', keepFiles: 2 })
  for (let i = 0; i < 2000; i++) {
    sink.write(entry(i))
    if (i % 100 === 99) await tick(15)
  }
  await sink.flush()
  await tick(200) // pino-roll deletes old files asynchronously after a rotation
  expect(sink.files().length).toBeLessThanOrEqual(3)
  await sink.close()
})

test('time rotation (a period in ms) starts new files', async () => {
  const dir = tempDir()
  const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w6', rotateFrequency: 1000, keepFiles: 100 })
  for (let i = 0; i < 100; i++) sink.write(entry(i))
  await sink.flush()
  await tick(1300)
  for (let i = 100; i < 200; i++) sink.write(entry(i))
  await sink.close()
  expect(sink.files().length).toBeGreaterThanOrEqual(2)
  expect(countLines(dir)).toBe(200)
})

test('countLines: missing paths count 0, a last line without newline counts, symlinks are skipped', () => {
  const dir = tempDir()
  expect(countLines(path.join(dir, 'nope'))).toBe(0)
  fs.writeFileSync(path.join(dir, 'a.log'), '{"a":1}\n{"a":2}\n')
  fs.writeFileSync(path.join(dir, 'b.log'), '{"b":1}\n{"b":2')
  fs.symlinkSync('a.log', path.join(dir, 'current.log'))
  expect(countLines(dir)).toBe(4)
  expect(countLines(path.join(dir, 'b.log'))).toBe(2)
})

test('stats().written follows completed writes without a flush (in-process writer)', async () => {
  const dir = tempDir()
  const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w7', batchMs: 5 })
  for (let i = 0; i < 100; i++) sink.write(entry(i))
  expect(sink.stats()).toMatchObject({ accepted: 100, written: 0, pending: 100 })
  const started = Date.now()
  while (sink.stats().written < 100 && Date.now() - started < 5000) await tick(10)
  expect(sink.stats()).toMatchObject({ written: 100, pending: 0 })
  expect(countLines(dir)).toBe(100)
  await sink.close()
})
