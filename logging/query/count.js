'use strict'

const { logMatch } = require('./match')
const { toRecord } = require('./rows')
const { countBuckets } = require('./bucket-count')
const { createDistinctIds } = require('./distinct-ids')

/** What `by` groups on. */
const GROUP_BY = Object.freeze(['endpoint', 'id', 'status', 'minute', 'bot', 'variant'])
const MINUTE_MS = 60 * 1000

/**
 * @typedef {object} CountQuery
 * @property {number} from epoch ms
 * @property {number} to epoch ms (excluded)
 * @property {string} [endpoint]
 * @property {string} [id]
 * @property {number} [status]
 * @property {'endpoint'|'id'|'status'|'minute'|'bot'|'variant'} [by] bot: groups `bot` and
 *   `human`; variant: the rollout variant a view was served, the one an event names
 * @property {boolean} [unique] count distinct ids, not rows (rows without an id are left out)
 * @property {boolean} [scan] read the raw rows even where the rollups could answer
 */

/**
 * @typedef {object} CountResult
 * @property {number} total rows that match; with `unique`, distinct ids
 * @property {boolean} [unique] the counts are of distinct ids (an id in two groups counts in each,
 *   once in the total)
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
 * rollups count it). By variant: variantKey().
 * @param {import('./rows').LogRecord} record
 * @param {string} by
 * @returns {string}
 */
function countGroupOf (record, by) {
  if (by === 'minute') return new Date(record.ts - (record.ts % MINUTE_MS)).toISOString()
  if (record.entry === null) return '(unreadable)'
  if (by === 'bot') return record.entry.bot === true ? 'bot' : 'human'
  if (by === 'variant') return variantKey(record.entry.variant, typeof record.entry.event === 'string')
  const value = record.entry[by]
  return value === undefined || value === null ? '(none)' : String(value)
}

/**
 * The key of a count by variant: the variant's name, `(none)` without one; an event's (what the
 * page says it showed) apart from the views', as `event:<name>`.
 * @param {unknown} variant
 * @param {boolean} event
 * @returns {string}
 */
function variantKey (variant, event) {
  const name = typeof variant === 'string' ? variant : '(none)'
  return event ? 'event:' + name : name
}

/**
 * Exact counts over [from, to) by scanning (./bucket-count.js: one scan per salt bucket,
 * `concurrency` buckets at a time, only the counters kept). Without filters, and by minute (the
 * time is in the row key), values do not travel: each row comes back as its key alone.
 * With `unique`, a row counts as its id in its group (./distinct-ids.js), into `options.distinct`
 * when the caller adds up several counts (the result's numbers are then the caller's to make).
 * @param {import('./scan').LogSource & { concurrency?: number, maxGroups?: number, maxUniquePairs?: number }} source
 * @param {CountQuery} query
 * @param {{ signal?: AbortSignal, distinct?: ReturnType<typeof createDistinctIds> }} [options]
 *   aborting ends the scans (rejects with the reason)
 * @returns {Promise<CountResult>}
 */
async function countLog (source, query, { signal, distinct } = {}) {
  const { by, unique = false } = query
  const match = logMatch(query)
  const keysOnly = match.any && !unique && (by === undefined || by === 'minute')
  const ids = unique ? distinct || createDistinctIds({ maxPairs: source.maxUniquePairs }) : null
  const counted = await countBuckets(
    { ...source, caching: source.caching || 2000 },
    { from: query.from, to: query.to, keysOnly, filter: match.filter },
    (row) => {
      const record = toRecord(row, !keysOnly)
      if (!match.test(record.entry)) return null
      const group = by === undefined ? '' : countGroupOf(record, by)
      if (ids === null) return group
      const id = record.entry === null ? null : record.entry.id
      if (typeof id === 'string' && id !== '') ids.add(group, id)
      return null
    },
    { signal, maxGroups: source.maxGroups || 100000 })
  if (ids !== null) {
    const { total, groups } = ids.result()
    return finishCount({ total, scanned: counted.scanned, unique: true }, by, groups, false)
  }
  return finishCount({ total: counted.total, scanned: counted.scanned }, by, counted.groups, counted.truncated)
}

/**
 * A count's groups, in the order its answer gives them: by minute in time order, the others by
 * count, largest first.
 * @template {CountResult} T
 * @param {T} result
 * @param {string|undefined} by
 * @param {Map<string, number>} groups
 * @param {boolean} truncated
 * @returns {T}
 */
function finishCount (result, by, groups, truncated) {
  if (by === undefined) return result
  result.groups = [...groups].map(([key, count]) => ({ key, count }))
  result.groups.sort(
    by === 'minute'
      ? (a, b) => (a.key < b.key ? -1 : 1)
      : (a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  )
  if (truncated) result.truncated = true
  return result
}

module.exports = { countLog, countGroupOf, finishCount, variantKey, GROUP_BY }
