'use strict'

const crypto = require('node:crypto')
const { logMatch, COLUMN } = require('./query/match')
const { bucketRange, toRecord } = require('./query/rows')
const { ROLLUP_FAMILY, minuteOf, rollupKey } = require('./rollup/layout')
const { recountMinute, throwFirst } = require('./rollup/recount')

const DELETE_BATCH = 500
const ROWS_PER_RPC = 1000

/**
 * @typedef {object} EraseTarget
 * @property {import('@beacon/hbase-client').HBaseClient} client
 * @property {string} table the access-log table
 * @property {number} buckets its salt buckets
 * @property {string|null} rollupTable where its rollups are (null: it keeps none)
 * @property {number} [timeout] ms per HBase call
 * @property {number} [batchSize] rows per delete (one Multi RPC per RegionServer)
 */

/**
 * @typedef {object} EraseResult
 * @property {number} found rows of the id in the range
 * @property {number} deleted rows deleted (0 in a dry run)
 * @property {number} minutes minutes those rows fall in (their rollups counted again)
 */

/**
 * Erases every access-log row of one id in [from, to): one scan per salt bucket, narrowed on the
 * RegionServer by the id's filter (./query/match.js; the exact test on each entry decides), the
 * rows deleted `batchSize` at a time as they are found. The ids are stored as given (privacy
 * modes change the address and the user agent only), so the id's filter finds them all.
 *
 * The rollups stay exact: the minutes of each batch are marked before its rows are deleted (a
 * crash after the deletes leaves them marked, and the rollup job counts them again), marked once
 * more after the last delete, and then counted again here from the rows left
 * (./rollup/recount.js), so `beacon log check` agrees afterwards. A minute the rollup job counts
 * meanwhile is counted after the deletes too (its newest mark came after them). A second run
 * finds nothing and changes nothing.
 * @param {EraseTarget} target
 * @param {{ id: string, from: number, to: number, dryRun?: boolean }} query
 * @param {{ signal?: AbortSignal }} [options] aborting stops between rows (what is deleted stays
 *   deleted, its minutes marked)
 * @returns {Promise<EraseResult>}
 */
async function eraseId (target, { id, from, to, dryRun = false }, { signal } = {}) {
  const { client, table, buckets, rollupTable, timeout, batchSize = DELETE_BATCH } = target
  const match = logMatch({ id })
  const marks = markWriter(target)
  /** @type {Set<number>} */
  const minutes = new Set()
  let found = 0
  let deleted = 0

  /** @param {string[]} keys */
  async function remove (keys) {
    if (rollupTable) await marks.write(keys.map((key) => minuteOf(Number(key.slice(2, 15)))))
    throwFirst(await client.multiDelete(table, keys.map((row) => ({ row })), { timeout }))
    deleted += keys.length
  }

  for (let bucket = 0; bucket < buckets; bucket++) {
    /** @type {string[]} */
    let batch = []
    const range = bucketRange(bucket, from, to)
    for await (const row of client.scan(table, {
      ...range,
      columns: [COLUMN],
      // scan takes null as no filter (scan.js: `!= null`); its JSDoc says Filter|undefined
      filter: /** @type {import('@beacon/hbase-client').Filter|undefined} */ (match.filter),
      caching: ROWS_PER_RPC,
      timeout
    })) {
      if (signal && signal.aborted) throw signal.reason
      const record = toRecord(row)
      if (!match.test(record.entry)) continue
      found++
      minutes.add(minuteOf(record.ts))
      if (dryRun) continue
      batch.push(record.key)
      if (batch.length >= batchSize) {
        await remove(batch)
        batch = []
      }
    }
    if (batch.length > 0) await remove(batch)
  }
  if (!dryRun && rollupTable && minutes.size > 0) {
    const touched = [...minutes].sort((a, b) => a - b)
    await marks.write(touched)
    for (const minute of touched) await recount(target, minute)
  }
  return { found, deleted, minutes: minutes.size }
}

/**
 * Marks minutes in the rollup table as the writers do (./rollup/marker.js), with qualifiers of
 * this erase's own.
 * @param {EraseTarget} target
 */
function markWriter ({ client, table, rollupTable, timeout }) {
  const token = `erase-${crypto.randomBytes(6).toString('hex')}`
  let seq = 0
  return {
    /** @param {number[]} minutes @returns {Promise<void>} */
    async write (minutes) {
      const qualifier = `${token}.${seq++}`
      const puts = [...new Set(minutes)].map((minute) => ({
        row: rollupKey('m', table, minute),
        cells: [{ family: ROLLUP_FAMILY, qualifier, value: '' }]
      }))
      throwFirst(await client.multiPut(/** @type {string} */ (rollupTable), puts, { timeout }))
    }
  }
}

/**
 * Counts one minute again with the marks it holds now; none left means the rollup job has
 * counted it since its last mark, which came after the deletes.
 * @param {EraseTarget} target
 * @param {number} minute
 */
async function recount ({ client, table, buckets, rollupTable, timeout }, minute) {
  const key = rollupKey('m', table, minute)
  const row = await client.get(/** @type {string} */ (rollupTable), key, { families: [ROLLUP_FAMILY], timeout })
  if (!row || row.cells.length === 0) return
  const where = { client, logTable: table, rollupTable: /** @type {string} */ (rollupTable), buckets, timeout }
  await recountMinute(where, { key, cells: row.cells })
}

module.exports = { eraseId }
