'use strict'

// The audit every "every answered request is a row" test ends with. Rows counted while entries
// still wait on a host (in a journal, a write-ahead log, the sink's memory) make a test pass or
// fail by timing and say nothing about loss; so before counting, a stopped host's state dir must
// hold nothing, and a running host's sink must say nothing is pending.

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
const { FILE_PATTERN, QUARANTINE_PATTERN, countFileLines } = require('../../logging/hbase-sink/journal/files')
const { until } = require('./until')

/** The sink gauges that must all be 0 on an idle host (api/metrics/index.js). */
const IDLE_GAUGES = [
  'beacon_access_log_pending',
  'beacon_access_log_queue_depth',
  'beacon_access_log_journal_pending',
  'beacon_access_log_journal_buffered'
]

/**
 * @typedef {{ file: string, kind: 'journal'|'wal'|'damaged'|'other', lines: number|null, type?: 'directory', error?: string }} LeftFile
 *   file: relative to the state dir; lines: null when the file could not be read (error says why);
 *   type 'directory': something a journal name points at that is not a file (no lines)
 */

/**
 * What an entry of a journal directory is: a journal or write-ahead-log file (by its writer id),
 * a quarantined one, or something else (null for a directory that is none of these).
 * @param {string} name
 * @param {boolean} isDir
 * @returns {LeftFile['kind']|null}
 */
function kindOf (name, isDir) {
  if (QUARANTINE_PATTERN.test(name)) return 'damaged'
  const m = FILE_PATTERN.exec(name)
  if (m) return m[2].endsWith('-wal') ? 'wal' : 'journal'
  return isDir ? null : 'other'
}

/**
 * Every journal, write-ahead-log and damaged (`.damaged-<ms>`) file anywhere under
 * `<stateDir>/journal/` (every sink's directory), with its line count. Any other file there is
 * listed too (kind 'other'): the audit must not be fooled by a name it does not know.
 * @param {string} stateDir
 * @returns {Promise<LeftFile[]>} sorted by path; [] when there is no journal directory
 */
async function leftOnDisk (stateDir) {
  const left = []
  const walk = async (dir) => {
    let entries
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch (err) {
      if (err.code === 'ENOENT') return
      throw err
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      const kind = kindOf(entry.name, entry.isDirectory())
      if (kind === null) {
        await walk(full) // a sink's own journal directory
        continue
      }
      const file = path.relative(stateDir, full)
      if (entry.isDirectory()) {
        left.push({ file, kind, lines: 0, type: 'directory' })
        continue
      }
      try {
        left.push({ file, kind, lines: await countFileLines(full, fsp) })
      } catch (err) {
        if (err.code === 'ENOENT') continue // replayed and deleted while we looked
        left.push({ file, kind, lines: null, error: err.code || err.message })
      }
    }
  }
  await walk(path.join(stateDir, 'journal'))
  return left.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
}

/**
 * Files and lines of a listing, e.g. for a failure message or a report.
 * @param {LeftFile[]} left
 * @returns {{ files: number, lines: number }}
 */
function totals (left) {
  return { files: left.length, lines: left.reduce((n, f) => n + (f.lines || 0), 0) }
}

/**
 * One line per file: `journal/j-1-w1-17.ndjson: wal, 5000 lines`.
 * @param {string} stateDir
 * @param {LeftFile[]} left
 * @returns {string[]}
 */
function describeLeft (stateDir, left) {
  const size = (f) => (f.type === 'directory' ? 'a directory' : f.lines === null ? `unreadable (${f.error})` : `${f.lines} lines`)
  return left.map((f) => `${path.join(stateDir, f.file)}: ${f.kind}, ${size(f)}`)
}

/**
 * Asserts that no stopped host's state dir holds a journal, write-ahead-log or damaged file
 * (anything under `journal/`); the failure lists each file and its lines.
 * @param {string|string[]} stateDirs
 * @param {{ answered: number, test?: string, note?: string }} [audit] when given and something is left, the
 *   failure is recorded first (recordAudit, rows not counted), so a soak run says what was left
 * @returns {Promise<LeftFile[]>} [] (what was found, for recordAudit)
 */
async function expectNothingLeft (stateDirs, audit = undefined) {
  const all = []
  const listing = []
  for (const dir of [stateDirs].flat()) {
    const left = await leftOnDisk(dir)
    all.push(...left.map((f) => ({ ...f, file: path.join(dir, f.file) })))
    listing.push(...describeLeft(dir, left))
  }
  if (audit && all.length) recordAudit({ ...audit, rows: null, leftOnDisk: all })
  expect(listing).toEqual([])
  return all
}

/**
 * One GET of a host's /metrics.
 * @param {string} url
 * @returns {Promise<string>}
 */
function getText (url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        if (res.statusCode === 200) resolve(Buffer.concat(chunks).toString('utf8'))
        else reject(new Error(`${url} answered ${res.statusCode}`))
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 5000 ms`)))
    req.on('error', reject)
  })
}

/**
 * The idle gauges of one sink from a /metrics text (NaN for a series that is missing).
 * @param {string} text
 * @param {string} sink
 * @returns {Record<string, number>}
 */
function idleGauges (text, sink) {
  const lines = text.split('\n')
  return Object.fromEntries(IDLE_GAUGES.map((name) => {
    const want = `${name}{sink="${sink}"} `
    const line = lines.find((l) => l.startsWith(want))
    return [name, line === undefined ? NaN : Number(line.slice(want.length))]
  }))
}

/**
 * For a host still running: waits (bounded) until its sink's pending, queue depth, journal
 * pending and journal buffered gauges are all 0 on /metrics (summed over the workers by a
 * cluster primary), then asserts it, so a failure shows the figures. A missing gauge is not 0.
 * @param {number|string} admin the admin port on 127.0.0.1, or the admin base URL
 * @param {{ sink?: string, boundMs?: number }} [options] sink: default 'hbase'
 * @returns {Promise<Record<string, number>>} the gauges (all 0)
 */
async function expectIdle (admin, { sink = 'hbase', boundMs = 60000 } = {}) {
  const url = `${typeof admin === 'number' ? `http://127.0.0.1:${admin}` : admin}/metrics`
  const zeros = Object.fromEntries(IDLE_GAUGES.map((name) => [name, 0]))
  let gauges = {}
  const idle = () => Object.values(gauges).length > 0 && Object.values(gauges).every((v) => v === 0)
  await until(`${url}: sink ${sink} idle`, async () => {
    gauges = idleGauges(await getText(url).catch(() => ''), sink)
    return idle()
  }, boundMs, 100).catch(() => {})
  gauges = idleGauges(await getText(url), sink)
  expect(gauges).toEqual(zeros)
  return gauges
}

/**
 * Says what the audit found, on one line, and when env BEACON_SOAK_REPORT names a file, appends
 * it there as one JSON line (test/soak.js builds its tables from them).
 * @param {{ test?: string, note?: string, answered: number, rows: number|null, leftOnDisk?: LeftFile[]|null,
 *   idle?: Record<string, number> }} audit test: default the running jest test's name, `[note]` after it;
 *   rows: null when not counted (files were left);
 *   leftOnDisk: null for a host still running, whose gauges (idle) were checked instead
 * @returns {void}
 */
function recordAudit ({ test, note, answered, rows, leftOnDisk = null, idle = undefined }) {
  const name = (test || (typeof expect === 'function' ? expect.getState().currentTestName : '') || '?') + (note ? ` [${note}]` : '')
  const left = leftOnDisk ? totals(leftOnDisk) : null
  const where = left ? `left on disk ${left.files} files, ${left.lines} lines` : `host running${idle ? ', sink gauges 0' : ''}`
  const counted = rows === null ? 'rows not counted' : `rows ${rows} (${rows - answered >= 0 ? '+' : ''}${rows - answered})`
  console.log(`loss audit: ${name}: answered ${answered}, ${counted}; ${where}`)
  const file = process.env.BEACON_SOAK_REPORT
  if (!file) return
  const files = leftOnDisk ? leftOnDisk.slice(0, 20).map((f) => `${f.file} (${f.kind}, ${f.lines})`) : null
  const record = { test: name, answered, rows, left, files }
  fs.appendFileSync(file, JSON.stringify(record) + '\n')
}

module.exports = { leftOnDisk, totals, describeLeft, expectNothingLeft, expectIdle, idleGauges, recordAudit, IDLE_GAUGES }
