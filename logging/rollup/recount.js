'use strict'

const { ROLLUP_FAMILY, PARTITIONS, rollupKey, groupsKey, minuteOfRollupKey } = require('./layout')
const { countMinutePartitions } = require('./minute-scan')

// Cells per write: a partition of a busy minute goes in several puts of one row (its cells add
// up), and small partitions share one, so no request to HBase grows with the minute.
const CELLS_PER_PUT = 5000

/**
 * @typedef {object} RecountTarget
 * @property {import('@beacon/hbase-client').HBaseClient} client
 * @property {string} logTable
 * @property {string} rollupTable
 * @property {number} buckets the access log's salt buckets
 * @property {number} [timeout] ms per HBase call
 * @property {number} [maxGroups] groups held in memory at once (./group-counter.js)
 * @property {string} [spillDir] where the rest wait
 */

/**
 * Counts one marked minute again from its raw rows and clears the marks read (layout.js says
 * why this is exact). The new counts are written with the newest mark's HBase timestamp as their
 * version, and the minute's previous counts are deleted up to the version before it, so a group
 * that has no rows any more (an id erased: ../erase.js) leaves no count behind, while counts a
 * later roller writes (from later marks, so a later version) stay whatever the order the writes
 * land in. The row of counts from before partitions is deleted up to this version: nothing
 * writes it any more.
 * @param {RecountTarget} target
 * @param {{ key: string, cells: Array<{ qualifier: string, timestamp: number }> }} marked the
 *   minute's mark row as read
 * @returns {Promise<number>} raw rows counted
 */
async function recountMinute ({ client, logTable, rollupTable, buckets, timeout, maxGroups, spillDir }, marked) {
  const minute = minuteOfRollupKey(marked.key)
  const version = Math.max(...marked.cells.map((c) => c.timestamp))
  const { counter, rows } = await countMinutePartitions(client, { logTable, buckets, minute, timeout },
    { maxGroups, spillDir })
  const totals = rollupKey('t', logTable, minute)
  try {
    const previous = Array.from({ length: PARTITIONS }, (_, p) => ({
      row: groupsKey(logTable, p, minute),
      timestamp: version - 1
    }))
    previous.push({ row: totals, timestamp: version - 1 },
      { row: rollupKey('c', logTable, minute), timestamp: version })
    throwFirst(await client.multiDelete(rollupTable, previous, { timeout }))
    /** @type {Array<{ row: string, cells: ReturnType<typeof countCells> }>} */
    let puts = []
    let cells = 0
    const send = async () => {
      if (puts.length) throwFirst(await client.multiPut(rollupTable, puts, { timeout }))
      puts = []
      cells = 0
    }
    for await (const { partition, groups } of counter.partitions()) {
      const list = [...groups]
      for (let at = 0; at < list.length; at += CELLS_PER_PUT) {
        const part = list.slice(at, at + CELLS_PER_PUT)
        if (cells + part.length > CELLS_PER_PUT) await send()
        puts.push({ row: groupsKey(logTable, partition, minute), cells: countCells(part, version) })
        cells += part.length
      }
    }
    const sums = [...counter.totals()]
    if (sums.length) puts.push({ row: totals, cells: countCells(sums, version) })
    await send()
  } finally {
    await counter.close()
  }
  await client.delete(rollupTable, marked.key, {
    columns: marked.cells.map((c) => `${ROLLUP_FAMILY}:${c.qualifier}`),
    timeout
  })
  return rows
}

/**
 * @param {Array<[string, number]>} counts qualifier → rows
 * @param {number} version
 */
function countCells (counts, version) {
  const qualifiers = qualifierBytes(counts)
  return counts.map(([, n], i) => ({
    family: ROLLUP_FAMILY,
    qualifier: qualifiers[i],
    value: countBytes(n),
    timestamp: version
  }))
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
