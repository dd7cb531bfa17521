'use strict'

/**
 * The sweep scenario: open-loop steps at rising rates per endpoint (sweep.js decides when to
 * stop).
 */

const { runSweep, LIMITS } = require('./sweep')

/**
 * @param {object} ctx the run's context (scenarios.js)
 * @param {{ run: (ctx: object, job: object) => Promise<object>, random: (ctx: object, endpoint: string) => object }} helpers
 *   scenarios.js's load job runner and path spec
 */
async function sweep (ctx, { run, random }) {
  const p = ctx.params
  const endpoints = {}
  /** @type {Record<string, any>} */
  const rows = {}
  for (const name of p.sweepEndpoints.filter((n) => ctx.names.includes(n))) {
    if (ctx.settings.endpoints[name].cache.type !== 'off') {
      // Every id in every worker's cache first: the steps then measure a cache in its steady
      // state, not the one-off misses of filling it (each waits for HBase). Random ids, about 10
      // per worker each: an id's requests in a row would share a worker (measured: 13k of 20k
      // worker-id pairs loaded by 6 in a row).
      const amount = p.idRange * p.workers * 10
      ctx.log(`sweep ${name}: loading the caches (${amount} requests over ids 1..${p.idRange})`)
      await run(ctx, { generator: 'autocannon', connections: p.sweepConnections, amount, paths: random(ctx, name) })
    }
    const result = await runSweep(p.sweepRates, async (rate) => {
      const r = await run(ctx, {
        generator: 'open-loop',
        rate,
        connections: p.sweepConnections,
        durationMs: p.sweepStepSeconds * 1000,
        paths: random(ctx, name)
      })
      ctx.log(`sweep ${name} @ ${rate} req/s: achieved ${r.rps}, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, ` +
        `errors ${r.errors}, late ${r.late}, unsent ${r.unsent}`)
      return r
    })
    endpoints[name] = result
    for (const step of result.steps) rows[`${name} @ ${step.offeredRate.toLocaleString('en-US')} req/s`] = step
  }
  return {
    title: 'Rate sweep (open loop)',
    description: `Constant arrival rate, evenly spaced over ${p.sweepConnections} keep-alive connections, ${p.sweepStepSeconds} s per ` +
      'step, ids as in the seed runs (a cached endpoint\'s caches loaded first); latency from each request\'s due time (wrk2-style), ' +
      'so queueing shows. Steps rise until errors, ' +
      `p99 > ${LIMITS.stopP99Ms} ms or the achieved rate falls below ${LIMITS.minAchieved} × offered.`,
    limits: LIMITS,
    endpoints,
    rows
  }
}

module.exports = { sweep }
