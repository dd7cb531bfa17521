'use strict'

const client = require('prom-client')

/**
 * The CPU time (user + system, all threads) of one process of the cluster, labelled with its tag
 * (`w1`, `rollup`), since it started. prom-client's beacon_process_cpu_seconds_total is summed over
 * the processes by the primary; this keeps each apart, so the rollup job's cost per row it counts,
 * or one hot worker, can be read from /metrics.
 * @param {client.Registry} register
 * @param {{ processTag: string, cpuUsage?: () => { user: number, system: number } }} options
 * @returns {client.Counter<string>}
 */
function watchProcessCpu (register, { processTag, cpuUsage = () => process.cpuUsage() }) {
  let counted = 0
  return new client.Counter({
    name: 'beacon_cluster_process_cpu_seconds_total',
    help: 'CPU time (user + system) of each process of the cluster since it started, by its tag (w1, w2..., rollup); ' +
      'beacon_process_cpu_seconds_total sums the processes',
    labelNames: ['process'],
    registers: [register],
    collect () {
      const { user, system } = cpuUsage()
      const seconds = (user + system) / 1e6
      this.inc({ process: processTag }, Math.max(0, seconds - counted))
      counted = Math.max(counted, seconds)
    }
  })
}

module.exports = { watchProcessCpu }
