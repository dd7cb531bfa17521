'use strict'

/**
 * The named scenarios of `npm run bench`. Each takes the run's context and returns its section
 * of the report: `{ title, description, rows }` (rows: case -> summary with the server-side
 * view), in one table format; the seed scenario fills `endpoints` and `baseline` instead.
 *
 * ctx: { env (environment.js), params (options.js), names (endpoints), settings, server (the
 * cluster's ChildProcess), ledger (endpoint, summary) — counts 2xx/sent for the completeness
 * check, log }
 */

const { secondBest, withServerView, stdev, round } = require('./report')
const { sweep } = require('./sweep-scenario')
const { cpu, NO_ROLLUP_ENDPOINT } = require('./cpu')

const SCENARIOS = ['seed', 'cpu', 'sweep']
/**
 * sample5 with its HBase access log in the other durabilities (declared by the bench; sample5
 * itself has the default, process): endpoint → its sink's durability. Each sink has a table of
 * its own, so each endpoint's completeness is counted apart.
 */
const DURABILITY_ENDPOINTS = Object.freeze({ sample5_memory: 'memory', sample5_host: 'host' })
/** sample5's HBase access log without rollups (declared by the bench), for the cpu scenario's sample5_norollup. */
const NO_ROLLUP_SINK = 'hbase_norollup'

function random (ctx, endpoint) {
  return { endpoint, kind: 'random', idRange: ctx.params.idRange, missRatio: ctx.params.missRatio }
}

/**
 * One load job against the server (or `where`), ledgered, with its server-side view.
 * where: { target, server (a ChildProcess instead of ctx.server), noLedger }
 */
async function run (ctx, job, where = {}) {
  const target = where.target || { host: ctx.env.address('app'), port: ctx.env.port }
  const r = await ctx.env.load(job, { target, serverPids: [(where.server || ctx.server).pid] })
  if (!where.noLedger) ctx.ledger(job.paths.endpoint, r)
  const { sampled, ...summary } = r
  return withServerView({ ...summary, connections: job.connections }, sampled)
}

/** Warm-up, then N closed-loop runs; the second-best is reported (the seed protocol). */
async function measureSeed (ctx, name, endpoint, where = {}) {
  const p = ctx.params
  const job = (extra) => ({ generator: 'autocannon', connections: p.connections, paths: random(ctx, endpoint), ...extra })
  ctx.log(`${name}: warm-up ${p.warmupSeconds} s${where.sweep ? ` + a sweep of ${where.sweep} requests over all ids` : ''}`)
  if (p.warmupSeconds > 0) await run(ctx, job({ durationMs: p.warmupSeconds * 1000 }), where)
  if (where.sweep) {
    // autocannon sends at least one request per connection (with --id-range 1, more than the sweep).
    const amount = Math.max(where.sweep, p.connections)
    await run(ctx, job({ amount, paths: { endpoint, kind: 'sweep', idRange: p.idRange, passes: p.workers * 3 } }), where)
  }
  const runs = []
  for (let i = 0; i < p.runs; i++) {
    const r = await run(ctx, job({ durationMs: p.durationSeconds * 1000 }), where)
    ctx.log(`${name}: run ${i + 1}/${p.runs}: ${r.rps} req/s, mean ${r.latencyMean} ms, p99 ${r.p99} ` +
      `ms, non2xx ${r.non2xx}, errors ${r.errors}, app CPU ${r.server.app?.cpuMsPer1k} ms/1k req`)
    runs.push(r)
  }
  return { ...secondBest(runs), runsRps: runs.map((r) => r.rps), runsRpsStdev: round(stdev(runs.map((r) => r.rps)), 2) }
}

async function seed (ctx) {
  const p = ctx.params
  const baselineServer = await ctx.env.startBaseline()
  let baseline
  try {
    // Same path generator as the endpoints, so the load generator does the same work.
    baseline = await measureSeed(ctx, 'baseline', 'sample1', {
      target: { host: ctx.env.address('app'), port: ctx.env.baselinePort },
      server: baselineServer,
      noLedger: true
    })
  } finally {
    await baselineServer.stop()
  }
  const endpoints = {}
  for (const name of ctx.names) {
    const cached = ctx.settings.endpoints[name].cache.type !== 'off'
    endpoints[name] = await measureSeed(ctx, name, name, { sweep: cached ? p.idRange * p.workers * 3 : 0 })
  }
  return { endpoints, baseline }
}

module.exports = {
  SCENARIOS,
  DURABILITY_ENDPOINTS,
  NO_ROLLUP_ENDPOINT,
  NO_ROLLUP_SINK,
  seed,
  sweep: (ctx) => sweep(ctx, { run, random }),
  cpu: (ctx) => cpu(ctx, run)
}
