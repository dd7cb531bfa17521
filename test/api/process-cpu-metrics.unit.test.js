'use strict'

const client = require('prom-client')
const { watchProcessCpu } = require('../../api/metrics/process-cpu')

test("a process's CPU time under its tag, user and system, never going back", async () => {
  let usage = { user: 1_500_000, system: 500_000 }
  const register = new client.Registry()
  watchProcessCpu(register, { processTag: 'rollup', cpuUsage: () => usage })
  const value = async () => {
    const text = await register.metrics()
    return Number(text.match(/^beacon_cluster_process_cpu_seconds_total\{process="rollup"\} (\S+)$/m)[1])
  }
  expect(await value()).toBe(2)
  usage = { user: 2_000_000, system: 750_000 }
  expect(await value()).toBe(2.75)
  // A counter: a reading lower than the last (none should come) adds nothing.
  usage = { user: 0, system: 0 }
  expect(await value()).toBe(2.75)
})
