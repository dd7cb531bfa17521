'use strict'

/**
 * The `cpu` scenario of `npm run bench`: CPU time per request of each endpoint and of the bare
 * node:http baseline — the unit that decides how many app hosts a user needs, and steadier than
 * throughput on a machine whose cores the generator, the server and HBase share.
 *
 * Per target two load shapes: a fixed open-loop rate below every endpoint's knee (the generator's
 * share is then the same for all), and saturation (closed loop: autocannon like the seed runs, or wrk with
 * --cpu-generator wrk, tools/bench/lib/wrk.js);
 * and two id sets: 1..idRange at random (the seed runs) and the seed's own id=1. Rounds: each
 * round measures every case once, so what drifts meanwhile (other users of the cores) touches
 * all cases alike and ratios are paired per round. The math is in cpu-report.js.
 *
 * An endpoint that serves OFREP (`ofrep` on, no API keys) is measured a second time through its
 * OFREP bulk evaluation (`<endpoint> ofrep` cases: every flag of the same id), in the same rounds
 * with the same ids and load shapes, right after its JSONP cases.
 */

const { setTimeout: sleep } = require('node:timers/promises')
const { BASELINE, cpuRun, summarizeCases, summarizeIdle } = require('./cpu-report')
const { createSampler } = require('./proc-sampler')
const { createPathPicker } = require('./paths')
const { scrapeTraffic, trafficDelta, trafficRun } = require('./hbase-traffic')

/** sample5 with an access log that keeps no rollups (declared by tools/bench/run.js): what rollups cost. */
const NO_ROLLUP_ENDPOINT = 'sample5_norollup'
/** What a measured run costs besides its seconds of load (the load worker's start, the counters' scrapes), for planning. */
const RUN_OVERHEAD_MS = 2000

/**
 * How to ready a cached endpoint for its OFREP runs, which follow its JSONP runs. An OFREP
 * evaluation makes an entry's flags on its first request and keeps them with the entry
 * (api/public/ofrep/flag-sets.js), so a sweep in the OFREP view makes them for every entry cached. When
 * the entries the JSONP sweep loaded stay fresh through that sweep and the range runs, that one
 * sweep is enough. Otherwise they would expire during the runs (a refresh read each, then a new
 * entry whose flags are made again): wait until every one is stale, then a JSONP sweep reloads
 * them all (a stale entry is served while it refreshes) and an OFREP sweep makes the new entries' flags.
 * @param {{ now: number, loaded: { started: number, ended: number }, ttlMs: number, sweepMs: number, runsMs: number }} t
 *   loaded: when the JSONP sweep ran (ms); sweepMs: what an OFREP sweep is expected to take;
 *   runsMs: the range runs that follow it
 * @returns {{ waitMs: number, sweeps: Array<'jsonp'|'ofrep'>, fits: boolean }} fits: whether the
 *   entries stay fresh until the range runs end (else some are refreshed during them)
 */
function ofrepSweeps ({ now, loaded, ttlMs, sweepMs, runsMs }) {
  if (now + sweepMs + runsMs < loaded.started + ttlMs) return { waitMs: 0, sweeps: ['ofrep'], fits: true }
  return {
    waitMs: Math.max(0, loaded.ended + ttlMs + 1000 - now),
    sweeps: ['jsonp', 'ofrep'],
    fits: loaded.ended - loaded.started + sweepMs + runsMs < ttlMs
  }
}

/**
 * @param {{ params: Record<string, any>, names: string[], settings: any, env: any, server: { pid?: number },
 *   log: (line: string) => void, ledger: (endpoint: string, r: { ok: number, sent: number }) => void }} ctx
 *   the shared scenario context (scenarios.js)
 * @param {(ctx: any, job: object, where?: object) => Promise<any>} run one load job,
 *   ledgered, with its server-side view (scenarios.js)
 * @returns {Promise<{ title: string, description: string, parameters: object, idle: object, cases: Record<string, object>,
 *   ofrepSweeps: object[], hbaseTotal: object }>} ofrepSweeps: how the cache was readied for each OFREP range (ofrepSweeps())
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
  // OFREP beside JSONP where the endpoint serves it without an API key (the bench sends none).
  const ofrepOn = (n) => Boolean(ctx.settings.endpoints[n].ofrep) && !ctx.settings.endpoints[n].ofrep.apiKeys?.length
  const rateLabel = `@ ${p.cpuRate.toLocaleString('en-US')} req/s`
  const shapes = [
    { shape: 'rate', label: rateLabel, job: { generator: 'open-loop', rate: p.cpuRate } },
    { shape: 'saturation', label: 'closed loop', job: { generator: p.cpuGenerator } }
  ]
  const idSets = [{ ids: 'range', label: `ids 1..${p.idRange}`, idRange: p.idRange }, { ids: 'one', label: 'id=1', idRange: 1 }]
  /** @type {(endpoint: string, idRange: number, view?: 'jsonp'|'ofrep') => import('./paths').PathSpec} */
  const paths = (endpoint, idRange, view = 'jsonp') => ({ endpoint, kind: 'random', view, idRange, missRatio: 0 })
  /** @type {Record<string, { target: string, view: string, ids: string, shape: string, offeredRate: number, connections: number,
   *   runs: object[] }>} */
  const cases = {}
  /** @type {Array<{ round: number, appUsPerS: number|null, baselineUsPerS: number|null, hbaseUsPerS: number|null }>} */
  const idleRuns = []
  /** @type {Array<{ round: number, target: string, waitMs: number, sweeps: string[], fits: boolean }>} how each OFREP range was readied */
  const ofrepPlans = []
  /** @type {Record<string, number>} the last OFREP sweep's length per endpoint (ms) */
  const ofrepSweepMs = {}

  const baselineServer = await ctx.env.startBaseline()
  const bare = { target: { host: ctx.env.address('app'), port: ctx.env.baselinePort }, server: baselineServer, noLedger: true }
  // The baseline answers every path with the same body; it gets sample1's paths, so the
  // generator does the same work.
  const whereOf = (target) => (target === BASELINE ? bare : {})
  const endpointOf = (target) => (target === BASELINE ? 'sample1' : target)
  // The server's HBase traffic counters, read around each run (outside its CPU sample).
  const metricsUrl = `http://${ctx.env.address('app')}:${ctx.env.port + 1}/metrics`
  const traffic = () => scrapeTraffic(metricsUrl)

  const keyOf = (target, idSet, shape, view) =>
    `${target === BASELINE ? 'bare node:http' : `${target}${view === 'ofrep' ? ' ofrep' : ''} ${idSet.label}`} ${shape.label}`
  /** A case's record, made on first use: the tables list the cases in that order. */
  const caseOf = (target, idSet, shape, view) => (cases[keyOf(target, idSet, shape, view)] ??= {
    target,
    view,
    ids: idSet.ids,
    shape: shape.shape,
    offeredRate: shape.shape === 'rate' ? p.cpuRate : 0,
    connections: p.connections,
    runs: []
  })

  /** One run of a case; view: 'jsonp' or 'ofrep' (the endpoint's OFREP bulk evaluation). */
  async function measure (target, idSet, shape, roundNo, view = /** @type {'jsonp'|'ofrep'} */ ('jsonp')) {
    const key = keyOf(target, idSet, shape, view)
    const before = target === BASELINE ? null : await traffic()
    const r = await run(
      ctx,
      { ...shape.job, connections: p.connections, durationMs: p.cpuSeconds * 1000, paths: paths(endpointOf(target), idSet.idRange, view) },
      whereOf(target)
    )
    const one = cpuRun(r, roundNo)
    if (before) one.hbase = trafficRun(trafficDelta(before, await traffic()), r.requests)
    caseOf(target, idSet, shape, view).runs.push(one)
    ctx.log(`cpu ${roundNo + 1}/${p.cpuRuns} ${key}: ${r.rps} req/s, app ${one.appUsPerReq} µs/req (${one.appCpuSource}), ` +
      `HBase ${one.hbaseUsPerReq}, load gen ${one.generatorUsPerReq}, p99 ${r.p99} ms, errors ${r.errors}, non-200 ${one.non200}` +
      (one.hbase ? `, HBase frames ${one.hbase.framesPerReq}/req, socket writes ${one.hbase.socketWritesPerReq}/req` : ''))
  }

  /**
   * Every worker's cache holding each id, fresh (within its TTL), for the runs that follow: the
   * hit path; in the OFREP view, with each entry's flags made too.
   * @returns {Promise<{ started: number, ended: number }>}
   */
  async function sweep (target, view) {
    const passes = p.workers * 3
    const started = Date.now()
    const amount = p.idRange * passes
    await run(ctx, {
      generator: 'autocannon',
      connections: p.connections,
      amount,
      // Not a limit (an amount job ends when all are answered): the load worker's deadline, which
      // a busy machine (300 req/s seen) would otherwise miss.
      durationMs: Math.ceil(amount / 200) * 1000,
      paths: { endpoint: target, kind: 'sweep', view, idRange: p.idRange, passes }
    })
    return { started, ended: Date.now() }
  }

  /** One evaluation before any OFREP run: a 200 with flags, or the scenario stops (a refusal would be measured as a fast answer). */
  async function probeOfrep (target) {
    const { path, method, headers, body } = createPathPicker(paths(target, 1, 'ofrep'))()
    const res = await fetch(`http://${ctx.env.address('app')}:${ctx.env.port}${path}`, { method, headers, body })
    const text = await res.text()
    let flags = null
    try { flags = JSON.parse(text).flags } catch {}
    if (res.status !== 200 || !Array.isArray(flags)) {
      throw new Error(`cpu: ${target}'s OFREP bulk evaluation answered ${res.status}: ${text.slice(0, 200)}`)
    }
    ctx.ledger(target, { ok: 1, sent: 1 }) // its access-log entry, for the completeness check
  }

  /**
   * An endpoint's OFREP cases in a round, right after its JSONP cases; jsonpSweep: when its JSONP
   * sweep ran. The cache is readied first (ofrepSweeps), for the ids 1..idRange runs; id=1 last
   * (one entry, whose flags its first request makes).
   */
  async function ofrepCases (target, roundNo, jsonpSweep) {
    if (jsonpSweep) {
      const plan = ofrepSweeps({
        now: Date.now(),
        loaded: jsonpSweep,
        ttlMs: ctx.settings.endpoints[target].cache.ttlMs ?? 30000,
        // The last OFREP sweep's length; before one, twice the JSONP sweep's (its answers are larger).
        sweepMs: ofrepSweepMs[target] ?? 2 * (jsonpSweep.ended - jsonpSweep.started),
        runsMs: shapes.length * (p.cpuSeconds * 1000 + RUN_OVERHEAD_MS)
      })
      ofrepPlans.push({ round: roundNo, target, ...plan })
      if (plan.waitMs > 0 || !plan.fits) {
        ctx.log(`cpu ${roundNo + 1}/${p.cpuRuns} ${target} ofrep: waiting ${plan.waitMs} ms for its cache entries to go stale, then ` +
          `sweeps ${plan.sweeps.join(', ')}${plan.fits ? '' : ' (some entries may be refreshed during the range runs)'}`)
      }
      await sleep(plan.waitMs)
      for (const view of plan.sweeps) {
        const swept = await sweep(target, view)
        if (view === 'ofrep') ofrepSweepMs[target] = swept.ended - swept.started
      }
    }
    for (const idSet of idSets) for (const shape of shapes) await measure(target, idSet, shape, roundNo, 'ofrep')
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
    for (const target of endpoints.filter(ofrepOn)) await probeOfrep(target)
    if (p.warmupSeconds > 0) {
      ctx.log(`cpu: warm-up ${p.warmupSeconds} s closed loop per target (and OFREP view)`)
      /** @type {(target: string) => Array<'jsonp'|'ofrep'>} */
      const views = (target) => (target !== BASELINE && ofrepOn(target) ? ['jsonp', 'ofrep'] : ['jsonp'])
      for (const target of [BASELINE, ...endpoints]) {
        for (const view of views(target)) {
          await run(
            ctx,
            {
              generator: p.cpuGenerator,
              connections: p.connections,
              durationMs: p.warmupSeconds * 1000,
              paths: paths(endpointOf(target), p.idRange, view)
            },
            whereOf(target)
          )
        }
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
        const swept = cached(target) ? await sweep(target, 'jsonp') : null
        for (const idSet of idSets) for (const shape of shapes) await measure(target, idSet, shape, roundNo)
        if (ofrepOn(target)) await ofrepCases(target, roundNo, swept)
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
      'endpoint\'s knee, so the generator\'s share is the same for all), and closed loop ' +
      `(${p.cpuGenerator === 'wrk' ? 'wrk, 2 threads' : 'autocannon, like the seed runs'}), both on ` +
      `${p.connections} keep-alive connections; ids 1..${p.idRange} at random as in the seed runs, or the seed's own id=1. Cached ` +
      'endpoints are swept over all ids (every worker) right before their runs of each round, so these are cache hits (an entry past its ' +
      `TTL costs a refresh read besides). app = every process and thread of the server cluster, ${p.workers} worker(s) (or of the bare ` +
      `node:http cluster), from /proc, to the µs from the threads' run time (${fromThreads} of ${all.length} runs; the others from 10 ` +
        'ms ' +
      'ticks); "above idle" subtracts what the same processes burn with no load, per request at the run\'s rate (timers, polls; the idle ' +
      'line below); HBase = the HBase JVM, all threads (on loopback the shared dev instance: anything else using it counts too); "HBase ' +
      'above sample1" subtracts sample1\'s in the same round at the same rate (sample1 never asks HBase); load gen = the load worker\'s ' +
      'own CPU (process.cpuUsage). Only 200 answers count: CPU µs per 200 answer, req/s = 200s per second. `<endpoint> ofrep` = the ' +
      'OFREP bulk evaluation of the same ids (POST .../ofrep/v1/evaluate/flags, every flag of the id), measured right after the ' +
      'endpoint\'s JSONP cases in each round, after a sweep in the OFREP view (so each cached entry\'s flags are made).',
    parameters: {
      rate: p.cpuRate,
      runs: p.cpuRuns,
      seconds: p.cpuSeconds,
      connections: p.connections,
      idRange: p.idRange,
      workers: p.workers,
      endpoints,
      ofrep: endpoints.filter(ofrepOn)
    },
    idle: summarizeIdle(idleRuns),
    cases: summarizeCases(cases, idleRuns),
    ofrepSweeps: ofrepPlans,
    // Everything the server sent to HBase over the scenario (warm-ups and sweeps included), beside
    // the access-log rows written meanwhile: what the rollups cost per logged row.
    hbaseTotal: { seconds: Math.round(Number(process.hrtime.bigint() - started) / 1e9), ...whole }
  }
}

module.exports = { cpu, ofrepSweeps, NO_ROLLUP_ENDPOINT }
