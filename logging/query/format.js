'use strict'

/**
 * Renders the rows a scan returns, one line each: NDJSON (the entry as stored, plus its row key)
 * or CSV (RFC 4180).
 */

/**
 * CSV columns: a request's fields and an event's, the time as ISO-8601 too, the row key, whether
 * a bot sent it and the config version served (last, so the columns before them keep their
 * places; empty for an entry from before they were recorded).
 */
const CSV_COLUMNS = Object.freeze([
  'ts', 'time', 'endpoint', 'id', 'status', 'event', 'variant', 'ms', 'ip', 'ua', 'ref', 'key', 'bot', 'version'
])

/**
 * One NDJSON line: the entry's own fields, `ts` always (from the row key when the entry lacks
 * it), and `key`, the row key (pass it as `after` to read on past this row). A row whose cell is
 * not an entry's JSON has `ts`, `key` and `unreadable: true` only.
 * @param {import('./rows').LogRecord} record
 * @returns {string} with its newline
 */
function ndjsonLine ({ ts, key, entry }) {
  const out = entry === null
    ? { ts, key, unreadable: true }
    : { ...entry, ts: typeof entry.ts === 'number' ? entry.ts : ts, key }
  return JSON.stringify(out) + '\n'
}

/**
 * A CSV field. Quoted when it holds a comma, quote or line break. A text that a spreadsheet
 * would run as a formula (starting with =, +, -, an at sign, a tab or a carriage return: user agents and
 * referers are whatever a client sent) gets a leading apostrophe, as OWASP advises for CSV
 * that people open in spreadsheets; numbers are written as they are.
 * @param {unknown} value
 * @returns {string}
 */
function csvField (value) {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  let text = typeof value === 'string' ? value : JSON.stringify(value)
  if (/^[=+\-@\t\r]/.test(text)) text = "'" + text
  return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text
}

/**
 * @returns {string} the CSV header line, with its line break
 */
function csvHeader () {
  return CSV_COLUMNS.join(',') + '\r\n'
}

/**
 * One CSV line (CRLF, as RFC 4180 has it); `ts` and `time` are the row key's time. An
 * unreadable row has its time and key only.
 * @param {import('./rows').LogRecord} record
 * @returns {string}
 */
function csvLine ({ ts, key, entry }) {
  /** @type {Record<string, unknown>} */
  const values = { ...entry, ts, time: new Date(ts).toISOString(), key }
  return CSV_COLUMNS.map((column) => csvField(values[column])).join(',') + '\r\n'
}

module.exports = { ndjsonLine, csvLine, csvHeader, csvField, CSV_COLUMNS }
