'use strict'

const { logMatch, COLUMN } = require('./match')
const { bucketRange, toRecord } = require('./rows')

/** What `by` groups on. */
const GROUP_BY = Object.freeze(['endpoint', 'id', 'status', 'minute'])
const MINUTE_MS = 60 * 1000

/**
 * @typedef {object} CountQuery
 * @property {number} from epoch ms
 * @property {number} to epoch ms (excluded)
 * @property {string} [endpoint]
 * @property {string} [id]
 * @property {number} [status]
 * @property {'endpoint'|'id'|'status'|'minute'} [by]
 * @property {boolean} [scan] read the raw rows even where the rollups could answer
 */

/**
 * @typedef {object} CountResult
 * @property {number} total rows that match
 * @property {Array<{ key: string, count: number }>} [groups] with `by`: minute groups in time
 *   order (ISO-8601 minutes), the others by count, largest first
 * @property {boolean} [truncated] with `by`: more distinct keys than maxGroups; the rest are
 *   counted under "(other)" (the total stays exact)
 * @property {number} [rollupMinutes] whole minutes answered from the rollups (./rollup-count.js)
 * @property {number} [scannedMinutes] whole minutes not counted by the rollups yet, scanned
 * @property {number} scanned rows HBase returned (the server-side filters' narrowing, before
 *   the exact test)
 */

/**
 * The group of one record. An entry without the field (an event has no status) is "(none)"; a
 * row whose cell is not an entry's JSON is "(unreadable)".
 * @param {import('./rows').LogRecord} record
 * @param {string} by
 * @returns {string}
 */
function groupOf (record, by) {
  if (by === 'minute') return new Date(record.ts - (record.ts % MINUTE_MS)).toISOString()
  if (record.entry === null) return '(unreadable)'
  const value = record.entry[by]
  return value === undefined || value === null ? '(none)' : String(value)
}

/**
 * Exact counts over [from, to) by scanning: one scan per salt bucket, `concurrency` buckets at a
 * time, rows streamed through and only the counters kept. Without filters, and by minute (the
 * time is in the row key), values do not travel: each row comes back as its key alone.
 * @param {import('./scan').LogSource & { concurrency?: number, maxGroups?: number }} source
 * @param {CountQuery} query
 * @param {{ signal?: AbortSignal }} [options] aborting ends the scans (rejects with the reason)
 * @returns {Promise<CountResult>}
 */
async function countLog (source, query, { signal } = {}) {
  const { by } = query
  const match = logMatch(query)
  const keysOnly = match.any && (by === undefined || by === 'minute')
  const maxGroups = source.maxGroups || 100000
  /** @type {Map<string, number>} */
  const groups = new Map()
  let total = 0
  let scanned = 0
  let truncated = false
  /** @type {unknown} */
  let failure = null
  // One bucket failing, or the caller aborting, stops the other buckets' scans too.
  const stopped = () => failure !== null || Boolean(signal && signal.aborted)

  const add = (key) => {
    if (!groups.has(key) && groups.size >= maxGroups) {
      truncated = true
      key = '(other)'
    }
    groups.set(key, (groups.get(key) || 0) + 1)
  }

  async function countBucket (bucket) {
    const { startRow, stopRow } = bucketRange(bucket, query.from, query.to)
    /** @type {import('../../lib/hbase/scan').ScanOptions} */
    const opts = { startRow, stopRow, columns: [COLUMN], caching: source.caching || 2000, keysOnly, timeout: source.timeout }
    if (match.filter) opts.filter = match.filter
    if (source.track) source.track.opened()
    try {
      for await (const row of source.client.scan(source.table, opts)) {
        if (stopped()) break
        scanned++
        const record = toRecord(row, !keysOnly)
        if (!match.test(record.entry)) continue
        total++
        if (by !== undefined) add(groupOf(record, by))
      }
    } finally {
      if (source.track) source.track.closed()
    }
  }

  let next = 0
  async function worker () {
    while (next < source.buckets && !stopped()) {
      try {
        await countBucket(next++)
      } catch (err) {
        if (failure === null) failure = err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(source.concurrency || 4, source.buckets) }, worker))
  if (failure !== null) throw failure
  if (signal && signal.aborted) throw signal.reason
  /** @type {CountResult} */
  const result = { total, scanned }
  if (by !== undefined) {
    result.groups = [...groups].map(([key, count]) => ({ key, count }))
    result.groups.sort(by === 'minute' ? (a, b) => (a.key < b.key ? -1 : 1) : (a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    if (truncated) result.truncated = true
  }
  return result
}

module.exports = { countLog, groupOf, GROUP_BY }
