'use strict'

const { ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER, bucketPrefix } = require('../access-log-layout')
const { MINUTE_MS, groupOf } = require('./layout')

// Buckets scanned at once: enough to keep the RegionServers busy, few enough for 2 cores.
const PARALLEL_BUCKETS = 4

/**
 * Counts the raw access-log rows of one minute by group (layout.js groupOf): one scan per salt
 * bucket over [minute, minute + 60 s), a few buckets at a time. Rows stream through; only the
 * counters are kept. A row whose value is not an entry's JSON is counted in its own group
 * (`["","","unreadable"]`), so the counts always add up to the rows.
 * @param {{ scan: (table: string, opts: object) => AsyncIterable<import('../../lib/hbase/cells').Row> }} client
 * @param {{ logTable: string, buckets: number, minute: number, timeout?: number }} where
 * @returns {Promise<{ groups: Map<string, number>, rows: number }>}
 */
async function countMinute (client, { logTable, buckets, minute, timeout }) {
  const groups = new Map()
  let rows = 0
  const from = String(minute).padStart(13, '0')
  const to = String(minute + MINUTE_MS).padStart(13, '0')
  const column = `${ACCESS_LOG_FAMILY}:${ACCESS_LOG_QUALIFIER}`
  let next = 0
  async function worker () {
    while (next < buckets) {
      const prefix = bucketPrefix(next++)
      for await (const row of client.scan(logTable, { startRow: prefix + from, stopRow: prefix + to, columns: [column], caching: 1000, timeout })) {
        rows++
        const group = groupOfCell(row.cells[0] && row.cells[0].value)
        groups.set(group, (groups.get(group) || 0) + 1)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_BUCKETS, buckets) }, worker))
  return { groups, rows }
}

const UNREADABLE = JSON.stringify(['', '', 'unreadable'])

/** @param {Buffer|undefined} value */
function groupOfCell (value) {
  if (!value) return UNREADABLE
  try {
    const entry = JSON.parse(value.toString('utf8'))
    return entry !== null && typeof entry === 'object' ? groupOf(entry) : UNREADABLE
  } catch {
    return UNREADABLE
  }
}

module.exports = { countMinute }
