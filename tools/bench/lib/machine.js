'use strict'

const os = require('node:os')

/**
 * What a benchmark ran on, for its report.
 * @param {object} [extra] fields to add (HBase version, topology...)
 * @returns {object}
 */
function describeMachine (extra = {}) {
  const cpus = os.cpus()
  return {
    cores: cpus.length,
    cpuModel: cpus[0] ? cpus[0].model.trim() : 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    ...extra
  }
}

/**
 * Percentile of an ascending array (nearest rank).
 * @param {number[]} sorted
 * @param {number} p 0..100
 * @returns {number}
 */
function percentile (sorted, p) {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length) - 1
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]
}

/** @returns {string} e.g. 2026-11-22T07-10-05 */
function timestampForFile (date = new Date()) {
  return date.toISOString().slice(0, 19).replace(/:/g, '-')
}

module.exports = { describeMachine, percentile, timestampForFile }
