'use strict'

const { bucketPrefix } = require('../access-log-layout')

/**
 * Access-log rows as the read side sees them (the layout is logging/access-log-layout.js: row
 * key = 2 hex chars of salt bucket + 13-digit epoch ms + writer-unique suffix; one JSON cell).
 */

/**
 * @typedef {object} LogRecord one row, read back
 * @property {number} ts epoch ms, from the row key (what the range and the order go by)
 * @property {string} key the row key (a cursor: `after` continues past it)
 * @property {Record<string, unknown>|null} entry the parsed entry; null when the cell is not a
 *   JSON object (or was not read: a keys-only count)
 */

/**
 * The row-key range of one salt bucket over [from, to).
 * @param {number} bucket
 * @param {number} from epoch ms
 * @param {number} to epoch ms (excluded)
 * @returns {{ startRow: string, stopRow: string }}
 */
function bucketRange (bucket, from, to) {
  const prefix = bucketPrefix(bucket)
  return { startRow: prefix + String(from).padStart(13, '0'), stopRow: prefix + String(to).padStart(13, '0') }
}

/**
 * @param {string} key a row key
 * @returns {number} its epoch ms
 */
function keyTime (key) {
  return Number(key.slice(2, 15))
}

/**
 * @param {Buffer|undefined} value the cell's value
 * @returns {Record<string, unknown>|null}
 */
function parseEntry (value) {
  if (!value || value.length === 0) return null
  try {
    const entry = JSON.parse(value.toString('utf8'))
    return entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? entry : null
  } catch {
    return null
  }
}

/**
 * @param {import('@beacon/hbase-client').Row} row
 * @param {boolean} [withValue] parse the entry (false: a keys-only read)
 * @returns {LogRecord}
 */
function toRecord (row, withValue = true) {
  const key = row.row.toString('latin1')
  return { ts: keyTime(key), key, entry: withValue ? parseEntry(row.cells[0] && row.cells[0].value) : null }
}

/**
 * Time order across buckets: by time, then by row key (unique per row).
 * @param {LogRecord} a
 * @param {LogRecord} b
 * @returns {number}
 */
function compareRecords (a, b) {
  return a.ts - b.ts || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
}

module.exports = { bucketRange, keyTime, parseEntry, toRecord, compareRecords }
