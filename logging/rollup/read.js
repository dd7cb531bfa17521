'use strict'

const {
  ROLLUP_FAMILY, MINUTE_MS, PARTITIONS, PARKED_QUALIFIER, minuteOf, rollupKey, groupsKey, minuteOfRollupKey, parseGroup,
  partitionOfId, groupPrefixesOfId
} = require('./layout')
const { filters } = require('@beacon/hbase-client')
const { countMinutePartitions } = require('./minute-scan')

// Bytes per scan answer at most, as HBase's own client asks: a row of many groups then comes in
// parts (joined by the client), and the RegionServer never builds more than this for one answer.
const RESULT_BYTES = 2 * 1024 * 1024
// Differences a check lists (it counts them all).
const MAX_DIFFERENCES = 1000

/**
 * @typedef {{ endpoints: string[], id: string }} OneId the groups of one id on these endpoints
 *
 * @typedef {object} RollupSource
 * @property {{ scan: (table: string, opts: any) => AsyncIterable<import('@beacon/hbase-client').Row>,
 *   scanBatches: (table: string, opts: any) =>
 *     AsyncIterable<import('@beacon/hbase-client').Row[]> }} client an HBase client
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
 * The rows of counts of one key range, streamed: each row's minute and its cells.
 * @param {RollupSource} source
 * @param {string} startRow
 * @param {string} stopRow
 * @param {string[]} [prefixes] only the cells whose group starts so; default all
 * @returns {AsyncGenerator<{ minute: number, groups: Map<string, number> }>}
 */
async function * countRows ({ client, rollupTable, timeout }, startRow, stopRow, prefixes) {
  for await (const row of client.scan(rollupTable, {
    startRow,
    stopRow,
    families: [ROLLUP_FAMILY],
    filter: prefixes ? filters.columnPrefixes(prefixes) : undefined,
    maxResultSize: RESULT_BYTES,
    timeout
  })) {
    const groups = new Map()
    for (const cell of row.cells) groups.set(cell.qualifier, Number(cell.value.toString('utf8')))
    yield { minute: minuteOfRollupKey(row.row.toString('utf8')), groups }
  }
}

/**
 * The totals rows of [from, to), minute by minute (layout.js): counts by endpoint and class.
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @param {'t'} [kind] totals (the one kind read by minute; groups: rolledGroups())
 * @returns {AsyncGenerator<{ minute: number, groups: Map<string, number> }>}
 */
async function * rolledMinutes (source, from, to, kind = 't') {
  if (kind !== 't') throw new RangeError('rolledMinutes reads totals; groups are read with rolledGroups')
  yield * countRows(source, rollupKey('t', source.logTable, from), rollupKey('t', source.logTable, to))
}

/**
 * The counts by group of [from, to): first the rows from before partitions (partition -1), then
 * partition after partition, each in minute order. A minute comes once per row that holds some
 * of its groups; their groups never overlap but across the two layouts, which no minute has
 * both of once counted again. The groups of one id are in one partition: rows of other
 * partitions are not read when one id's groups are wanted, and of its partition's rows only the
 * cells of its groups leave the RegionServer.
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @param {OneId|null} [only] one id's groups; default every group
 * @returns {AsyncGenerator<{ minute: number, partition: number, groups: Map<string, number> }>}
 */
async function * rolledGroups (source, from, to, only = null) {
  const prefixes = only ? groupPrefixesOfId(only.endpoints, only.id) : undefined
  const { logTable } = source
  for await (const m of countRows(source, rollupKey('c', logTable, from), rollupKey('c', logTable, to), prefixes)) {
    yield { ...m, partition: -1 }
  }
  const partitions = only ? [partitionOfId(only.id)] : Array.from({ length: PARTITIONS }, (_, p) => p)
  for (const p of partitions) {
    for await (const m of countRows(source, groupsKey(logTable, p, from), groupsKey(logTable, p, to), prefixes)) {
      yield { ...m, partition: p }
    }
  }
}

/**
 * Exact counts of [from, to) (whole minutes): the rollups where a minute is counted and not
 * marked since, a count of the raw rows where it is marked (counted again soon). What is read
 * of a rollup is what the question needs: the totals row (a few cells a minute) for counts by
 * endpoint and class, chosen groups (an id's: one partition's row a minute) or every group (a
 * count by id). Totals come a minute at a time, in order; groups come in parts (a partition's
 * row, or a part of a marked minute's count) whose groups never overlap, so a caller adds them
 * up, and a minute may come more than once.
 * @param {RollupSource & { maxGroups?: number, spillDir?: string }} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @param {{ totals?: boolean, only?: OneId|null, marked?: Set<number> }} [want] totals: by
 *   endpoint, class and variant (totalsOf keys); only: one id's groups; neither: every group;
 *   marked: the marked minutes when the caller has read them already
 * @returns {AsyncGenerator<{ minute: number, groups: Map<string, number>, from: 'rollup'|'scan' }>}
 */
async function * exactMinutes (source, from, to, { totals = false, only = null, marked: known } = {}) {
  if (from % MINUTE_MS || to % MINUTE_MS) throw new RangeError('exactMinutes takes whole minutes')
  const marked = known || await markedMinutes(source, from, to)
  const pending = [...marked].filter((m) => m >= from && m < to).sort((a, b) => a - b)
  const prefixes = only ? groupPrefixesOfId(only.endpoints, only.id) : null
  // Only what the question reads is kept of a marked minute's groups: none for totals.
  const keep = totals
    ? () => false
    : prefixes ? (/** @type {string} */ g) => prefixes.some((p) => g.startsWith(p)) : null
  /**
   * The parts of a marked minute, counted from its raw rows.
   * @param {number} minute
   */
  async function * scanned (minute) {
    const bound = { maxGroups: source.maxGroups, spillDir: source.spillDir, keep }
    const { counter } = await countMinutePartitions(source.client, { ...source, minute }, bound)
    try {
      for await (const part of counter.partitions()) {
        yield { minute, groups: part.groups, from: /** @type {const} */ ('scan') }
      }
      if (totals) yield { minute, groups: counter.totals(), from: /** @type {const} */ ('scan') }
    } finally {
      await counter.close()
    }
  }
  if (totals) {
    for await (const minute of rolledMinutes(source, from, to, 't')) {
      while (pending.length && pending[0] < minute.minute) yield * scanned(/** @type {number} */ (pending.shift()))
      if (pending[0] === minute.minute) yield * scanned(/** @type {number} */ (pending.shift()))
      else yield { ...minute, from: /** @type {const} */ ('rollup') }
    }
  } else {
    for await (const row of rolledGroups(source, from, to, only)) {
      if (!marked.has(row.minute)) {
        yield { minute: row.minute, groups: row.groups, from: /** @type {const} */ ('rollup') }
      }
    }
  }
  while (pending.length) yield * scanned(/** @type {number} */ (pending.shift()))
}

/**
 * Compares the rollups of [from, to) with a count of the raw rows, minute by minute and
 * partition by partition, in bounded memory: lists the first differences, counts them all.
 * @param {RollupSource & { maxGroups?: number, spillDir?: string }} source
 * @param {number} from epoch ms (rounded down to its minute)
 * @param {number} to epoch ms (rounded up)
 * @returns {Promise<{ minutes: number, rows: number, marked: number[], parked: number[], differenceCount: number,
 *   unmarkedDifferences: number, differences: Array<{ minute: string, group: string, raw: number, rollup: number }> }>}
 *   marked: minutes not counted yet (their differences are expected until the roller gets
 *   there); parked: marked minutes the rollup job gave up on for now (roller.js)
 */
async function checkRollups (source, from, to) {
  const first = minuteOf(from)
  const last = minuteOf(to + MINUTE_MS - 1)
  const marked = await markedMinutes(source, first, last)
  const parked = await parkedMinutes(source, first, last)
  /** @type {Array<{ minute: string, group: string, raw: number, rollup: number }>} */
  const differences = []
  let differenceCount = 0
  let unmarkedDifferences = 0
  let rows = 0
  /** @param {number} minute @param {string} group @param {number} raw @param {number} rollup */
  const differ = (minute, group, raw, rollup) => {
    differenceCount++
    if (!marked.has(minute)) unmarkedDifferences++
    if (differences.length < MAX_DIFFERENCES) {
      differences.push({ minute: new Date(minute).toISOString(), group, raw, rollup })
    }
  }
  for (let minute = first; minute < last; minute += MINUTE_MS) {
    const byPartition = await legacyCounts(source, minute)
    const counted = await countMinutePartitions(source.client, { ...source, minute }, source)
    rows += counted.rows
    try {
      let open = -1
      /** @type {Map<string, number>} */
      let rolled = new Map()
      /** @param {number} upTo */
      const finish = async (upTo) => {
        for (; open < upTo; open++) {
          for (const [group, n] of rolled) differ(minute, group, 0, n)
          rolled = open + 1 < PARTITIONS ? await partitionCounts(source, open + 1, minute, byPartition) : new Map()
        }
      }
      for await (const part of counted.counter.partitions()) {
        await finish(part.partition)
        for (const [group, n] of part.groups) {
          const r = rolled.get(group) || 0
          rolled.delete(group)
          if (r !== n) differ(minute, group, n, r)
        }
      }
      await finish(PARTITIONS)
    } finally {
      await counted.counter.close()
    }
  }
  return {
    minutes: (last - first) / MINUTE_MS,
    rows,
    marked: [...marked].sort((a, b) => a - b),
    parked,
    differenceCount,
    unmarkedDifferences,
    differences
  }
}

/**
 * A minute's counts from before partitions, by the partition their ids now hash to.
 * @param {RollupSource} source
 * @param {number} minute
 * @returns {Promise<Map<number, Map<string, number>>>}
 */
async function legacyCounts (source, minute) {
  const byPartition = new Map()
  for await (const row of countRows(source, rollupKey('c', source.logTable, minute),
    rollupKey('c', source.logTable, minute + 1))) {
    for (const [group, n] of row.groups) {
      const p = partitionOfId(parseGroup(group).id)
      if (!byPartition.has(p)) byPartition.set(p, new Map())
      byPartition.get(p).set(group, n)
    }
  }
  return byPartition
}

/**
 * One partition's counts of one minute, those from before partitions added.
 * @param {RollupSource} source
 * @param {number} partition
 * @param {number} minute
 * @param {Map<number, Map<string, number>>} legacy legacyCounts()
 * @returns {Promise<Map<string, number>>}
 */
async function partitionCounts (source, partition, minute, legacy) {
  const groups = new Map(legacy.get(partition) || [])
  const key = groupsKey(source.logTable, partition, minute)
  for await (const row of countRows(source, key, key + '\0')) {
    for (const [group, n] of row.groups) groups.set(group, (groups.get(group) || 0) + n)
  }
  return groups
}

/**
 * The minutes of [from, to) the rollup job parked: marked minutes it failed to count too many
 * times (roller.js), tried again now and then.
 * @param {RollupSource} source
 * @param {number} from minute
 * @param {number} to minute (excluded)
 * @returns {Promise<number[]>} ascending
 */
async function parkedMinutes ({ client, rollupTable, logTable, timeout }, from, to) {
  const parked = []
  for await (const row of client.scan(rollupTable, {
    startRow: rollupKey('a', logTable, from),
    stopRow: rollupKey('a', logTable, to),
    columns: [`${ROLLUP_FAMILY}:${PARKED_QUALIFIER}`],
    timeout
  })) {
    if (row.cells.length) parked.push(minuteOfRollupKey(row.row.toString('utf8')))
  }
  return parked
}

/**
 * The parked minutes of one log, read at most once a minute: what `/readyz` shows.
 * @param {RollupSource & { now?: () => number, maxAgeMs?: number }} source
 * @returns {{ parked: () => Promise<number[]> }}
 */
function createParkedView ({ now = Date.now, maxAgeMs = MINUTE_MS, ...source }) {
  /** @type {{ at: number, minutes: Promise<number[]> }|null} */
  let cached = null
  return {
    parked () {
      if (!cached || now() - cached.at >= maxAgeMs) {
        const minutes = parkedMinutes(source, 0, 9999999999999 - MINUTE_MS)
        cached = { at: now(), minutes }
        minutes.catch(() => { if (cached && cached.minutes === minutes) cached = null })
      }
      return cached.minutes
    }
  }
}

module.exports = {
  createParkedView,
  markedMinutes,
  coveredMinutes,
  rolledMinutes,
  rolledGroups,
  exactMinutes,
  checkRollups,
  parkedMinutes
}
