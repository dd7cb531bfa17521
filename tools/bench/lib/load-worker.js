'use strict'

/**
 * One load job in its own process, so that the load generator can run on the `mon` host (inside
 * its network namespace, pinned there) while the orchestrator stays in the root namespace:
 *
 *   node tools/bench/lib/load-worker.js '<job JSON>'
 *
 * Prints one JSON line with the run's summary (same fields for both generators) and exits.
 * Job: { generator: 'autocannon'|'open-loop', host, port, paths: PathSpec, connections,
 *   durationMs | amount (autocannon only), rate (open-loop; 0 = closed loop), keepAlive, timeoutMs,
 *   precise (open-loop: false = timers only) }
 */

const autocannon = require('autocannon')
const { runOpenLoop } = require('./open-loop')
const { createPathPicker } = require('./paths')
const { summarizeRun } = require('./report')
const { jsonJobMain } = require('./processes')
const { parseStalls, stallsDelta } = require('./stalls')
const { Registry } = require('prom-client')
const { publicPlane: { watchEventLoop } } = require('../../../index.js')

/**
 * This generator's own event-loop delay over `work`, measured as the server measures its own:
 * an answer read late by a held-up generator looks slow after its send too.
 * @template T
 * @param {() => Promise<T>} work
 * @returns {Promise<{ result: T, loop: object|null }>}
 */
async function withOwnLoop (work) {
  const register = new Registry()
  const watch = watchEventLoop(register, { processTag: 'generator' })
  try {
    const before = parseStalls(await register.metrics())
    const result = await work()
    const after = parseStalls(await register.metrics())
    return { result, loop: stallsDelta(before, after).loop.generator || null }
  } finally {
    watch.stop()
  }
}

/**
 * @param {object} job see the file comment
 * @returns {Promise<object>} summary: rps, latencyMean, latencyStdev, p50 … p999, requests, ok,
 *   non2xx, errors, sent, statusCounts (answers per HTTP status, e.g. { 200: 5981 }: `ok` counts
 *   any 2xx), generatorCpuUs (+ open-loop's offeredRate, late, unsent, max, slow, tags, and
 *   generatorLoop: this process's event-loop delay over the run, as stalls.js's window)
 */
async function runJob (job) {
  // The generator's own CPU over the job (all its threads, start-up excluded), to the µs.
  const cpuStart = process.cpuUsage()
  const generatorCpuUs = () => {
    const used = process.cpuUsage(cpuStart)
    return used.user + used.system
  }
  const next = createPathPicker(job.paths)
  /** @type {Record<string, number>} */
  const statusCounts = {}
  if (job.generator === 'open-loop') {
    const { result, loop } = await withOwnLoop(() => runOpenLoop({
      host: job.host,
      port: job.port,
      rate: job.rate,
      durationMs: job.durationMs,
      connections: job.connections,
      keepAlive: job.keepAlive !== false,
      timeoutMs: job.timeoutMs || 10000,
      precise: job.precise !== false,
      // Timers fire up to ~1.5 ms after their time: only a lag beyond that is the schedule slipping.
      lateMs: job.precise === false ? 2 : 1,
      next,
      onAnswer: (request, { status }) => { if (status) statusCounts[status] = (statusCounts[status] || 0) + 1 }
    }))
    const { tags, errorCodes, ...rest } = result
    const generator = job.rate === 0 ? 'closed-loop' : job.precise === false ? 'open-loop/timer' : 'open-loop'
    return { generator, ...rest, errorCodes, tags, statusCounts, generatorLoop: loop, generatorCpuUs: generatorCpuUs() }
  }
  if (job.generator === 'autocannon') {
    const limit = job.amount ? { amount: job.amount } : { duration: job.durationMs / 1000 }
    const result = await autocannon({
      url: `http://${job.host}:${job.port}`,
      connections: job.connections,
      pipelining: 1,
      timeout: (job.timeoutMs || 10000) / 1000,
      ...limit,
      // The method, body and headers too (an OFREP POST); autocannon writes the Content-Length
      // into the headers object it is given, so a request with headers gets an object of its own.
      requests: [{
        setupRequest: (req) => {
          const { path, method = 'GET', headers, body } = next()
          return {
            ...req,
            path,
            method,
            headers: headers ? { ...req.headers, ...headers } : req.headers,
            ...(body === undefined ? {} : { body })
          }
        }
      }]
    })
    for (const [status, { count }] of Object.entries(result.statusCodeStats || {})) statusCounts[status] = count
    return { generator: 'autocannon', ...summarizeRun(result), sent: result.requests.sent, statusCounts, generatorCpuUs: generatorCpuUs() }
  }
  throw new TypeError(`load-worker: unknown generator ${JSON.stringify(job.generator)}`)
}

jsonJobMain(module, 'load-worker', runJob)

module.exports = { runJob }
