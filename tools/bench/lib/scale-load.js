'use strict'

/**
 * One load job of the scale bench's config part, in a process of its own (like load-worker.js,
 * whose open-loop generator it runs), with ids drawn uniformly or Zipf-skewed over 1..ids
 * (./zipf.js):
 *
 *   node tools/bench/lib/scale-load.js '<job JSON>'
 *
 * Job: { host, port, endpoint, dist: 'uniform'|'zipf', ids, s, rate, durationMs, connections }.
 * Prints one JSON line (the open-loop summary and the generator's own CPU) and exits.
 */

const { runOpenLoop } = require('./open-loop')
const { createIdDraw } = require('./zipf')
const { jsonJobMain } = require('./processes')

/**
 * @param {{ host: string, port: number, endpoint: string, dist: 'uniform'|'zipf', ids: number, s?: number,
 *   rate: number, durationMs: number, connections?: number }} job
 * @returns {Promise<object>} runOpenLoop's summary plus generatorCpuUs
 */
async function runScaleLoad (job) {
  if (!/^[A-Za-z0-9_-]+$/.test(job.endpoint || '')) throw new TypeError(`scale-load: bad endpoint ${JSON.stringify(job.endpoint)}`)
  const cpuStart = process.cpuUsage()
  const draw = createIdDraw({ dist: job.dist, ids: job.ids, s: job.s })
  const prefix = `/api/${job.endpoint}.js?callback=EXAMPLE.process&id=`
  const summary = await runOpenLoop({
    host: job.host,
    port: job.port,
    rate: job.rate,
    durationMs: job.durationMs,
    connections: job.connections || 50,
    timeoutMs: 10000,
    next: () => ({ path: prefix + draw() })
  })
  const used = process.cpuUsage(cpuStart)
  return { ...summary, generatorCpuUs: used.user + used.system }
}

jsonJobMain(module, 'scale-load', runScaleLoad)

module.exports = { runScaleLoad }
