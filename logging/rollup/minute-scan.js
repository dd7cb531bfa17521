'use strict'

const { countBuckets } = require('../query/bucket-count')
const { MINUTE_MS, rollupGroupOf } = require('./layout')

// The rollup job runs in a serving worker, every minute, over every row written in it: what it
// holds at once (4 buckets' pages) sets how far V8 grows that worker's young generation.
// Counting 63k rows in a process of its own grew its RSS by ~52 MiB with 1,000 rows per RPC and
// by ~21 MiB with 200, in the same time (4 runs each).
const ROWS_PER_RPC = 200

/**
 * Counts the raw access-log rows of one minute by rollup group (layout.js rollupGroupOf): one
 * scan per salt bucket over [minute, minute + 60 s), a few buckets at a time
 * (../query/bucket-count.js). Rows stream through; only the counters are kept. A row whose value
 * is not an entry's JSON is counted in its own group (`["","","unreadable"]`), so the counts
 * always add up to the rows.
 * @param {{ scan: (table: string, opts: object) => AsyncIterable<import('../../lib/hbase/cells').Row> }} client
 * @param {{ logTable: string, buckets: number, minute: number, timeout?: number }} where
 * @returns {Promise<{ groups: Map<string, number>, rows: number }>}
 */
async function countMinute (client, { logTable, buckets, minute, timeout }) {
  const source = { client, table: logTable, buckets, caching: ROWS_PER_RPC, timeout }
  const { groups, scanned } = await countBuckets(source, { from: minute, to: minute + MINUTE_MS }, rollupGroupOfRow)
  return { groups, rows: scanned }
}

const UNREADABLE = JSON.stringify(['', '', 'unreadable'])

/**
 * The rollup group of a raw row, from its value (an entry's JSON; anything else: UNREADABLE).
 * @param {import('../../lib/hbase/cells').Row} row
 * @returns {string}
 */
function rollupGroupOfRow (row) {
  const value = row.cells[0] && row.cells[0].value
  if (!value) return UNREADABLE
  try {
    const entry = JSON.parse(value.toString('utf8'))
    return entry !== null && typeof entry === 'object' ? rollupGroupOf(entry) : UNREADABLE
  } catch {
    return UNREADABLE
  }
}

module.exports = { countMinute }
