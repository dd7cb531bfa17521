'use strict'

const { MINUTE_MS } = require('./layout')
const { bucketRange } = require('../query/rows')
const { COLUMN } = require('../query/match')
const { groupKeyOfValue, groupsOfKeys, UNREADABLE } = require('./group-keys')
const { createGroupCounter } = require('./group-counter')

// The rollup job runs in a process of its own (server.js), so what it holds at once is its own
// heap's business, capped by settings.rollupJob.maxOldSpaceMiB. One bucket at a time, 2,000 rows
// per RPC (~700 KiB of answer): against 200 per RPC, a tenth of the scan RPCs, their syscalls and
// their round trips, for ~1 MiB more heap while one is being counted.
const ROWS_PER_RPC = 2000

/**
 * Counts the raw access-log rows of one minute by group key (./group-keys.js): one scan per salt
 * bucket over [minute, minute + 60 s), one bucket at a time, an RPC's rows at once
 * (client.scanBatches). Rows stream through; only the counters are kept. A row whose value is no
 * entry's JSON is counted under `["","","unreadable"]`, so the counts always add up to the rows.
 * @param {{ scanBatches: (table: string, opts: object) => AsyncIterable<import('@beacon/hbase-client').Row[]> }} client
 * @param {{ logTable: string, buckets: number, minute: number, timeout?: number }} where
 * @returns {Promise<{ keys: Map<string, number>, rows: number }>}
 */
async function countMinuteKeys (client, where) {
  /** @type {Map<string, number>} */
  const keys = new Map()
  const rows = await forEachKey(client, where, (key) => {
    keys.set(key, (keys.get(key) || 0) + 1)
    return null
  })
  return { keys, rows }
}

/**
 * Reads one minute's raw rows, bucket by bucket, and hands on each row's group key.
 * @param {Parameters<typeof countMinuteKeys>[0]} client
 * @param {Parameters<typeof countMinuteKeys>[1]} where
 * @param {(key: string) => Promise<void>|null} onKey a promise: waited for before the next row
 * @returns {Promise<number>} rows read
 */
async function forEachKey (client, { logTable, buckets, minute, timeout }, onKey) {
  let rows = 0
  for (let bucket = 0; bucket < buckets; bucket++) {
    const { startRow, stopRow } = bucketRange(bucket, minute, minute + MINUTE_MS)
    const scan = client.scanBatches(logTable, { startRow, stopRow, columns: [COLUMN], caching: ROWS_PER_RPC, timeout })
    for await (const batch of scan) {
      for (let i = 0; i < batch.length; i++) {
        const cell = batch[i].cells[0]
        const wait = onKey(groupKeyOfValue(cell && cell.value))
        if (wait) await wait
      }
      rows += batch.length
    }
  }
  return rows
}

/**
 * Counts the raw rows of one minute by group in bounded memory (./group-counter.js): what the
 * rollup job, `log check` and a count of a marked minute use. The caller reads
 * `counter.partitions()`, then `counter.totals()`, and closes the counter.
 * @param {Parameters<typeof countMinuteKeys>[0]} client
 * @param {Parameters<typeof countMinuteKeys>[1]} where
 * @param {Parameters<typeof createGroupCounter>[0]} [bound]
 * @returns {Promise<{ counter: ReturnType<typeof createGroupCounter>, rows: number }>}
 */
async function countMinutePartitions (client, where, bound = {}) {
  const counter = createGroupCounter(bound)
  try {
    const rows = await forEachKey(client, where, (key) => counter.add(key))
    return { counter, rows }
  } catch (err) {
    await counter.close()
    throw err
  }
}

/**
 * Counts the raw rows of one minute by rollup group (layout.js rollupGroupOf), and their totals
 * over ids (layout.js totalsOf), every group in memory at once: for a minute known to be small
 * (tests, benchmarks); the product counts through countMinutePartitions().
 * @param {Parameters<typeof countMinuteKeys>[0]} client
 * @param {Parameters<typeof countMinuteKeys>[1]} where
 * @returns {Promise<{ groups: Map<string, number>, totals: Map<string, number>, rows: number }>}
 */
async function countMinute (client, where) {
  const { keys, rows } = await countMinuteKeys(client, where)
  return { ...groupsOfKeys(keys), rows }
}

/**
 * The rollup group of a raw row (what countMinute counts it under).
 * @param {import('@beacon/hbase-client').Row} row
 * @returns {string} a rollupGroupOf() qualifier
 */
function rollupGroupOfRow (row) {
  const key = groupKeyOfValue(row.cells[0] && row.cells[0].value)
  return [...groupsOfKeys(new Map([[key, 1]])).groups.keys()][0]
}

module.exports = { countMinute, countMinuteKeys, countMinutePartitions, rollupGroupOfRow, UNREADABLE }
