'use strict'

const client = require('prom-client')

/**
 * Prometheus series read from the stats() of named parts (the access-log sinks, the rollup
 * job's rollers) at scrape time, for api/metrics/index.js.
 */

/**
 * A counter that follows monotonic numbers of the parts' stats, advanced by the difference at
 * scrape time: `read` yields [label value, number] pairs for one part's stats (label null: one
 * number per part, under the label value ''). Labelled `sink` by the part's name.
 * @param {client.Registry} register
 * @param {Map<string, { stats: () => any }>} parts
 * @param {{ name: string, help: string, label: string|null, read: (stats: any) => Array<[string, number]> }} spec
 * @returns {client.Counter<string>}
 */
function followStats (register, parts, { name, help, label, read }) {
  const last = new Map()
  return new client.Counter({
    name,
    help,
    labelNames: label ? ['sink', label] : ['sink'],
    registers: [register],
    collect () {
      for (const [partName, part] of parts) {
        for (const [value, n] of read(part.stats())) {
          if (typeof n !== 'number') continue
          const labels = label ? { sink: partName, [label]: value } : { sink: partName }
          const key = partName + ' ' + value
          const delta = n - (last.get(key) || 0)
          if (delta > 0) this.inc(labels, delta)
          else if (!last.has(key)) this.inc(labels, 0)
          last.set(key, n)
        }
      }
    }
  })
}

/**
 * A gauge of one number of each part's stats (undefined: no sample), labelled `sink`.
 * @param {client.Registry} register
 * @param {Map<string, { stats: () => any }>} parts
 * @param {{ name: string, help: string, read: (stats: any) => number|undefined, aggregator?: client.Aggregator }} spec
 *   aggregator: how the primary joins the processes' samples (default sum)
 * @returns {client.Gauge<string>}
 */
function gaugeStats (register, parts, { name, help, read, aggregator = 'sum' }) {
  return new client.Gauge({
    name,
    help,
    labelNames: ['sink'],
    registers: [register],
    aggregator,
    collect () {
      for (const [partName, part] of parts) {
        const value = read(part.stats())
        if (typeof value === 'number') this.set({ sink: partName }, value)
      }
    }
  })
}

module.exports = { followStats, gaugeStats }
