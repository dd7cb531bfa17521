'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createJournal, formatRecord, parseRecord, readRecords, journalFiles } = require('../../logging/hbase-sink/journal')
const { deadPid } = require('../support/pids')

const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-journal-'))
  dirs.push(dir)
  return dir
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('records round-trip: key and the exact entry JSON', () => {
  const value = JSON.stringify({ ts: 1, ua: 'a "b" \\ c', ref: null })
  const line = formatRecord('0a1700000000000w1-7', value)
  expect(JSON.parse(line)).toEqual({ k: '0a1700000000000w1-7', v: JSON.parse(value) })
  expect(parseRecord(line)).toEqual({ key: '0a1700000000000w1-7', value })
  expect(parseRecord(line.slice(0, -5))).toBeNull()
  expect(parseRecord('{"k":"x","v":{"ts":1', true)).toBeNull()
})

test('append is queued, flush writes, seal makes a file ready for replay', async () => {
  const dir = tempDir()
  const journal = createJournal({ dir, writerId: 'w1' })
  for (let i = 0; i < 1000; i++) journal.append(formatRecord(`k${i}`, `{"i":${i}}`))
  expect(journalFiles(dir)).toHaveLength(0) // nothing touched the disk on the caller's stack
  expect(journal.unsealedLines()).toBe(1000)
  await journal.flush()
  expect(journalFiles(dir)).toHaveLength(1)
  expect(journal.nextSealed()).toBeUndefined()
  await journal.seal()
  const file = journal.nextSealed()
  expect(file.lines).toBe(1000)
  const { records, corrupt } = await readRecords(file.path)
  expect(corrupt).toBe(0)
  expect(records.map((r) => r.key)).toEqual(Array.from({ length: 1000 }, (_, i) => `k${i}`))
  await journal.remove(file)
  expect(journalFiles(dir)).toHaveLength(0)
  await journal.close()
})

test('the active file rotates by size', async () => {
  const dir = tempDir()
  const journal = createJournal({ dir, writerId: 'w1', maxFileBytes: 4096 })
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 100; i++) journal.append(formatRecord(`k${round}-${i}`, '{"x":"' + 'y'.repeat(20) + '"}'))
    await journal.flush()
  }
  await journal.close()
  expect(journalFiles(dir).length).toBeGreaterThan(1)
  let total = 0
  for (const f of journalFiles(dir)) total += (await readRecords(f)).records.length
  expect(total).toBe(500)
})

test('orphans: files of dead pids and of closed writers are claimed once; live ones are not', async () => {
  const dir = tempDir()
  const crashed = createJournal({ dir, writerId: 'crashed', pid: deadPid() })
  for (let i = 0; i < 10; i++) crashed.append(formatRecord(`c${i}`, '{}'))
  await crashed.flush() // the writer "dies" here: its file is left open, never sealed
  const live = createJournal({ dir, writerId: 'live', pid: process.ppid })
  live.append(formatRecord('l0', '{}'))
  await live.flush()
  const closedHere = createJournal({ dir, writerId: 'closed' })
  for (let i = 0; i < 5; i++) closedHere.append(formatRecord(`d${i}`, '{}'))
  await closedHere.close()
  const openHere = createJournal({ dir, writerId: 'open' })
  openHere.append(formatRecord('o0', '{}'))
  await openHere.flush()

  const a = createJournal({ dir, writerId: 'a' })
  const b = createJournal({ dir, writerId: 'b' })
  const [claimedA, claimedB] = await Promise.all([a.claimOrphans(), b.claimOrphans()])
  const all = [...claimedA, ...claimedB]
  expect(all.map((f) => f.from.split('-')[2]).sort()).toEqual(['closed', 'crashed'])
  expect(all.reduce((n, f) => n + f.lines, 0)).toBe(15)
  // Claimed files now carry the claimer's pid and id.
  for (const f of claimedA) expect(path.basename(f.path)).toMatch(new RegExp(`^j-${process.pid}-a-\\d+\\.ndjson$`))
  for (const f of claimedB) expect(path.basename(f.path)).toMatch(new RegExp(`^j-${process.pid}-b-\\d+\\.ndjson$`))
  expect(await a.claimOrphans()).toEqual([])
  await Promise.all([crashed.close(), live.close(), openHere.close(), a.close(), b.close()])
})

test('a line cut short by a crash is counted corrupt and skipped', async () => {
  const dir = tempDir()
  const name = path.join(dir, `j-${deadPid()}-gone-1.ndjson`)
  fs.writeFileSync(name, formatRecord('k1', '{"a":1}') + '\n' + formatRecord('k2', '{"a":2}') + '\n' + '{"k":"k3","v":{"a"')
  const journal = createJournal({ dir, writerId: 'heir' })
  const [file] = await journal.claimOrphans()
  expect(file.lines).toBe(3)
  const { records, corrupt } = await readRecords(file.path)
  expect(records.map((r) => r.key)).toEqual(['k1', 'k2'])
  expect(corrupt).toBe(1)
  await journal.close()
})

test('one writer id opens the journal only once per process', async () => {
  const dir = tempDir()
  const journal = createJournal({ dir, writerId: 'dup' })
  expect(() => createJournal({ dir, writerId: 'dup' })).toThrow(/already/)
  expect(() => createJournal({ dir, writerId: 'bad id' })).toThrow(/writerId/)
  await journal.close()
  await createJournal({ dir, writerId: 'dup' }).close()
})

test('a failed write rejects flush, keeps the lines, and is retried until the disk takes them', async () => {
  const root = tempDir()
  const blocker = path.join(root, 'not-a-dir')
  fs.writeFileSync(blocker, '')
  const journal = createJournal({ dir: path.join(blocker, 'journal'), writerId: 'w1', retryMs: 20 })
  for (let i = 0; i < 10; i++) journal.append(formatRecord(`k${i}`, '{}'))
  await expect(journal.flush()).rejects.toMatchObject({ code: 'ENOTDIR' })
  expect(journal.stats()).toMatchObject({ bufferedLines: 10, lastError: 'ENOTDIR' })
  fs.rmSync(blocker)
  fs.mkdirSync(blocker)
  const started = Date.now()
  while (journal.stats().bufferedLines > 0 && Date.now() - started < 5000) await new Promise((resolve) => setTimeout(resolve, 20))
  await journal.flush()
  await journal.seal()
  expect(journal.nextSealed().lines).toBe(10)
  await journal.close()
})
