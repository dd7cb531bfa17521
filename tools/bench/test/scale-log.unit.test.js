'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { rowsBefore, dirBytes } = require('../lib/scale-log')

test('rowsBefore: the rows whose writes and later steps fit before the deadline, with a margin', () => {
  // 1,000 s left after the fixed part; 100 µs to write + 100 µs after, per row: 5,000,000 rows, 90% of them
  const rows = rowsBefore({ deadline: 1_120_000, now: 0, rowsPerSec: 10000, afterUsPerRow: 100, fixedMs: 120000, max: 2e7 })
  expect(rows).toBe(4_500_000)
  expect(rowsBefore({ deadline: 1e9, now: 0, rowsPerSec: 1e5, afterUsPerRow: 100, fixedMs: 0, max: 2e7 })).toBe(2e7)
  expect(rowsBefore({ deadline: 1000, now: 0, rowsPerSec: 1e4, afterUsPerRow: 100, fixedMs: 120000, max: 2e7 })).toBe(1000)
})

test('dirBytes sums the files under a dir, none when it is absent', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scale-dir-'))
  fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'x'), Buffer.alloc(10))
  fs.writeFileSync(path.join(dir, 'a', 'b', 'y'), Buffer.alloc(32))
  expect(dirBytes(dir)).toBe(42)
  expect(dirBytes(path.join(dir, 'missing'))).toBe(0)
  fs.rmSync(dir, { recursive: true, force: true })
})
