'use strict'

const { logMatch } = require('./match')
const { toRecord } = require('./rows')
const { countBuckets } = require('./bucket-count')

/** What `by` groups on. */
const GROUP_BY = Object.freeze(['endpoint', 'id', 'status', 'minute', 'bot'])
const MINUTE_MS = 60 * 1000

/**
 * @typedef {object} CountQuery
 * @property {number} from epoch ms
 * @property {number} to epoch ms (excluded)
 * @property {string} [endpoint]
 * @property {string} [id]
 * @property {number} [status]
 * @property {'endpoint'|'id'|'status'|'minute'|'bot'} [by] bot: groups `bot` and `human`
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
 * @property {number|null} [rawFrom] from the rollups: the oldest time counted from raw rows (null:
 *   none were); a scan read every row from `from`
 * @property {import('./horizon').CountHorizon} [horizon] where the retention may have taken rows
 */

/**
 * The key a count `by` a field puts one record under. An entry without the field (an event has
 * no status) is "(none)"; a row whose cell is not an entry's JSON is "(unreadable)". By bot:
 * `bot` or `human` (an entry from before bots were told apart has no `bot`: a person's, as the
 * rollups count it).
 * @param {import('./rows').LogRecord} record
 * @param {string} by
 * @returns {string}
 */
function countGroupOf (record, by) {
  if (by === 'minute') return new Date(record.ts - (record.ts % MINUTE_MS)).toISOString()
  if (record.entry === null) return '(unreadable)'
  if (by === 'bot') return record.entry.bot === true ? 'bot' : 'human'
  const value = record.entry[by]
  return value === undefined || value === null ? '(none)' : String(value)
}

/**
 * Exact counts over [from, to) by scanning (./bucket-count.js: one scan per salt bucket,
 * `concurrency` buckets at a time, only the counters kept). Without filters, and by minute (the
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
  const counted = await countBuckets(
    { ...source, caching: source.caching || 2000 },
    { from: query.from, to: query.to, keysOnly, filter: match.filter },
    (row) => {
      const record = toRecord(row, !keysOnly)
      if (!match.test(record.entry)) return null
      return by === undefined ? '' : countGroupOf(record, by)
    },
    { signal, maxGroups: source.maxGroups || 100000 })
  /** @type {CountResult} */
  const result = { total: counted.total, scanned: counted.scanned }
  if (by !== undefined) {
    result.groups = [...counted.groups].map(([key, count]) => ({ key, count }))
    result.groups.sort(
      by === 'minute'
        ? (a, b) => (a.key < b.key ? -1 : 1)
        : (a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    )
    if (counted.truncated) result.truncated = true
  }
  return result
}

module.exports = { countLog, countGroupOf, GROUP_BY }
