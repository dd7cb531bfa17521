'use strict'

/**
 * One load job in its own process, so that the load generator can run on the `mon` host (inside
 * its network namespace, pinned there) while the orchestrator stays in the root namespace:
 *
 *   node tools/bench/lib/load-worker.js '<job JSON>'
 *
 * Prints one JSON line with the run's summary (same fields for both generators) and exits.
 * Job: { generator: 'autocannon'|'wrk'|'open-loop', host, port, paths: PathSpec, connections,
 *   durationMs | amount (autocannon only), rate (open-loop), threads (wrk), timeoutMs }
 */

const autocannon = require('autocannon')
const { runOpenLoop } = require('./open-loop')
const { runWrk } = require('./wrk')
const { createPathPicker } = require('./paths')
const { summarizeRun } = require('./report')
const { jsonJobMain } = require('./processes')

/**
 * @param {object} job see the file comment
 * @returns {Promise<object>} summary: rps, latencyMean, latencyStdev, p50 … p999, requests, ok,
 *   non2xx, errors, sent, statusCounts (answers per HTTP status, e.g. { 200: 5981 }: `ok` counts
 *   any 2xx), generatorCpuUs (+ open-loop's offeredRate, late, unsent, max)
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
    const result = await runOpenLoop({
      host: job.host,
      port: job.port,
      rate: job.rate,
      durationMs: job.durationMs,
      connections: job.connections,
      timeoutMs: job.timeoutMs || 10000,
      next,
      onAnswer: (request, { status }) => { if (status) statusCounts[status] = (statusCounts[status] || 0) + 1 }
    })
    return { generator: 'open-loop', ...result, statusCounts, generatorCpuUs: generatorCpuUs() }
  }
  if (job.generator === 'wrk') {
    return runWrk({ ...job, next })
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
