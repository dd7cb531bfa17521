'use strict'

const { ROLLUP_FAMILY, MINUTE_MS, minuteOf, rollupKey, minuteOfRollupKey, totalsOf } = require('./layout')
const { countMinute } = require('./minute-scan')

/**
 * @typedef {object} RollupSource
 * @property {{ scan: (table: string, opts: any) => AsyncIterable<import('../../lib/hbase/cells').Row>,
 *   scanBatches: (table: string, opts: any) => AsyncIterable<import('../../lib/hbase/cells').Row[]> }} client an HBase client (lib/hbase)
 * @property {string} rollupTable
 * @property {string} logTable
 * @property {number} buckets the access log's salt buckets
 * @property {number} [timeout] ms per HBase call
 */

/**
 * The minutes of [from, to) that are marked: rows landed there that the rollups do not count yet.
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @returns {Promise<Set<number>>}
 */
async function markedMinutes ({ client, rollupTable, logTable, timeout }, from, to) {
  const marked = new Set()
  for await (const row of client.scan(rollupTable, {
    startRow: rollupKey('m', logTable, from),
    stopRow: rollupKey('m', logTable, to),
    families: [ROLLUP_FAMILY],
    keysOnly: true,
    timeout
  })) {
    marked.add(minuteOfRollupKey(row.row.toString('utf8')))
  }
  return marked
}

/**
 * The minutes of [from, to) the rollups know about: counted (a totals row) or marked. A minute
 * with neither had no row written by a writer that marks (none at all, or only rows written while
 * rollups were off): its count is the raw rows'.
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @returns {Promise<{ covered: Set<number>, marked: Set<number> }>} marked: for exactMinutes
 */
async function coveredMinutes (source, from, to) {
  const marked = await markedMinutes(source, from, to)
  const covered = new Set(marked)
  const { client, rollupTable, logTable, timeout } = source
  for await (const row of client.scan(rollupTable, {
    startRow: rollupKey('t', logTable, from),
    stopRow: rollupKey('t', logTable, to),
    families: [ROLLUP_FAMILY],
    keysOnly: true,
    timeout
  })) {
    covered.add(minuteOfRollupKey(row.row.toString('utf8')))
  }
  return { covered, marked }
}

/**
 * The rollup rows of [from, to), minute by minute, streamed: the counts by group, or the
 * totals by endpoint and class (layout.js).
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @param {'c'|'t'} [kind] counts (default) or totals
 * @param {string[]} [columns] only these cells ("r:<group>"); default all
 * @returns {AsyncGenerator<{ minute: number, groups: Map<string, number> }>}
 */
async function * rolledMinutes ({ client, rollupTable, logTable, timeout }, from, to, kind = 'c', columns) {
  const select = columns ? { columns } : { families: [ROLLUP_FAMILY] }
  for await (const row of client.scan(rollupTable, {
    startRow: rollupKey(kind, logTable, from),
    stopRow: rollupKey(kind, logTable, to),
    ...select,
    timeout
  })) {
    const groups = new Map()
    for (const cell of row.cells) groups.set(cell.qualifier, Number(cell.value.toString('utf8')))
    yield { minute: minuteOfRollupKey(row.row.toString('utf8')), groups }
  }
}

/**
 * Exact per-minute counts of [from, to) (whole minutes): the rollups where a minute is counted
 * and not marked since, a scan of the raw rows where it is marked (counted again soon). What is
 * read of a rollup is what the question needs: the totals row (a few cells a minute) for counts
 * by endpoint and class, chosen groups (an id's, a few cells) or every group (one cell per id
 * seen in the minute: a count by id).
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @param {{ totals?: boolean, groups?: string[]|null, marked?: Set<number> }} [want] totals: by
 *   endpoint and class (totalsOf keys); groups: only these group qualifiers; neither: every
 *   group; marked: the marked minutes when the caller has read them already
 * @returns {AsyncGenerator<{ minute: number, groups: Map<string, number>, from: 'rollup'|'scan' }>}
 */
async function * exactMinutes (source, from, to, { totals = false, groups = null, marked: known } = {}) {
  if (from % MINUTE_MS || to % MINUTE_MS) throw new RangeError('exactMinutes takes whole minutes')
  const marked = known || await markedMinutes(source, from, to)
  const shape = (all) => {
    if (totals) return totalsOf(all)
    if (!groups) return all
    return new Map(groups.filter((g) => all.has(g)).map((g) => [g, all.get(g)]))
  }
  const scanned = async (minute) => ({
    minute,
    groups: shape((await countMinute(source.client, { ...source, minute })).groups),
    from: /** @type {const} */ ('scan')
  })
  const pending = [...marked].sort((a, b) => a - b)
  const rolled = rolledMinutes(
    source,
    from,
    to,
    totals ? 't' : 'c',
    groups && !totals ? groups.map((g) => `${ROLLUP_FAMILY}:${g}`) : undefined
  )
  for await (const minute of rolled) {
    while (pending.length && pending[0] < minute.minute) yield await scanned(pending.shift())
    if (pending[0] === minute.minute) yield await scanned(pending.shift())
    else yield { ...minute, from: /** @type {const} */ ('rollup') }
  }
  while (pending.length) yield await scanned(pending.shift())
}

/**
 * Compares the rollups of [from, to) with a scan of the raw rows, minute by minute.
 * @param {RollupSource} source
 * @param {number} from epoch ms (rounded down to its minute)
 * @param {number} to epoch ms (rounded up)
 * @returns {Promise<{ minutes: number, rows: number, marked: number[],
 *   differences: Array<{ minute: string, group: string, raw: number, rollup: number }> }>}
 *   marked: minutes not counted yet (their differences are expected until the roller gets there)
 */
async function checkRollups (source, from, to) {
  const first = minuteOf(from)
  const last = minuteOf(to + MINUTE_MS - 1)
  const marked = await markedMinutes(source, first, last)
  const rolled = new Map()
  for await (const { minute, groups } of rolledMinutes(source, first, last)) rolled.set(minute, groups)
  const differences = []
  let rows = 0
  for (let minute = first; minute < last; minute += MINUTE_MS) {
    const raw = await countMinute(source.client, { ...source, minute })
    rows += raw.rows
    const counted = rolled.get(minute) || new Map()
    for (const group of new Set([...raw.groups.keys(), ...counted.keys()])) {
      const a = raw.groups.get(group) || 0
      const b = counted.get(group) || 0
      if (a !== b) differences.push({ minute: new Date(minute).toISOString(), group, raw: a, rollup: b })
    }
  }
  return { minutes: (last - first) / MINUTE_MS, rows, marked: [...marked].sort((a, b) => a - b), differences }
}

module.exports = { markedMinutes, coveredMinutes, rolledMinutes, exactMinutes, checkRollups }
