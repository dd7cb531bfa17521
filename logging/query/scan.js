'use strict'

const { logMatch, COLUMN } = require('./match')
const { mergeSorted } = require('./merge')
const { readAhead } = require('./read-ahead')
const { bucketRange, toRecord, compareRecords, keyTime } = require('./rows')

/**
 * @typedef {object} LogSource where the log is and how to read it
 * @property {{ scan: (table: string, opts: import('@beacon/hbase-client').ScanOptions) =>
 *   AsyncIterable<import('@beacon/hbase-client').Row>,
 *   scanBatches: (table: string, opts: import('@beacon/hbase-client').ScanOptions) =>
 *   AsyncIterable<import('@beacon/hbase-client').Row[]> }} client an HBase client (@beacon/hbase-client)
 * @property {string} table
 * @property {number} buckets salt buckets the writers use
 * @property {number} [caching] rows per scan RPC, and rows read ahead per bucket (default 500)
 * @property {number} [timeout] ms per HBase operation (opening each region's scanner)
 * @property {{ opened: () => void, closed: () => void }} [track] told when a bucket's scan
 *   starts and ends (stats)
 */

/**
 * @typedef {object} ScanQuery
 * @property {number} from epoch ms
 * @property {number} to epoch ms (excluded)
 * @property {string} [endpoint]
 * @property {string} [id]
 * @property {number} [status]
 * @property {number} [limit] rows at most
 * @property {string} [after] a row key: continue after it (the `key` of the last row of a page)
 */

/**
 * The matching rows of one bucket, in key (so time) order.
 * @param {LogSource} source
 * @param {number} bucket
 * @param {{ from: number, to: number, match: import('./match').LogMatch, caching: number }} range
 * @returns {AsyncGenerator<import('./rows').LogRecord, void, void>}
 */
async function * bucketRecords (source, bucket, { from, to, match, caching }) {
  const { startRow, stopRow } = bucketRange(bucket, from, to)
  if (source.track) source.track.opened()
  try {
    /** @type {import('@beacon/hbase-client').ScanOptions} */
    const opts = { startRow, stopRow, columns: [COLUMN], caching, timeout: source.timeout }
    if (match.filter) opts.filter = match.filter
    for await (const row of source.client.scan(source.table, opts)) {
      const record = toRecord(row)
      if (match.test(record.entry)) yield record
    }
  } finally {
    if (source.track) source.track.closed()
  }
}

/**
 * Streams the rows of [from, to) that match the query's filters, in time order across every
 * salt bucket (ties by row key): one scan per bucket, all running at once, each read ahead by
 * up to `caching` rows and merged by time. Memory stays bounded whatever the range: at most
 * about two pages per bucket. Ending the loop early closes every bucket's scanner.
 * @param {LogSource} source
 * @param {ScanQuery} query
 * @returns {AsyncGenerator<import('./rows').LogRecord, void, void>}
 */
async function * scanLog (source, query) {
  const limit = query.limit || Infinity
  const caching = Math.max(1, Math.min(source.caching || 500, limit))
  const match = logMatch(query)
  // A cursor continues where its row was: start at its time, skip what sorts up to it.
  const cursor = query.after ? { ts: keyTime(query.after), key: query.after, entry: null } : null
  const from = cursor ? Math.max(query.from, cursor.ts) : query.from
  if (from >= query.to) return
  const buckets = Array.from({ length: source.buckets }, (_, bucket) =>
    readAhead(bucketRecords(source, bucket, { from, to: query.to, match, caching }), caching))
  let n = 0
  for await (const record of mergeSorted(buckets, compareRecords)) {
    if (cursor && compareRecords(record, cursor) <= 0) continue
    yield record
    if (++n >= limit) return
  }
}

module.exports = { scanLog }
