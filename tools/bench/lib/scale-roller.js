'use strict'

/**
 * The rollup job (logging/rollup/roller.js) in a process of its own, so the scale bench reads
 * its CPU and memory from /proc while it catches up with a backlog of marked minutes:
 *
 *   node tools/bench/lib/scale-roller.js '<job JSON>'
 *
 * Job: { bootstrap: string[], logTable, rollupTable, buckets, intervalMs, maxMinutesPerRun,
 * timeoutMs, deadlineMs }. It runs as a server worker runs it (a run, then `intervalMs`, then
 * the next run, each of at most `maxMinutesPerRun` minutes) until a run finds nothing due and
 * nothing pending, or `deadlineMs` passed. Progress goes to stderr, one JSON line with the
 * totals to stdout at the end.
 */

const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const { createHBaseClient } = require('@beacon/hbase-client')
const { log: { createRoller } } = require('../../../index.js')
const { jsonJobMain } = require('./processes')

/**
 * @param {{ bootstrap: string[], logTable: string, rollupTable: string, buckets: number, intervalMs: number,
 *   maxMinutesPerRun: number, timeoutMs?: number, deadlineMs: number }} job
 * @returns {Promise<object>} the roller's stats, the seconds it took, whether it caught up, and
 *   its heap at the end
 */
async function catchUp (job) {
  const client = createHBaseClient({ bootstrap: job.bootstrap, rpcTimeout: 30000, operationTimeout: 120000 })
  const roller = createRoller({
    client,
    logTable: job.logTable,
    rollupTable: job.rollupTable,
    buckets: job.buckets,
    intervalMs: job.intervalMs,
    maxMinutesPerRun: job.maxMinutesPerRun,
    timeoutMs: job.timeoutMs || 60000
  })
  const started = performance.now()
  let caughtUp = false
  let busyMs = 0
  try {
    while (performance.now() - started < job.deadlineMs) {
      const runStarted = performance.now()
      const rolled = await roller.runOnce()
      busyMs += performance.now() - runStarted
      const s = roller.stats()
      process.stderr.write(`scale-roller: run ${s.runs}: ${rolled} minutes (${s.minutesRolled} in all, ${s.rowsCounted} rows), ` +
        `${s.pendingMinutes} pending${s.lastError ? `, error ${s.lastError}` : ''}\n`)
      if (rolled === 0 && s.pendingMinutes === 0 && !s.lastError) {
        caughtUp = true
        break
      }
      await sleep(job.intervalMs)
    }
  } finally {
    await roller.close()
    await client.close()
  }
  return {
    ...roller.stats(),
    caughtUp,
    seconds: (performance.now() - started) / 1000,
    busySeconds: busyMs / 1000,
    heapUsedMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20)
  }
}

jsonJobMain(module, 'scale-roller', catchUp)

module.exports = { catchUp }
