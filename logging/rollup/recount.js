'use strict'

const { ROLLUP_FAMILY, rollupKey, minuteOfRollupKey } = require('./layout')
const { countMinuteKeys } = require('./minute-scan')
const { countsOfKeys } = require('./group-keys')

/**
 * @typedef {object} RecountTarget
 * @property {import('../../lib/hbase').HBaseClient} client
 * @property {string} logTable
 * @property {string} rollupTable
 * @property {number} buckets the access log's salt buckets
 * @property {number} [timeout] ms per HBase call
 */

/**
 * Counts one marked minute again from its raw rows and clears the marks read (layout.js says
 * why this is exact). The new counts are written with the newest mark's HBase timestamp as their
 * version, and the minute's previous counts are deleted up to the version before it, so a group
 * that has no rows any more (an id erased: ../erase.js) leaves no count behind, while counts a
 * later roller writes (from later marks, so a later version) stay whatever the order the writes
 * land in.
 * @param {RecountTarget} target
 * @param {{ key: string, cells: Array<{ qualifier: string, timestamp: number }> }} marked the
 *   minute's mark row as read
 * @returns {Promise<number>} raw rows counted
 */
async function recountMinute ({ client, logTable, rollupTable, buckets, timeout }, marked) {
  const minute = minuteOfRollupKey(marked.key)
  const version = Math.max(...marked.cells.map((c) => c.timestamp))
  const { keys, rows } = await countMinuteKeys(client, { logTable, buckets, minute, timeout })
  const { groups, totals: sums } = countsOfKeys(keys)
  const counts = rollupKey('c', logTable, minute)
  const totals = rollupKey('t', logTable, minute)
  const cells = (of) => {
    const list = Array.isArray(of) ? of : [...of]
    const qualifiers = qualifierBytes(list)
    return list.map(([, n], i) => ({ family: ROLLUP_FAMILY, qualifier: qualifiers[i], value: countBytes(n), timestamp: version }))
  }
  await Promise.all([
    client.multiDelete(rollupTable, [{ row: counts, timestamp: version - 1 }, { row: totals, timestamp: version - 1 }], { timeout })
      .then(throwFirst),
    groups.length > 0
      ? client.multiPut(rollupTable, [{ row: counts, cells: cells(groups) }, { row: totals, cells: cells(sums) }], { timeout })
        .then(throwFirst)
      : null
  ])
  await client.delete(rollupTable, marked.key, {
    columns: marked.cells.map((c) => `${ROLLUP_FAMILY}:${c.qualifier}`),
    timeout
  })
  return rows
}

/**
 * The qualifiers of a minute's counts as bytes: thousands a minute, each written once, so not
 * through the client's cache of names. Encoded at once and cut (when all are ASCII, as the
 * groups of beacon's own entries are), one Buffer each otherwise.
 * @param {Array<[string, number]>} counts
 * @returns {Buffer[]}
 */
function qualifierBytes (counts) {
  const text = counts.map(([qualifier]) => qualifier).join('')
  const all = Buffer.from(text, 'utf8')
  if (all.length !== text.length) return counts.map(([qualifier]) => Buffer.from(qualifier, 'utf8'))
  let at = 0
  return counts.map(([qualifier]) => all.subarray(at, (at += qualifier.length)))
}

const SMALL_COUNTS = Array.from({ length: 1024 }, (_, n) => Buffer.from(String(n)))

/** @param {number} n @returns {Buffer} a count as a cell value: its decimal digits */
function countBytes (n) {
  return n < SMALL_COUNTS.length ? SMALL_COUNTS[n] : Buffer.from(String(n))
}

/** @param {Array<Error|null>} results */
function throwFirst (results) {
  const err = results.find(Boolean)
  if (err) throw err
}

module.exports = { recountMinute, throwFirst }
