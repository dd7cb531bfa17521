'use strict'

// What test/soak.js prints and writes: per fault-test file, its runs, the loss audits each run
// recorded (test/support/loss-audit.js) and the first error lines of the runs that failed.

/**
 * @typedef {{ test: string, answered: number, rows: number|null, left: { files: number, lines: number }|null,
 *   files: string[]|null }} AuditRecord
 * @typedef {{ run: number, passed: boolean, code: number|null, signal: string|null, timedOut: boolean, ms: number,
 *   audits: AuditRecord[], errors: string[], log: string }} RunResult
 */

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g

/**
 * The audit records of one run (one JSON object a line; a line cut short by a killed run is
 * skipped).
 * @param {string} text
 * @returns {AuditRecord[]}
 */
function parseAudits (text) {
  return text.split('\n').filter(Boolean).flatMap((line) => {
    try {
      return [JSON.parse(line)]
    } catch {
      return []
    }
  })
}

/**
 * The first failure of a jest run's output: the `● <test>` line and the lines of its message
 * after it, up to `max` lines in all.
 * @param {string} output
 * @param {number} [max]
 * @returns {string[]} [] when jest reported no failed test
 */
function firstErrorLines (output, max = 8) {
  const lines = output.replace(ANSI, '').split('\n')
  const at = lines.findIndex((l) => /^\s+● (?!Console)/.test(l))
  if (at === -1) return []
  return lines.slice(at, at + 40).filter((l) => l.trim() !== '').slice(0, max).map((l) => l.trimEnd())
}

/**
 * What was left on disk, as a table cell.
 * @param {AuditRecord} a
 * @returns {string}
 */
function leftCell (a) {
  if (!a.left) return 'host running, gauges 0'
  return a.left.files === 0 ? '0' : `${a.left.files} files, ${a.left.lines} lines`
}

/**
 * Markdown cells may not hold a pipe or a newline.
 * @param {string} text
 * @returns {string}
 */
function cell (text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

/**
 * The result of one run, as a table cell.
 * @param {RunResult} r
 * @returns {string}
 */
function outcome (r) {
  if (r.timedOut) return 'FAIL (timed out)'
  if (r.passed) return 'pass'
  return `FAIL (${r.signal || `exit ${r.code}`})`
}

/**
 * The markdown report: one table per fault-test file (each run's audits, one row each), then
 * the failing runs' first error lines.
 * @param {{ started: string, runs: number, files: Array<{ name: string, results: RunResult[] }> }} soak
 * @returns {string[]} lines
 */
function soakMarkdown ({ started, runs, files }) {
  const how = '`npx jest --selectProjects faults --runInBand`'
  const out = [`# Fault-test soak, ${started}`, '', `${runs} runs of each file, one after the other (${how}).`, '']
  out.push('| file | runs | failed |', '|---|---|---|')
  for (const f of files) out.push(`| ${f.name} | ${f.results.length} | ${f.results.filter((r) => !r.passed).length} |`)
  for (const f of files) {
    out.push('', `## ${f.name}: ${f.results.length} runs, ${f.results.filter((r) => !r.passed).length} failed`, '')
    out.push('| run | result | s | test | answered | rows | left on disk |', '|---|---|---|---|---|---|---|')
    for (const r of f.results) {
      const head = `| ${r.run} | ${outcome(r)} | ${Math.round(r.ms / 1000)} `
      if (r.audits.length === 0) out.push(`${head}| (no audit recorded) | | | |`)
      r.audits.forEach((a, i) => {
        const rows = a.rows === null ? 'not counted' : a.rows
        out.push(`${i === 0 ? head : '| | | '}| ${cell(a.test)} | ${a.answered} | ${rows} | ${cell(leftCell(a))} |`)
      })
    }
    const failed = f.results.filter((r) => !r.passed)
    if (failed.length === 0) continue
    out.push('', `Failing runs of ${f.name}, first error lines:`, '')
    for (const r of failed) {
      const errors = r.errors.length ? r.errors : ['(no jest failure reported)']
      out.push(`- run ${r.run} (${outcome(r)}, output in \`${r.log}\`):`, '', '  ```', ...errors.map((l) => `  ${l}`), '  ```')
    }
  }
  return out
}

module.exports = { parseAudits, firstErrorLines, soakMarkdown }
