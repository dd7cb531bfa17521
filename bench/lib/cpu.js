'use strict'

/**
 * The `cpu` scenario of `npm run bench`: CPU time per request of each endpoint and of the bare
 * node:http baseline — the unit that decides how many app hosts a user needs, and steadier than
 * throughput on a machine whose cores the generator, the server and HBase share.
 *
 * Per target two load shapes: a fixed open-loop rate below every endpoint's knee (the generator's
 * share is then the same for all), and saturation (closed loop, autocannon, like the seed runs);
 * and two id sets: 1..idRange at random (the seed runs) and the seed's own id=1. Rounds: each
 * round measures every case once, so what drifts meanwhile (other users of the cores) touches
 * all cases alike and ratios are paired per round. The math is in cpu-report.js.
 */

const { setTimeout: sleep } = require('node:timers/promises')
const { BASELINE, cpuRun, summarizeCases, summarizeIdle } = require('./cpu-report')
const { createSampler } = require('./proc-sampler')
const { scrapeTraffic, trafficDelta, trafficRun } = require('./hbase-traffic')

/** sample5 with an access log that keeps no rollups (declared by bench/run.js): what rollups cost. */
const NO_ROLLUP_ENDPOINT = 'sample5_norollup'

/**
 * @param {{ params: Record<string, any>, names: string[], settings: any, env: any, server: { pid?: number },
 *   log: (line: string) => void }} ctx
 *   the shared scenario context (scenarios.js)
 * @param {(ctx: any, job: object, where?: object) => Promise<any>} run one load job,
 *   ledgered, with its server-side view (scenarios.js)
 * @returns {Promise<{ title: string, description: string, parameters: object, idle: object, cases: Record<string, object>,
 *   hbaseTotal: object }>}
 */
async function cpu (ctx, run) {
  const p = ctx.params
  const declared = (n) => Boolean(ctx.settings.endpoints[n])
  // sample1 always: every ratio is against it.
  // sample5_norollup is the cpu scenario's alone (it measures what rollups cost sample5).
  const endpoints = [...new Set(['sample1', ...p.cpuEndpoints.filter((n) => ctx.names.includes(n) || n === NO_ROLLUP_ENDPOINT)])].filter(
    declared
  )
  const cached = (n) => ctx.settings.endpoints[n].cache.type !== 'off'
  const rateLabel = `@ ${p.cpuRate.toLocaleString('en-US')} req/s`
  const shapes = [
    { shape: 'rate', label: rateLabel, job: { generator: 'open-loop', rate: p.cpuRate } },
    { shape: 'saturation', label: 'closed loop', job: { generator: 'autocannon' } }
  ]
  const idSets = [{ ids: 'range', label: `ids 1..${p.idRange}`, idRange: p.idRange }, { ids: 'one', label: 'id=1', idRange: 1 }]
  const paths = (endpoint, idRange) => ({ endpoint, kind: 'random', idRange, missRatio: 0 })
  /** @type {Record<string, { target: string, ids: string, shape: string, offeredRate: number, connections: number, runs: object[] }>} */
  const cases = {}
  /** @type {Array<{ round: number, appUsPerS: number|null, baselineUsPerS: number|null, hbaseUsPerS: number|null }>} */
  const idleRuns = []

  const baselineServer = await ctx.env.startBaseline()
  const bare = { target: { host: ctx.env.address('app'), port: ctx.env.baselinePort }, server: baselineServer, noLedger: true }
  // The baseline answers every path with the same body; it gets sample1's paths, so the
  // generator does the same work.
  const whereOf = (target) => (target === BASELINE ? bare : {})
  const endpointOf = (target) => (target === BASELINE ? 'sample1' : target)
  // The server's HBase traffic counters, read around each run (outside its CPU sample).
  const metricsUrl = `http://${ctx.env.address('app')}:${ctx.env.port + 1}/metrics`
  const traffic = () => scrapeTraffic(metricsUrl)

  async function measure (target, idSet, shape, roundNo) {
    const key = `${target === BASELINE ? 'bare node:http' : target}${target === BASELINE ? '' : ` ${idSet.label}`} ${shape.label}`
    const before = target === BASELINE ? null : await traffic()
    const r = await run(
      ctx,
      { ...shape.job, connections: p.connections, durationMs: p.cpuSeconds * 1000, paths: paths(endpointOf(target), idSet.idRange) },
      whereOf(target)
    )
    const one = cpuRun(r, roundNo)
    if (before) one.hbase = trafficRun(trafficDelta(before, await traffic()), r.requests, r.rps)
    const c = (cases[key] ??= {
      target,
      ids: idSet.ids,
      shape: shape.shape,
      offeredRate: shape.shape === 'rate' ? p.cpuRate : 0,
      connections: p.connections,
      runs: []
    })
    c.runs.push(one)
    ctx.log(`cpu ${roundNo + 1}/${p.cpuRuns} ${key}: ${r.rps} req/s, app ${one.appUsPerReq} µs/req (${one.appCpuSource}), ` +
      `HBase ${one.hbaseUsPerReq}, load gen ${one.generatorUsPerReq}, p99 ${r.p99} ms, errors ${r.errors}, non2xx ${r.non2xx}` +
      (one.hbase ? `, HBase frames ${one.hbase.framesPerReq}/req, socket writes ${one.hbase.socketWritesPerReq}/req` : ''))
  }

  /** With no load for the runs' length: what the server, the baseline and HBase burn anyway. */
  async function idle (roundNo) {
    const sampler = createSampler({ app: () => [ctx.server.pid], baseline: () => [baselineServer.pid], hbase: () => [ctx.env.hbasePid()] })
    const started = process.hrtime.bigint()
    sampler.start()
    await sleep(p.cpuSeconds * 1000)
    const r = sampler.stop()
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const perS = (role) => (typeof r[role].cpuUs === 'number' ? Math.round(r[role].cpuUs / seconds) : null)
    idleRuns.push({ round: roundNo, appUsPerS: perS('app'), baselineUsPerS: perS('baseline'), hbaseUsPerS: perS('hbase') })
    ctx.log(`cpu ${roundNo + 1}/${p.cpuRuns} idle: server ${perS('app')} µs/s, ` +
      `bare node:http ${perS('baseline')} µs/s, HBase ${perS('hbase')} µs/s`)
  }

  const first = await traffic()
  const started = process.hrtime.bigint()
  try {
    if (p.warmupSeconds > 0) {
      ctx.log(`cpu: warm-up ${p.warmupSeconds} s closed loop per target`)
      for (const target of [BASELINE, ...endpoints]) {
        await run(
          ctx,
          {
            generator: 'autocannon',
            connections: p.connections,
            durationMs: p.warmupSeconds * 1000,
            paths: paths(endpointOf(target), p.idRange)
          },
          whereOf(target)
        )
      }
    }
    const targets = [BASELINE, ...endpoints]
    for (let roundNo = 0; roundNo < p.cpuRuns; roundNo++) {
      await idle(roundNo)
      // Each round starts one target further on, so no target always follows the idle sample
      // (a core that idled costs more to wake) or the same neighbour.
      const shift = roundNo % targets.length
      for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) {
        if (target === BASELINE) {
          for (const shape of shapes) await measure(BASELINE, idSets[0], shape, roundNo)
          continue
        }
        // Every worker's cache fresh (within its TTL) for this endpoint's runs: the hit path.
        if (cached(target)) {
          const passes = p.workers * 3
          await run(ctx, {
            generator: 'autocannon',
            connections: p.connections,
            amount: p.idRange * passes,
            paths: { endpoint: target, kind: 'sweep', idRange: p.idRange, passes }
          })
        }
        for (const idSet of idSets) for (const shape of shapes) await measure(target, idSet, shape, roundNo)
      }
    }
  } finally {
    await baselineServer.stop()
  }
  const whole = trafficDelta(first, await traffic())

  const all = Object.values(cases).flatMap((c) => c.runs)
  const fromThreads = all.filter((r) => r.appCpuSource === 'threads').length
  return {
    title: 'CPU per request',
    description: `${p.cpuRuns} round(s); a round first samples the idle processes for ${p.cpuSeconds} s, then measures every case once ` +
      `for ${p.cpuSeconds} s (each round starting one target further on), so drift meets every case alike, and ratios are paired per ` +
      `round. Cells: median (min–max) over the rounds. Load: open loop at ${p.cpuRate.toLocaleString('en-US')} req/s (below every ` +
      'endpoint\'s knee, so the generator\'s share is the same for all), and closed loop (autocannon, like the seed runs), both on ' +
      `${p.connections} keep-alive connections; ids 1..${p.idRange} at random as in the seed runs, or the seed's own id=1. Cached ` +
      'endpoints are swept over all ids (every worker) right before their runs of each round, so these are cache hits (an entry past its ' +
      `TTL costs a refresh read besides). app = every process and thread of the server cluster, ${p.workers} worker(s) (or of the bare ` +
      `node:http cluster), from /proc, to the µs from the threads' run time (${fromThreads} of ${all.length} runs; the others from 10 ` +
        'ms ' +
      'ticks); "above idle" subtracts what the same processes burn with no load, per request at the run\'s rate (timers, polls; the idle ' +
      'line below); HBase = the HBase JVM, all threads (on loopback the shared dev instance: anything else using it counts too); "HBase ' +
      'above sample1" subtracts sample1\'s in the same round at the same rate (sample1 never asks HBase); load gen = the load worker\'s ' +
      'own CPU (process.cpuUsage).',
    parameters: {
      rate: p.cpuRate,
      runs: p.cpuRuns,
      seconds: p.cpuSeconds,
      connections: p.connections,
      idRange: p.idRange,
      workers: p.workers,
      endpoints
    },
    idle: summarizeIdle(idleRuns),
    cases: summarizeCases(cases, idleRuns),
    // Everything the server sent to HBase over the scenario (warm-ups and sweeps included), beside
    // the access-log rows written meanwhile: what the rollups cost per logged row.
    hbaseTotal: { seconds: Math.round(Number(process.hrtime.bigint() - started) / 1e9), ...whole }
  }
}

module.exports = { cpu, NO_ROLLUP_ENDPOINT }
