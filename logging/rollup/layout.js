'use strict'

/**
 * The rollup table's layout: per-minute counts of the access log, and the marks that say a
 * minute got new rows and must be counted again. One rollup table serves any number of
 * access-log tables: every row key starts with the log table's name.
 *
 *   m/<log table>/<13-digit minute ms>   family r, one cell per mark: qualifier unique to the
 *                                        write that made it (`<writerId>.<seq>`), value empty
 *   g/<log table>/<pp>/<13-digit minute> family r, the counts of the groups whose id hashes to
 *                                        partition pp (2 hex digits, partitionOfId()): one cell
 *                                        per group, qualifier the group's JSON
 *                                        `[endpoint, id, class]` (a bot's with "bot"
 *                                        after the class), value the exact count
 *   c/<log table>/<13-digit minute ms>   the same before partitions (a row for every group of
 *                                        the minute): still read, summed with the g rows, and
 *                                        deleted when its minute is counted again
 *   t/<log table>/<13-digit minute ms>   the same minute's totals over every id: qualifier
 *                                        `[endpoint, "*", class]` and a bot's (totalsOf()) (a
 *                                        chart of a day reads a few cells a minute)
 *   a/<log table>/<13-digit minute ms>   the attempts to count a marked minute: one cell per
 *                                        attempt started, deleted once it is counted; a minute
 *                                        with too many is parked (roller.js)
 *
 * Why partitions: a minute of new visitors has as many groups as views. Partitioned by id, no
 * row holds more than a share of a minute's groups (HBase builds a row whole in a put), the job
 * counts one partition at a time (./group-counter.js), and an id's counts are all in one row a
 * minute, so a count of one id reads one partition, and a count by id adds up partitions whose
 * ids no other partition has.
 *
 * Why this is exact: a count is never incremented. A writer marks a minute after HBase
 * acknowledged its rows (so a mark always follows the rows it stands for), and the roller
 * recomputes a marked minute from a scan of the raw rows and writes the absolute counts, then
 * deletes the marks it read (only those: a mark made meanwhile stays, and the minute is counted
 * again). A replay, a retry or a duplicate write puts rows that exist already; counted again,
 * they are the same rows. Counts are written with the newest mark's HBase timestamp as their
 * cell version, so when two rollers race, the count from the later marks wins.
 */

const { ACCESS_LOG_STORAGE } = require('../access-log-layout')

const ROLLUP_FAMILY = 'r'
// Stored as the log is (../access-log-layout.js): its cells repeat their row key and JSON qualifiers.
const ROLLUP_STORAGE = ACCESS_LOG_STORAGE
const MINUTE_MS = 60000
/** The cell of an attempts row that says its minute is parked (roller.js); the others are attempts. */
const PARKED_QUALIFIER = 'parked'
/**
 * Partitions of a minute's groups (a power of two: partitionOfId masks). Fixed: a row's
 * partition is its ids' for good.
 */
const PARTITIONS = 64

/** @param {number} ms @returns {number} the start of its minute */
function minuteOf (ms) {
  return ms - (ms % MINUTE_MS)
}

/** @param {number} minute @returns {string} */
function pad (minute) {
  return String(minute).padStart(13, '0')
}

/**
 * @param {'m'|'c'|'t'|'a'} kind marks, counts before partitions, totals or attempts
 * @param {string} logTable
 * @param {number} minute minute start, epoch ms
 * @returns {string}
 */
function rollupKey (kind, logTable, minute) {
  return `${kind}/${logTable}/${pad(minute)}`
}

/**
 * The key of one partition's counts of one minute.
 * @param {string} logTable
 * @param {number} partition 0..PARTITIONS-1
 * @param {number} minute minute start, epoch ms
 * @returns {string}
 */
function groupsKey (logTable, partition, minute) {
  return `g/${logTable}/${partitionName(partition)}/${pad(minute)}`
}

/** @param {number} partition @returns {string} 2 hex digits */
function partitionName (partition) {
  return (partition < 16 ? '0' : '') + partition.toString(16)
}

/**
 * The partition an id's groups are counted in: FNV-1a of its UTF-16 code units, masked. Part of
 * the stored layout: never change it.
 * @param {string} id '' for none
 * @returns {number} 0..PARTITIONS-1
 */
function partitionOfId (id) {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return (hash >>> 0) & (PARTITIONS - 1)
}

/**
 * @param {string} key a rollupKey or groupsKey
 * @returns {number} its minute
 */
function minuteOfRollupKey (key) {
  return Number(key.slice(-13))
}

/**
 * The minute of an access-log row, read from its key (salt bucket, then 13-digit epoch ms).
 * @param {string} rowKey
 * @returns {number}
 */
function minuteOfLogRow (rowKey) {
  return minuteOf(Number(rowKey.slice(2, 15)))
}

/**
 * A group's qualifier: JSON `[endpoint, id, class]` for people, `[endpoint, id, class, "bot"]`
 * for bots (logging/bot-agent.js), so the counts written before bots were told apart read as
 * people's, which is what they were counted as. A view a rollout variant was served (or an
 * event that names the variant the page showed) has five: `[endpoint, id, class, "human"|"bot",
 * variant]`, so the counts written before variants read as no variant's.
 * @param {string} endpoint
 * @param {string} id '*' for a total over ids
 * @param {string} cls
 * @param {boolean} bot
 * @param {string|null} [variant]
 * @returns {string}
 */
function qualifierOf (endpoint, id, cls, bot, variant = null) {
  if (variant !== null) return JSON.stringify([endpoint, id, cls, bot ? 'bot' : 'human', variant])
  return JSON.stringify(bot ? [endpoint, id, cls, 'bot'] : [endpoint, id, cls])
}

/**
 * The rollup group an entry is counted in: endpoint, id ('' when none), status class ('2xx';
 * an event beacon: 'event'), whether a bot sent it, and the variant (a view's: the rollout's
 * that chose its config; an event's: the one the page says it showed).
 * @param {{ endpoint?: unknown, id?: unknown, status?: unknown, event?: unknown, bot?: unknown,
 *   variant?: unknown }} entry
 * @returns {string} the group's qualifier (qualifierOf)
 */
function rollupGroupOf (entry) {
  const cls = typeof entry.status === 'number'
    ? `${Math.floor(entry.status / 100)}xx`
    : typeof entry.event === 'string' ? 'event' : 'other'
  const variant = typeof entry.variant === 'string' ? entry.variant : null
  return qualifierOf(String(entry.endpoint ?? ''), entry.id == null ? '' : String(entry.id), cls, entry.bot === true, variant)
}

/**
 * @param {string} qualifier a rollupGroupOf() qualifier
 * @returns {{ endpoint: string, id: string, class: string, bot: boolean, variant: string|null }}
 */
function parseGroup (qualifier) {
  const [endpoint, id, cls, who, variant] = JSON.parse(qualifier)
  return { endpoint, id, class: cls, bot: who === 'bot', variant: typeof variant === 'string' ? variant : null }
}

/**
 * A minute's counts summed over ids: by endpoint, class, people or bots, and variant.
 * @param {Map<string, number>} groups rollupGroupOf() qualifier → count
 * @returns {Map<string, number>} `[endpoint, "*", class]` (and `[..., "bot"]`) → count
 */
function totalsOf (groups) {
  const totals = new Map()
  for (const [group, n] of groups) {
    const { endpoint, class: cls, bot, variant } = parseGroup(group)
    const key = qualifierOf(endpoint, '*', cls, bot, variant)
    totals.set(key, (totals.get(key) || 0) + n)
  }
  return totals
}

/** Every class rollupGroupOf() gives. */
const CLASSES = Object.freeze(['1xx', '2xx', '3xx', '4xx', '5xx', 'event', 'other'])

/**
 * The beginnings of the qualifiers of one id's groups, over these endpoints: what a count of one
 * id reads of its partition (with a column-prefix filter: its variants are not known ahead).
 * Names are safe (lib/names.js), so JSON writes them as they are.
 * @param {string[]} endpoints
 * @param {string} id
 * @returns {string[]}
 */
function groupPrefixesOfId (endpoints, id) {
  return endpoints.map((endpoint) => JSON.stringify([endpoint, id]).slice(0, -1) + ',')
}

module.exports = {
  ROLLUP_FAMILY,
  ROLLUP_STORAGE,
  MINUTE_MS,
  PARTITIONS,
  PARKED_QUALIFIER,
  CLASSES,
  groupsKey,
  partitionOfId,
  minuteOf,
  rollupKey,
  minuteOfRollupKey,
  minuteOfLogRow,
  rollupGroupOf,
  qualifierOf,
  parseGroup,
  totalsOf,
  groupPrefixesOfId
}
