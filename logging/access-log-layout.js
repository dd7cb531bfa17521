'use strict'

/**
 * The access-log table's layout in HBase, owned by the access-log pipeline and read by the
 * setup scripts and benchmarks.
 *
 * One row per entry, one JSON cell `l:e`. Row key = 2 hex chars of salt bucket + 13-digit epoch
 * ms + a writer-unique suffix, so writes spread over the pre-split regions instead of hammering
 * the last one, and each bucket stays time-ordered for scans.
 */

const ACCESS_LOG_FAMILY = 'l'
const ACCESS_LOG_QUALIFIER = 'e'
const DEFAULT_LOG_BUCKETS = 16
const DEFAULT_LOG_REGIONS = 8

/**
 * How HBase stores the log's family on disk: the attributes `hbase:up` creates the table with
 * (an existing table keeps its own). GZ alone: chosen from tools/bench/log-bytes.js's figures
 * (docs/access-log.md, "Size on disk"); it needs no codec beyond HBase's own, so any HBase reads
 * the tables, and a block encoding saves next to nothing once the blocks are compressed.
 */
const ACCESS_LOG_STORAGE = Object.freeze({ COMPRESSION: 'GZ' })

/**
 * @param {number} bucket 0..255
 * @returns {string} two lowercase hex chars
 */
function bucketPrefix (bucket) {
  return (bucket < 16 ? '0' : '') + bucket.toString(16)
}

/**
 * The row key of one entry. Fixed when the entry is accepted and kept through journal and
 * replay, so a repeated write overwrites the same row instead of adding one.
 * @param {number} bucket salt bucket, 0..255
 * @param {number} ts entry time, epoch ms (0 <= ts < 1e13)
 * @param {string} suffix unique among all writers of the table (`<writerId>-<seq>`)
 * @returns {string}
 */
function accessLogRowKey (bucket, ts, suffix) {
  return bucketPrefix(bucket) + String(ts).padStart(13, '0') + suffix
}

/**
 * Split keys that cut the access-log key space into `regions` ranges of whole buckets.
 * @param {number} [buckets]
 * @param {number} [regions]
 * @returns {string[]}
 */
function accessLogSplitKeys (buckets = DEFAULT_LOG_BUCKETS, regions = DEFAULT_LOG_REGIONS) {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 256) throw new RangeError('buckets must be 1..256')
  const n = Math.min(Math.max(1, regions | 0), buckets)
  const keys = []
  for (let i = 1; i < n; i++) keys.push(bucketPrefix(Math.floor((i * buckets) / n)))
  return keys
}

module.exports = {
  ACCESS_LOG_FAMILY,
  ACCESS_LOG_QUALIFIER,
  DEFAULT_LOG_BUCKETS,
  DEFAULT_LOG_REGIONS,
  ACCESS_LOG_STORAGE,
  bucketPrefix,
  accessLogRowKey,
  accessLogSplitKeys
}
