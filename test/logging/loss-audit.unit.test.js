'use strict'

// The pure parts of the fault tests' loss audit (test/support/loss-audit.js): what it lists as
// left on a host's disk, how it counts lines, what it reads from /metrics, what it records.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { leftOnDisk, totals, expectNothingLeft, idleGauges, recordAudit } = require('../support/loss-audit')

let stateDir

beforeEach(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-audit-'))
})

afterEach(() => {
  fs.rmSync(stateDir, { recursive: true, force: true })
})

function put (rel, content) {
  const file = path.join(stateDir, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

test('a state dir without a journal directory, or with an empty one, has nothing left', async () => {
  expect(await leftOnDisk(stateDir)).toEqual([])
  fs.mkdirSync(path.join(stateDir, 'journal', 'hbase'), { recursive: true })
  put('logs/access-w1.2026-01-01.1.log', 'a\nb\n') // the file log is not the journal
  expect(await leftOnDisk(stateDir)).toEqual([])
  expect(await expectNothingLeft([stateDir])).toEqual([])
})

test('journal, write-ahead-log, damaged and unknown files in every sink directory, with their lines', async () => {
  put('journal/j-123-w1-1700000000000000001.ndjson', '{"k":"a","v":{}}\n{"k":"b","v":{}}\n')
  put('journal/j-123-w1-wal-1700000000000000002.ndjson', '{"k":"c","v":{}}\n{"k":"d","v":{}}\n{"k":"e"') // last line cut: counted
  put('journal/events/j-9-w2-events-1700000000000000003.ndjson', '')
  put('journal/events/j-9-w2-events-1700000000000000004.ndjson.damaged-1700000000123', 'x\ny\nz\n')
  put('journal/events/stray.tmp', 'q\n')
  fs.mkdirSync(path.join(stateDir, 'journal', 'j-7-gone-1700000000000000005.ndjson.damaged-1700000000456'))
  const left = await leftOnDisk(stateDir)
  const j = (...parts) => path.join('journal', ...parts)
  expect(left).toEqual([
    { file: j('events', 'j-9-w2-events-1700000000000000003.ndjson'), kind: 'journal', lines: 0 },
    { file: j('events', 'j-9-w2-events-1700000000000000004.ndjson.damaged-1700000000123'), kind: 'damaged', lines: 3 },
    { file: j('events', 'stray.tmp'), kind: 'other', lines: 1 },
    { file: j('j-123-w1-1700000000000000001.ndjson'), kind: 'journal', lines: 2 },
    { file: j('j-123-w1-wal-1700000000000000002.ndjson'), kind: 'wal', lines: 3 },
    { file: j('j-7-gone-1700000000000000005.ndjson.damaged-1700000000456'), kind: 'damaged', lines: 0, type: 'directory' }
  ])
  expect(totals(left)).toEqual({ files: 6, lines: 9 })
})

test('expectNothingLeft fails naming each file left and its lines', async () => {
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-audit-b-'))
  try {
    put('journal/j-123-w1-wal-1700000000000000002.ndjson', '{"k":"c","v":{}}\n')
    await expect(expectNothingLeft([other, stateDir])).rejects.toThrow(/j-123-w1-wal-1700000000000000002\.ndjson: wal, 1 lines/)
    await expect(expectNothingLeft(other)).resolves.toEqual([])
  } finally {
    fs.rmSync(other, { recursive: true, force: true })
  }
})

test('the idle gauges of one sink are read from a /metrics text; a missing one is NaN, not 0', () => {
  const text = [
    '# HELP beacon_access_log_pending Entries accepted but not yet durable',
    'beacon_access_log_pending{sink="hbase"} 0',
    'beacon_access_log_pending{sink="file"} 12',
    'beacon_access_log_queue_depth{sink="hbase"} 3',
    'beacon_access_log_journal_pending{sink="hbase"} 0',
    'beacon_access_log_journal_pending_total{sink="hbase"} 9'
  ].join('\n')
  expect(idleGauges(text, 'hbase')).toEqual({
    beacon_access_log_pending: 0,
    beacon_access_log_queue_depth: 3,
    beacon_access_log_journal_pending: 0,
    beacon_access_log_journal_buffered: NaN
  })
})

test('recordAudit appends one JSON line to BEACON_SOAK_REPORT', () => {
  const report = path.join(stateDir, 'soak.ndjson')
  const before = process.env.BEACON_SOAK_REPORT
  const log = jest.spyOn(console, 'log').mockImplementation(() => {})
  process.env.BEACON_SOAK_REPORT = report
  try {
    recordAudit({ test: 'stopped', answered: 10, rows: 9, leftOnDisk: [{ file: 'journal/j-1-w-1.ndjson', kind: 'journal', lines: 1 }] })
    recordAudit({ answered: 5, rows: 5 })
  } finally {
    if (before === undefined) delete process.env.BEACON_SOAK_REPORT
    else process.env.BEACON_SOAK_REPORT = before
    log.mockRestore()
  }
  const lines = fs.readFileSync(report, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  expect(lines).toEqual([
    { test: 'stopped', answered: 10, rows: 9, left: { files: 1, lines: 1 }, files: ['journal/j-1-w-1.ndjson (journal, 1)'] },
    { test: expect.stringContaining('recordAudit appends'), answered: 5, rows: 5, left: null, files: null }
  ])
})
