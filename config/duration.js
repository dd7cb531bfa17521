'use strict'

/**
 * Retention durations (`logSinks.<name>.retention`, `rollupRetention`): a whole number and a unit,
 * `30s`, `15m`, `12h`, `90d`, `2w`, or `forever`. They become HBase TTLs, which are whole seconds
 * in a Java int whose largest value means "forever" (HConstants.FOREVER), so a duration must be
 * at least a second and below that.
 */

const UNIT_SECONDS = /** @type {Readonly<Record<string, number>>} */ (
  Object.freeze({ s: 1, m: 60, h: 3600, d: 86400, w: 604800 })
)
const FOREVER = 'forever'
/** HBase's "no TTL" (Integer.MAX_VALUE seconds). */
const HBASE_FOREVER_SECONDS = 2147483647
const DURATION = /^([1-9][0-9]{0,9})([smhdw])$/
/** The settings schema's pattern (load.js checks the range with parseDuration). */
const DURATION_PATTERN = '^(forever|[1-9][0-9]{0,9}[smhdw])$'
const DURATION_HELP = 'a duration like 30s, 15m, 12h, 90d or 2w (at least 1s, under 68 years), or "forever"'

/**
 * @param {unknown} text
 * @returns {number|null|undefined} seconds; null for `forever`; undefined when invalid
 */
function parseDuration (text) {
  if (text === FOREVER) return null
  if (typeof text !== 'string') return undefined
  const m = DURATION.exec(text)
  if (!m) return undefined
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]]
  return seconds < HBASE_FOREVER_SECONDS ? seconds : undefined
}

/**
 * The shortest exact spelling of a TTL: 7776000 → `90d`, 90 → `90s`, null → `forever`.
 * @param {number|null} seconds
 * @returns {string}
 */
function formatDuration (seconds) {
  if (seconds === null || seconds >= HBASE_FOREVER_SECONDS) return FOREVER
  for (const unit of ['w', 'd', 'h', 'm']) {
    if (seconds % UNIT_SECONDS[unit] === 0) return `${seconds / UNIT_SECONDS[unit]}${unit}`
  }
  return `${seconds}s`
}

/**
 * What the settings' retentions get wrong past the schema's pattern: a duration longer than an
 * HBase TTL holds, and sinks that keep their rollups in one table (one TTL) with different
 * `rollupRetention`s. Runs on validated settings.
 * @param {Record<string, any>} logSinks
 * @param {(sinkName: string, key: string) => string} whereOf ' (in <file>)': where the key was set
 * @param {string[]} issues collects what is wrong
 */
function retentionIssues (logSinks, whereOf, issues) {
  /** @type {Map<string, { name: string, seconds: number|null|undefined }>} rollup table → first sink using it */
  const rollupTables = new Map()
  for (const [name, sink] of Object.entries(logSinks)) {
    if (sink.type !== 'hbase') continue
    for (const key of ['retention', 'rollupRetention']) {
      if (parseDuration(sink[key]) === undefined) {
        issues.push(`logSinks.${name}.${key} must be ${DURATION_HELP}${whereOf(name, key)}`)
      }
    }
    if (sink.rollups === false) continue
    const seconds = parseDuration(sink.rollupRetention)
    const first = rollupTables.get(sink.rollupTable)
    if (!first) {
      rollupTables.set(sink.rollupTable, { name, seconds })
    } else if (first.seconds !== seconds) {
      issues.push(`logSinks.${name}.rollupRetention differs from logSinks.${first.name}'s, ` +
        `and both keep their rollups in ${sink.rollupTable}: ` +
        `one table has one retention${whereOf(name, 'rollupRetention')}`)
    }
  }
}

module.exports = {
  retentionIssues,
  parseDuration,
  formatDuration,
  DURATION_PATTERN,
  DURATION_HELP,
  FOREVER,
  HBASE_FOREVER_SECONDS
}
