'use strict'

const { formatDuration } = require('../../config/duration')
const { horizons } = require('../retention')

/**
 * @typedef {object} CountHorizon what a count says of the retention (../retention.js)
 * @property {boolean} known false when the tables' TTLs could not be read (nothing else is said)
 * @property {string|null} [rows] the oldest time the raw rows are surely all there (ISO-8601; null:
 *   kept forever)
 * @property {string} [retention] the log table's TTL (`90d`, `forever`)
 * @property {string|null} [rollups] the same for the per-minute rollups (absent: no rollups)
 * @property {string} [rollupRetention]
 * @property {boolean} [complete] false when part of the range was counted from raw rows older than
 *   `rows`: HBase may have expired some, and the total would miss them
 */

/**
 * Whether a count may have missed rows that the retention took. Only raw rows can be missing:
 * a minute the rollups counted keeps its count for `rollupRetention`, and a minute whose count has
 * expired is no longer covered, so it is counted from its raw rows (and judged as raw).
 * @param {{ rawFrom?: number|null }} result the count (rawFrom: the oldest time counted from raw rows)
 * @param {import('../retention').Ttls|null} ttl null: not known
 * @param {number} now
 * @returns {CountHorizon}
 */
function countHorizon (result, ttl, now) {
  if (!ttl) return { known: false }
  const edge = horizons(ttl, now)
  /** @param {number|null} ms */
  const iso = (ms) => (ms === null ? null : new Date(Math.max(0, ms)).toISOString())
  /** @type {CountHorizon} */
  const horizon = { known: true, rows: iso(edge.rows), retention: formatDuration(ttl.log), complete: true }
  if (ttl.rollups !== undefined) {
    horizon.rollups = iso(edge.rollups)
    horizon.rollupRetention = formatDuration(ttl.rollups)
  }
  const rawFrom = result.rawFrom ?? null
  if (rawFrom !== null && edge.rows !== null && rawFrom < edge.rows) horizon.complete = false
  return horizon
}

module.exports = { countHorizon }
