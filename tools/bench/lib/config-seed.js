'use strict'

/**
 * Seeds config rows for ids 1..n in bulk through the HBase client's Multi puts, in the store's
 * row format (lib/toggles/store.js: row = the id, one JSON cell `c:json`) with the toggles
 * `hbase:up` seeds (tools/dev-hbase/sample-data.js), a few batches in flight. Unlike the setup
 * tool's seed it can stop at a deadline: every batch it started is written, so the ids seeded
 * are always 1..seeded.
 */

const { performance } = require('node:perf_hooks')
const { tables: { encodeToggles }, settings: { DEFAULTS } } = require('../../../index.js')
const { sampleConfig } = require('../../dev-hbase')

/**
 * @param {{ client: { multiPut: Function }, table: string, ids: number, deadline?: number|null, batch?: number,
 *   parallel?: number, log?: (line: string) => void }} options deadline: epoch ms after which no batch starts
 * @returns {Promise<{ seeded: number, seconds: number }>} seeded: ids 1..seeded are in the table
 */
async function seedConfigRows ({ client, table, ids, deadline = null, batch = 2000, parallel = 4, log = () => {} }) {
  const family = DEFAULTS.hbase.configFamily
  const qualifier = DEFAULTS.hbase.configQualifier
  const started = performance.now()
  let next = 1
  let reported = started
  const timeLeft = () => !deadline || Date.now() < deadline
  async function worker () {
    while (next <= ids && timeLeft()) {
      const from = next
      next = Math.min(ids + 1, next + batch)
      const puts = []
      for (let id = from; id < next; id++) {
        puts.push({ row: String(id), cells: { [family]: { [qualifier]: encodeToggles(sampleConfig(id)) } } })
      }
      const results = await client.multiPut(table, puts, { timeout: 120000 })
      const failed = results.filter(Boolean)
      if (failed.length) throw new Error(`config seed: ${failed.length} puts failed: ${failed[0].code || failed[0].message}`)
      const now = performance.now()
      if (now - reported > 30000) {
        reported = now
        log(`scale: config: ${(next - 1).toLocaleString('en-US')} of ${ids.toLocaleString('en-US')} ids seeded, ` +
          `${Math.round((next - 1) / ((now - started) / 1000))} rows/s`)
      }
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return { seeded: next - 1, seconds: (performance.now() - started) / 1000 }
}

module.exports = { seedConfigRows, sampleConfig } // sampleConfig: what each row holds
