'use strict'

/**
 * The HBase data layout shared by the server, the setup scripts and the benchmarks.
 *
 * Config table: row key = the id as a decimal string; one JSON cell `c:json` holding the whole
 * toggles object. One cell keeps an update atomic and a read to a single KeyValue; the cell's
 * timestamp is the config version (used for ETags).
 *
 * Access-log table: one row per entry, one JSON cell `l:e`. Row key = 2 hex chars of salt
 * bucket + 13-digit epoch ms + a writer-unique suffix, so writes spread over the pre-split
 * regions instead of hammering the last one, and each bucket stays time-ordered for scans.
 */

const CONFIG_FAMILY = 'c'
const CONFIG_QUALIFIER = 'json'
const ACCESS_LOG_FAMILY = 'l'
const ACCESS_LOG_QUALIFIER = 'e'
const DEFAULT_LOG_BUCKETS = 16
const DEFAULT_LOG_REGIONS = 8

/**
 * @param {number} bucket 0..255
 * @returns {string} two lowercase hex chars
 */
function bucketPrefix (bucket) {
  return (bucket < 16 ? '0' : '') + bucket.toString(16)
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
  CONFIG_FAMILY,
  CONFIG_QUALIFIER,
  ACCESS_LOG_FAMILY,
  ACCESS_LOG_QUALIFIER,
  DEFAULT_LOG_BUCKETS,
  DEFAULT_LOG_REGIONS,
  bucketPrefix,
  accessLogSplitKeys
}
