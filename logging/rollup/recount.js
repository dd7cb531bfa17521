'use strict'

const { ROLLUP_FAMILY, rollupKey, minuteOfRollupKey, totalsOf } = require('./layout')
const { countMinute } = require('./minute-scan')

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
  const { groups, rows } = await countMinute(client, { logTable, buckets, minute, timeout })
  const counts = rollupKey('c', logTable, minute)
  const totals = rollupKey('t', logTable, minute)
  const cells = (of) => [...of].map(([group, n]) => ({ family: ROLLUP_FAMILY, qualifier: group, value: String(n), timestamp: version }))
  await Promise.all([
    client.multiDelete(rollupTable, [{ row: counts, timestamp: version - 1 }, { row: totals, timestamp: version - 1 }], { timeout })
      .then(throwFirst),
    groups.size > 0
      ? client.multiPut(rollupTable, [{ row: counts, cells: cells(groups) }, { row: totals, cells: cells(totalsOf(groups)) }], { timeout })
        .then(throwFirst)
      : null
  ])
  await client.delete(rollupTable, marked.key, {
    columns: marked.cells.map((c) => `${ROLLUP_FAMILY}:${c.qualifier}`),
    timeout
  })
  return rows
}

/** @param {Array<Error|null>} results */
function throwFirst (results) {
  const err = results.find(Boolean)
  if (err) throw err
}

module.exports = { recountMinute, throwFirst }
