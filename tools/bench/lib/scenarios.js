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
const { chaos } = require('./chaos/scenario')
const { faults } = require('./faults')
const { cpu, NO_ROLLUP_ENDPOINT } = require('./cpu')
const { logCount } = require('./log-count')
const { createHBaseClient } = require('@beacon/hbase-client')

const SCENARIOS = ['seed', 'cpu', 'sweep', 'vus', 'cross-zone', 'connections', 'mixed', 'lb', 'logcount', 'chaos', 'faults']
/**
 * Scenarios that bring their own HBase and server (ctx: { params, log, stateDir } only): they run
 * after the others, and a run of only these starts no shared environment.
 */
const OWN_CLUSTER = ['chaos', 'faults']
/** What `--quick` runs by default: chaos and the long fault runs need minutes and HBase of their own. */
const QUICK_SCENARIOS = SCENARIOS.filter((s) => !OWN_CLUSTER.includes(s))
/** An endpoint declared by the bench only (BEACON_CONFIG_FILE) so the mixed scenario starts cold. */
const MIXED_ENDPOINT = 'bench_mixed'
/** sample5 with its HBase access log in durable mode (declared by the bench), and its sink. */
const DURABLE_ENDPOINT = 'sample5_durable'
const DURABLE_SINK = 'hbase_durable'
/** sample5's HBase access log without rollups (declared by the bench), for the cpu scenario's sample5_norollup. */
const NO_ROLLUP_SINK = 'hbase_norollup'

/** The logcount scenario on the shared environment's HBase, with a client of its own. */
async function logcount (ctx) {
  const client = createHBaseClient({ bootstrap: ctx.env.bootstrap })
  try {
    return await logCount(ctx, client)
  } finally {
    await client.close()
  }
}

function random (ctx, endpoint) {
  return { endpoint, kind: 'random', idRange: ctx.params.idRange, missRatio: ctx.params.missRatio }
}

/**
 * Whether an open-loop job polls for sub-millisecond send times. Polling keeps one core busy
 * whenever the next request is due within ~1.5 ms (from ~1,000 req/s on: all the time); on a
 * 2-core machine that core is taken from the server. So by default only low rates poll, and
 * higher ones use timers (send times within ~1 ms, which adds at most ~1 ms to a latency, little
 * against the sweep's 10 ms knee). --precise makes every run poll.
 */
function precise (ctx, rate) {
  return ctx.params.precise || (rate > 0 && rate <= ctx.params.preciseMaxRate)
}

/**
 * One load job against the server (or `where`), ledgered, with its server-side view.
 * where: { target, server (a ChildProcess instead of ctx.server), servers (several, CPU summed),
 * lb (HAProxy, sampled as its own role), noLedger }
 */
async function run (ctx, job, where = {}) {
  if (job.generator === 'open-loop' && job.rate > 0) job = { precise: precise(ctx, job.rate), ...job }
  const target = where.target || { host: ctx.env.address('app'), port: ctx.env.port }
  const serverPids = (where.servers || [where.server || ctx.server]).map((s) => s.pid)
  const r = await ctx.env.load(job, { target, serverPids, lbPid: where.lb && where.lb.pid })
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

/** k6-style virtual users: N clients each sending 1 req/s, i.e. N connections at N req/s. */
async function vuRows (ctx, endpoints, counts, where = {}, suffix = '') {
  const rows = {}
  for (const name of endpoints) {
    for (const vus of counts) {
      const r = await run(
        ctx,
        { generator: 'open-loop', rate: vus, connections: vus, durationMs: ctx.params.vuSeconds * 1000, paths: random(ctx, name) },
        where
      )
      ctx.log(`${name} ${vus} VUs${suffix}: p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}`)
      rows[`${name} ${vus} VUs${suffix}`] = r
    }
  }
  return rows
}

async function vus (ctx) {
  const p = ctx.params
  return {
    title: 'Virtual users',
    description: `${p.vuCounts.join(' and ')} clients, each on its own keep-alive connection sending one request per second (think time ` +
      `= 1 s minus the response time), ${p.vuSeconds} s: latency at a realistic concurrency rather than peak throughput. Open-loop ` +
      'generator, arrivals evenly spread over the second.',
    rows: await vuRows(ctx, p.scenarioEndpoints.filter((n) => ctx.names.includes(n)), p.vuCounts)
  }
}

async function crossZone (ctx) {
  const p = ctx.params
  const endpoints = p.crossZoneEndpoints.filter((n) => ctx.names.includes(n))
  const direct = await vuRows(ctx, endpoints, p.vuCounts, {}, ' direct')
  const link = await ctx.env.startCrossZoneLink(p.crossZoneDelayMs, ctx.env.port + 3)
  let via
  try {
    via = await vuRows(ctx, endpoints, p.vuCounts, { target: link.target }, ` via ${p.crossZoneDelayMs} ms link`)
  } finally {
    await link.stop()
  }
  const notes = []
  for (const name of endpoints) {
    for (const n of p.vuCounts) {
      const d = direct[`${name} ${n} VUs direct`]
      const v = via[`${name} ${n} VUs via ${p.crossZoneDelayMs} ms link`]
      notes.push(`- ${name}, ${n} VUs: the link adds ${round(v.p50 - d.p50, 3)} ms at p50 and ${round(v.p99 - d.p99, 3)} ` +
        `ms at p99 (one round trip = ${2 * p.crossZoneDelayMs} ms); the rest is the server's own latency.`)
    }
  }
  return {
    title: 'Cross-zone',
    description: `The virtual-user runs again, direct and through a link that delays each direction by ${p.crossZoneDelayMs} ms ` +
      `(${link.method}), so the network hop's cost is separated from the server's.`,
    method: link.method,
    notes,
    rows: { ...direct, ...via }
  }
}

async function connections (ctx) {
  const p = ctx.params
  const rows = {}
  for (const name of p.connectionEndpoints.filter((n) => ctx.names.includes(n))) {
    for (const c of p.connectionCounts) {
      rows[`${name} ${c} keep-alive`] = await run(ctx, {
        generator: 'open-loop',
        rate: 0,
        connections: c,
        durationMs: p.connectionSeconds * 1000,
        paths: random(ctx, name)
      })
    }
    for (const c of p.noKeepAliveCounts) {
      rows[`${name} ${c} connection per request`] = await run(ctx, {
        generator: 'open-loop',
        rate: 0,
        connections: c,
        keepAlive: false,
        durationMs: p.connectionSeconds * 1000,
        paths: random(ctx, name)
      })
    }
    ctx.log(`connections ${name}: ` +
      `${Object.entries(rows).filter(([k]) => k.startsWith(name)).map(([k, r]) => `${k.slice(name.length + 1)} ${r.rps}`).join(', ')}`)
  }
  return {
    title: 'Connection scaling',
    description: `Closed loop (each connection sends its next request when the answer is in), ${p.connectionSeconds} s per case: ` +
      `keep-alive connections from ${p.connectionCounts[0]} to ${p.connectionCounts[p.connectionCounts.length - 1]}, then a new TCP ` +
      'connection for every request (`Connection: close`; connect time included in latency).',
    rows
  }
}

async function mixed (ctx) {
  const p = ctx.params
  const hitRange = Math.floor(p.idRange / 2)
  const endpoint = MIXED_ENDPOINT
  // Warm only 1..hitRange; ids hitRange+1..idRange exist in HBase but were never asked for.
  await run(ctx, {
    generator: 'autocannon',
    connections: p.connections,
    amount: hitRange * p.workers * 3,
    paths: { endpoint, kind: 'sweep', idRange: hitRange, passes: p.workers * 3 }
  })
  const mix = p.mix
  const r = await run(ctx, {
    generator: 'open-loop',
    rate: p.mixedRate,
    connections: p.connections,
    durationMs: p.mixedSeconds * 1000,
    paths: { endpoint, kind: 'mixed', mix, hitRange, missFrom: hitRange + 1, missTo: p.idRange }
  })
  const { tags, ...overall } = r
  const rows = { [`all (${mix.hit} / ${mix.miss} / ${mix.absent})`]: overall }
  for (const [tag, t] of Object.entries(tags || {})) rows[`${tag} (of all)`] = { requests: t.count, ...t }
  const misses = tags && tags.miss ? tags.miss.count : 0
  return {
    title: 'Mixed ids',
    description: `Open loop at ${p.mixedRate.toLocaleString('en-US')} req/s for ${p.mixedSeconds} s on \`${endpoint}\` (declared for the ` +
      `bench like sample3: HBase config, LRU cache, no log; its cache starts cold): hits are ids 1..${hitRange} (warmed just before), ` +
      `misses ids ${hitRange + 1}..${p.idRange} (in HBase, never asked for: each asked ` +
      `once${misses > p.idRange - hitRange
        ? `, but ${misses} misses wrapped around the ${p.idRange - hitRange} ids, so some were hits`
        : ''}), ` +
      'absent ids are not in HBase (negative-cached per id, each id new). Per-kind rows have latency only.',
    rows
  }
}

/**
 * The app tier behind HAProxy: 1 host direct, 1 host via HAProxy, 2 hosts via HAProxy, each
 * closed loop and at a fixed rate. On one 2-core machine every host, HAProxy, HBase and the
 * load generator share the cores, so what this shows is the CPU each request costs and what
 * the balancer adds, not the throughput a second machine would bring.
 */
async function lb (ctx) {
  const p = ctx.params
  const fileLogged = (n) => ctx.settings.endpoints[n].accessLog.some((sink) => ctx.settings.logSinks[sink].type === 'file')
  const skipped = p.lbEndpoints.filter((n) => ctx.names.includes(n) && fileLogged(n))
  const endpoints = p.lbEndpoints.filter((n) => ctx.names.includes(n) && !fileLogged(n))
  const rows = {}
  const paths = (endpoint) => ({ endpoint, kind: 'random', idRange: p.lbIdRange, missRatio: 0 })
  const shapes = [['closed loop', 0], [`@ ${p.lbRate.toLocaleString('en-US')} req/s`, p.lbRate]]
  const measure = async (label, where, hosts) => {
    for (const name of endpoints) {
      // Every worker of every host sees every id: the runs below read the caches, not HBase.
      const passes = hosts * p.workers * 3
      await run(
        ctx,
        {
          generator: 'autocannon',
          connections: p.lbConnections,
          amount: p.lbIdRange * passes,
          paths: { endpoint: name, kind: 'sweep', idRange: p.lbIdRange, passes }
        },
        where
      )
      for (const [shape, rate] of shapes) {
        const r = await run(
          ctx,
          { generator: 'open-loop', rate, connections: p.lbConnections, durationMs: p.lbSeconds * 1000, paths: paths(name) },
          where
        )
        ctx.log(`lb ${name} ${label}, ${shape}: ${r.rps} req/s, p99 ${r.p99} ms, beacon ` +
          `${r.server.app?.cpuMsPer1k} µs/req, HAProxy ${r.server.lb?.cpuMsPer1k ?? '-'} µs/req, errors ${r.errors}`)
        rows[`${name} ${label}, ${shape}`] = r
      }
    }
  }
  const probe = `/api/${endpoints[0] || 'sample1'}.js?id=1`
  const front = ctx.env.port + 4
  await measure('1 host direct', {}, 1)
  const one = await ctx.env.startLoadBalancer(['app'], front)
  try {
    await measure('1 host via HAProxy', { target: one.address, lb: one }, 1)
  } finally {
    await one.stop()
  }
  const second = await ctx.env.startServer(probe, 'app2')
  try {
    const two = await ctx.env.startLoadBalancer(['app', 'app2'], front)
    try {
      await measure('2 hosts via HAProxy', { target: two.address, lb: two, servers: [ctx.server, second] }, 2)
    } finally {
      await two.stop()
    }
  } finally {
    await second.stop()
  }
  const us = (v) => (v === null || v === undefined ? '' : String(v))
  const notes = [
    'On this 2-core machine the point of this scenario is the CPU cost per request and the load balancer\'s overhead, not more ' +
      'throughput: both app hosts, HAProxy, HBase and the load generator share the same 2 cores, so a second host cannot add capacity ' +
      'here (it only splits the same cores). What carries over to real machines is the CPU per request: a host serves about (its cores ' +
        '× ' +
      '10⁶) / (beacon µs per request) requests per second, and HAProxy costs its µs per request on its own machine.',
    '',
    '| case | req/s | p99 ms | beacon CPU µs/req (all hosts) | HAProxy CPU µs/req | together µs/req |',
    '|---|---:|---:|---:|---:|---:|',
    ...Object.entries(rows).map(([k, r]) => {
      const app = r.server.app?.cpuMsPer1k
      const balancer = r.server.lb?.cpuMsPer1k
      return `| ${k} | ${Math.round(r.rps).toLocaleString('en-US')} | ${r.p99} | ${us(app)} | ` +
        `${us(balancer)} | ${app === null || app === undefined ? '' : round(app + (balancer || 0), 2)} |`
    }),
    ...(skipped.length
      ? [
          '',
          'Skipped (a file access log: the second host writes its lines in its own state ' +
            `dir, which the completeness check does not count): ${skipped.join(', ')}.`
        ]
      : [])
  ]
  return {
    title: 'App hosts behind HAProxy',
    description: 'The app tier behind a real load balancer (Debian\'s HAProxy, tools/lb: round robin, /readyz health checks, one ' +
      'thread): ' +
      `1 host direct, 1 host via HAProxy, 2 hosts via HAProxy (the second a server cluster of its own, ${p.workers} worker(s), on the ` +
      `app2 host), each closed loop and at a constant ${p.lbRate.toLocaleString('en-US')} req/s, ${p.lbConnections} keep-alive ` +
      `connections, ${p.lbSeconds} s, ids 1..${p.lbIdRange} (caches warmed first). CPU per request from /proc: every beacon process of ` +
      'every host ("app" columns, ms per 1k requests = µs per request) and HAProxy\'s process.',
    notes,
    rows
  }
}

module.exports = {
  SCENARIOS,
  OWN_CLUSTER,
  QUICK_SCENARIOS,
  MIXED_ENDPOINT,
  DURABLE_ENDPOINT,
  DURABLE_SINK,
  NO_ROLLUP_ENDPOINT,
  NO_ROLLUP_SINK,
  seed,
  sweep: (ctx) => sweep(ctx, { run, random }),
  vus,
  'cross-zone': crossZone,
  connections,
  mixed,
  lb,
  chaos,
  faults,
  cpu: (ctx) => cpu(ctx, run),
  logcount
}
