'use strict'

const { COLUMN } = require('./match')
const { bucketRange } = require('./rows')

/**
 * @typedef {object} BucketSource the access log, as a count reads it
 * @property {import('./scan').LogSource['client']} client
 * @property {string} table the access-log table
 * @property {number} buckets salt buckets the writers use
 * @property {number} caching rows per scan RPC
 * @property {number} [concurrency] buckets scanned at once (default 4: enough to keep the
 *   RegionServers busy, few enough for 2 cores)
 * @property {number} [timeout] ms per HBase operation (opening each region's scanner)
 * @property {{ opened: () => void, closed: () => void }} [track] told when a bucket's scan
 *   starts and ends (stats)
 */

/**
 * @typedef {object} BucketRange what each bucket's scan reads
 * @property {number} from epoch ms
 * @property {number} to epoch ms (excluded)
 * @property {boolean} [keysOnly] rows come back as their key alone (values do not travel)
 * @property {import('@beacon/hbase-client').Filter|null} [filter] a server-side narrowing
 */

/**
 * @typedef {object} BucketCount
 * @property {number} scanned rows HBase returned
 * @property {number} total rows counted (those the grouping did not turn away)
 * @property {Map<string, number>} groups group → rows
 * @property {boolean} truncated more distinct groups than maxGroups: the rest are under "(other)"
 */

/**
 * Counts the access-log rows of [from, to) by group: one scan per salt bucket, `concurrency`
 * buckets at a time, rows streamed through and only the counters kept. What a row counts as is
 * the caller's: `groupOfRow` gives its group, or null to leave it out (a row that does not match
 * a filter). One bucket failing, or the caller aborting, stops the other buckets' scans too;
 * the count rejects once every scan has ended (so none outlives it).
 * @param {BucketSource} source
 * @param {BucketRange} range
 * @param {(row: import('@beacon/hbase-client').Row) => string|null} groupOfRow
 * @param {{ signal?: AbortSignal, maxGroups?: number }} [options] aborting ends the scans
 *   (rejects with the reason); maxGroups: distinct groups kept (default no limit)
 * @returns {Promise<BucketCount>}
 */
async function countBuckets (source, { from, to, keysOnly = false, filter = null }, groupOfRow,
  { signal, maxGroups = Infinity } = {}) {
  /** @type {Map<string, number>} */
  const groups = new Map()
  let total = 0
  let scanned = 0
  let truncated = false
  /** @type {unknown} */
  let failure = null
  const stopped = () => failure !== null || Boolean(signal && signal.aborted)

  /** @param {number} bucket */
  async function countBucket (bucket) {
    const { startRow, stopRow } = bucketRange(bucket, from, to)
    /** @type {import('@beacon/hbase-client').ScanOptions} */
    const opts = { startRow, stopRow, columns: [COLUMN], caching: source.caching, keysOnly, timeout: source.timeout }
    if (filter) opts.filter = filter
    if (source.track) source.track.opened()
    try {
      for await (const row of source.client.scan(source.table, opts)) {
        if (stopped()) break
        scanned++
        let group = groupOfRow(row)
        if (group === null) continue
        total++
        if (!groups.has(group) && groups.size >= maxGroups) {
          truncated = true
          group = '(other)'
        }
        groups.set(group, (groups.get(group) || 0) + 1)
      }
    } finally {
      if (source.track) source.track.closed()
    }
  }

  let next = 0
  async function worker () {
    while (next < source.buckets && !stopped()) {
      try {
        await countBucket(next++)
      } catch (err) {
        if (failure === null) failure = err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(source.concurrency || 4, source.buckets) }, worker))
  if (failure !== null) throw failure
  if (signal && signal.aborted) throw signal.reason
  return { scanned, total, groups, truncated }
}

module.exports = { countBuckets }
