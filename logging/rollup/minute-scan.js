'use strict'

const { countBuckets } = require('../query/bucket-count')
const { MINUTE_MS, rollupGroupOf } = require('./layout')

// The rollup job runs in a serving worker, every minute, over every row written in it, so what
// it holds at once sets how far V8 grows that worker's young generation. One bucket at a time,
// 200 rows per RPC: counting 63k rows over and over, a process of its own levelled off at
// +13-18 MiB RSS with 240-344 ms of CPU per count, against +54 MiB and 332-347 ms with 4 buckets
// at once; it takes ~420 ms instead of ~320. With 4 at once the worker running the job went past
// the memory cap in the fault test.
const ROWS_PER_RPC = 200
const BUCKETS_AT_ONCE = 1

/**
 * Counts the raw access-log rows of one minute by rollup group (layout.js rollupGroupOf): one
 * scan per salt bucket over [minute, minute + 60 s), one bucket at a time
 * (../query/bucket-count.js). Rows stream through; only the counters are kept. A row whose value
 * is not an entry's JSON is counted in its own group (`["","","unreadable"]`), so the counts
 * always add up to the rows.
 * @param {{ scan: (table: string, opts: object) => AsyncIterable<import('../../lib/hbase/cells').Row> }} client
 * @param {{ logTable: string, buckets: number, minute: number, timeout?: number }} where
 * @returns {Promise<{ groups: Map<string, number>, rows: number }>}
 */
async function countMinute (client, { logTable, buckets, minute, timeout }) {
  const source = { client, table: logTable, buckets, caching: ROWS_PER_RPC, concurrency: BUCKETS_AT_ONCE, timeout }
  const { groups, scanned } = await countBuckets(source, { from: minute, to: minute + MINUTE_MS }, rollupGroupOfRow)
  return { groups, rows: scanned }
}

const UNREADABLE = JSON.stringify(['', '', 'unreadable'])
const CLOSE_BRACE = 0x7d
// How every access entry begins (logging/access-entry.js: same keys, same order; endpoint and id
// are safe names, lib/names.js, so no escapes). 160 bytes hold it with room to spare.
const ENTRY_HEAD = /^\{"ts":\d+,"endpoint":"([A-Za-z0-9_-]*)","id":(?:"([A-Za-z0-9_-]*)"|null),"status":(\d+),/
const HEAD_BYTES = 160

/**
 * The rollup group of a raw row, from its value (an entry's JSON; anything else: UNREADABLE).
 * An access entry's group is read from its first bytes alone, since the job reads every row
 * written: a 63k-row count took 388–436 ms of CPU that way against 415–570 ms parsing each whole
 * entry, user agent and referer included (3 alternating runs of 10 counts; the scan's own
 * decoding is the rest, and the memory it grows is the same). Anything else (events, rows not
 * written by beacon) is parsed whole. A value taken by its head must also end like a JSON object.
 * @param {import('../../lib/hbase/cells').Row} row
 * @returns {string}
 */
function rollupGroupOfRow (row) {
  const value = row.cells[0] && row.cells[0].value
  if (!value || value.length === 0) return UNREADABLE
  if (value[value.length - 1] === CLOSE_BRACE) {
    const head = ENTRY_HEAD.exec(value.toString('latin1', 0, Math.min(value.length, HEAD_BYTES)))
    if (head !== null) return JSON.stringify([head[1], head[2] === undefined ? '' : head[2], `${Math.floor(Number(head[3]) / 100)}xx`])
  }
  try {
    const entry = JSON.parse(value.toString('utf8'))
    return entry !== null && typeof entry === 'object' ? rollupGroupOf(entry) : UNREADABLE
  } catch {
    return UNREADABLE
  }
}

module.exports = { countMinute, rollupGroupOfRow }
