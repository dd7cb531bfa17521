'use strict'

const { MINUTE_MS, parseGroup } = require('../rollup/layout')
const { exactMinutes, coveredMinutes } = require('../rollup/read')
const { countLog, finishCount, variantKey } = require('./count')
const { createDistinctIds } = require('./distinct-ids')

/**
 * Exact counts from the rollups (../rollup/) where they can answer: the whole minutes of the
 * range from the per-minute counts (a marked minute, not counted yet, from its raw rows), the
 * part-minutes at either end and the minutes the rollups know nothing of (rows written while
 * rollups were off, or none) from the raw rows (./count.js), a scan per run of such minutes.
 * The answer is the scan's, to the row; only what is read differs: a day is 1,440 small rollup
 * reads instead of a day of rows.
 *
 * The rollups group by endpoint, id, status class, bot or person and variant, so a count filtered
 * on an exact status or grouped by status is not theirs to answer: eligible() says no and the
 * caller scans. A unique count reads every group (an id's, for one id) and counts its ids.
 */

/**
 * @param {import('./count').CountQuery} query
 * @returns {boolean}
 */
function eligible (query) {
  return query.status === undefined && query.by !== 'status' &&
    Math.ceil(query.from / MINUTE_MS) < Math.floor(query.to / MINUTE_MS)
}

/**
 * @param {import('./scan').LogSource & { concurrency?: number, maxGroups?: number, maxUniquePairs?: number }} source
 * @param {{ rollupTable: string, endpoints: string[] }} rollups where they are, and the
 *   endpoints an id filter reads the groups of
 * @param {import('./count').CountQuery} query eligible()
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {Promise<import('./count').CountResult & { rollupMinutes: number, scannedMinutes: number }>} rawFrom: the
 *   oldest time counted from raw rows (null: none were)
 */
async function countFromRollups (source, rollups, query, options = {}) {
  const { by, endpoint, id, unique = false } = query
  const midFrom = Math.ceil(query.from / MINUTE_MS) * MINUTE_MS
  const midTo = Math.floor(query.to / MINUTE_MS) * MINUTE_MS
  const maxGroups = source.maxGroups || 100000
  /** @type {Map<string, number>} group → rows */
  const groups = new Map()
  let truncated = false
  let total = 0
  let scanned = 0
  const distinct = unique ? createDistinctIds({ maxPairs: source.maxUniquePairs }) : null
  /** @param {string} key @param {number} n */
  const add = (key, n) => {
    if (!groups.has(key) && groups.size >= maxGroups) {
      truncated = true
      key = '(other)'
    }
    groups.set(key, (groups.get(key) || 0) + n)
  }
  const rollupSource = {
    client: source.client,
    rollupTable: rollups.rollupTable,
    logTable: source.table,
    buckets: source.buckets,
    timeout: source.timeout
  }
  // From the raw rows: the part-minutes at the ends, and each run of whole minutes the rollups
  // do not cover.
  const { covered, marked } = await coveredMinutes(rollupSource, midFrom, midTo)
  const raw = [[query.from, midFrom]]
  let scannedMinutes = 0
  for (let minute = midFrom; minute < midTo; minute += MINUTE_MS) {
    if (covered.has(minute)) continue
    scannedMinutes++
    const last = raw[raw.length - 1]
    if (raw.length > 1 && last[1] === minute) last[1] = minute + MINUTE_MS
    else raw.push([minute, minute + MINUTE_MS])
  }
  raw.push([midTo, query.to])
  // The oldest time counted from raw rows: what the retention may have taken (./horizon.js).
  let rawFrom = Infinity
  for (const [from, to] of raw) {
    if (from >= to) continue
    rawFrom = Math.min(rawFrom, from)
    const part = await countLog(source, { ...query, from, to }, { ...options, distinct: distinct ?? undefined })
    if (distinct !== null) continue
    total += part.total
    scanned += part.scanned
    for (const g of part.groups || []) add(g.key, g.count)
  }
  // The whole minutes: what the question needs of each (see exactMinutes).
  const want = id !== undefined
    ? { only: { endpoints: endpoint !== undefined ? [endpoint] : rollups.endpoints, id } }
    : by === 'id' || unique ? {} : { totals: true }
  // A minute's groups may come in parts (a partition's row each): minutes are told once.
  const fromRollups = new Set()
  const fromScans = new Set()
  for await (const minute of exactMinutes(rollupSource, midFrom, midTo, { ...want, marked })) {
    if (options.signal && options.signal.aborted) throw options.signal.reason
    if (!covered.has(minute.minute)) continue // counted from its raw rows above (rolled up since)
    if (minute.from === 'rollup') fromRollups.add(minute.minute)
    else {
      fromScans.add(minute.minute)
      rawFrom = Math.min(rawFrom, minute.minute)
    }
    for (const [qualifier, n] of minute.groups) {
      const g = parseGroup(qualifier)
      const unreadable = g.class === 'unreadable'
      if (endpoint !== undefined && (unreadable || g.endpoint !== endpoint)) continue
      if (id !== undefined && g.id !== id) continue
      const key = groupOf(g, unreadable, by, minute.minute)
      if (distinct !== null) {
        if (!unreadable && g.id !== '') distinct.add(key ?? '', g.id)
        continue
      }
      total += n
      if (key !== null) add(key, n)
    }
  }
  const rollupMinutes = fromRollups.size
  scannedMinutes += fromScans.size
  /** @type {import('./count').CountResult & { rollupMinutes: number, scannedMinutes: number }} */
  const result = { total, scanned, rollupMinutes, scannedMinutes, rawFrom: rawFrom === Infinity ? null : rawFrom }
  if (distinct !== null) {
    const counted = distinct.result()
    return finishCount({ ...result, total: counted.total, unique: true }, by, counted.groups, false)
  }
  return finishCount(result, by, groups, truncated)
}

/**
 * The key a rollup group counts under in a count `by` a field, as a scan's countGroupOf gives it.
 * @param {{ endpoint: string, id: string, class: string, bot: boolean, variant: string|null }} g a parseGroup()
 * @param {boolean} unreadable its rows were not entries' JSON
 * @param {string|undefined} by
 * @param {number} minute
 * @returns {string|null} null without `by`
 */
function groupOf (g, unreadable, by, minute) {
  if (by === 'minute') return new Date(minute).toISOString()
  if (by === undefined) return null
  if (unreadable) return '(unreadable)'
  if (by === 'endpoint') return g.endpoint
  if (by === 'id') return g.id === '' ? '(none)' : g.id
  if (by === 'bot') return g.bot ? 'bot' : 'human'
  return variantKey(g.variant, g.class === 'event')
}

module.exports = { eligible, countFromRollups }
