'use strict'

/**
 * The cpu scenario's math and the report's first tables, kept pure so they are tested on fixed
 * inputs: per-run CPU per request, medians with their spread over the runs, ratios paired per
 * round (each round measures every case, so what drifts between rounds cancels), and the
 * markdown that opens the report — the seed's table beside ours, with what each layer costs.
 */

const { SEED, round, fmt } = require('./report')
const { summarizeTraffic, trafficTables, totalLines, rollupJobLines } = require('./hbase-traffic')

/** The bare node:http baseline's target name in the cpu scenario's cases. */
const BASELINE = 'baseline'

/**
 * Median, min and max of the finite numbers among `values` (the spread over runs).
 * @param {Array<number|null|undefined>} values
 * @param {number} [digits]
 * @returns {{ median: number, min: number, max: number, n: number }|null} null without a number
 */
function stats (values, digits = 2) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (!v.length) return null
  const mid = v.length >> 1
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2
  return { median: round(median, digits), min: round(v[0], digits), max: round(v[v.length - 1], digits), n: v.length }
}

/**
 * @param {number|null|undefined} cpuUs
 * @param {number} requests
 * @returns {number|null} µs per request; null when either is unknown or nothing was answered
 */
function perRequest (cpuUs, requests) {
  if (typeof cpuUs !== 'number' || !(requests > 0)) return null
  return round(cpuUs / requests, 2)
}

/**
 * One measured run of a case, from a load job's summary with its server-side view. Only 200
 * answers count when the job counted statuses (`statusCounts`): CPU per 200 answer and 200s per
 * second, so that an answer refused fast (an OFREP 400) never looks like a cheap one.
 * @param {{ rps: number, requests: number, p50?: number, p99?: number, errors?: number, non2xx?: number,
 *   statusCounts?: Record<string, number>, generatorCpuUs?: number,
 *   server?: Record<string, { cpuUs?: number|null, cpuSource?: string|null }> }} r
 * @param {number} roundNo the round it belongs to (pairs it with the other cases' runs)
 * @returns {Record<string, any>}
 */
function cpuRun (r, roundNo) {
  const sv = r.server || {}
  const app = sv.app?.cpuUs ?? null
  const hbase = sv.hbase?.cpuUs ?? null
  const generator = r.generatorCpuUs ?? null
  const ok200 = r.statusCounts ? r.statusCounts['200'] || 0 : null
  const answered = ok200 ?? r.requests
  return {
    round: roundNo,
    rps: answered === r.requests ? r.rps : round(r.rps * answered / r.requests, 2),
    requests: r.requests,
    ok200,
    non200: ok200 === null ? null : r.requests - ok200,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    appCpuUs: app,
    appCpuSource: sv.app?.cpuSource ?? null,
    hbaseCpuUs: hbase,
    generatorCpuUs: generator,
    appUsPerReq: perRequest(app, answered),
    hbaseUsPerReq: perRequest(hbase, answered),
    generatorUsPerReq: perRequest(generator, answered)
  }
}

/**
 * f(run, reference run) for every round both measured.
 * @param {Array<Record<string, any>>} runs
 * @param {Array<Record<string, any>>} refRuns
 * @param {(a: Record<string, any>, b: Record<string, any>) => number|null} f
 * @returns {number[]}
 */
function paired (runs, refRuns, f) {
  const ref = new Map(refRuns.map((r) => [r.round, r]))
  return runs.filter((r) => ref.has(r.round)).map((r) => f(r, ref.get(r.round))).filter((v) => typeof v === 'number' && Number.isFinite(v))
}

const ratioOf = (key) => (a, b) => (typeof a[key] === 'number' && b[key] > 0 ? a[key] / b[key] : null)
const differenceOf = (key) => (a, b) => (typeof a[key] === 'number' && typeof b[key] === 'number' ? a[key] - b[key] : null)
/** An OFREP case's app CPU and req/s against its endpoint's JSONP case (same ids and shape), paired per round. */
const versusJsonp = (runs, jsonp) => ({
  vsJsonp: jsonp ? stats(paired(runs, jsonp.runs, ratioOf('appUsPerReq')), 3) : null,
  rpsVsJsonp: jsonp ? stats(paired(runs, jsonp.runs, ratioOf('rps')), 3) : null
})

/**
 * The CPU per request a run's processes would have burnt with no load: their idle CPU per second
 * in the same round over the run's requests per second.
 * @param {Record<string, any>} run
 * @param {Record<string, any>|undefined} idleRun
 * @param {string} key appUsPerS, baselineUsPerS or hbaseUsPerS
 * @returns {number|null}
 */
function idlePerRequest (run, idleRun, key) {
  return idleRun && typeof idleRun[key] === 'number' && run.rps > 0 ? idleRun[key] / run.rps : null
}

/**
 * The idle samples of the rounds: CPU µs per second of the server cluster, the baseline cluster
 * and the HBase JVM with no load.
 * @param {Array<{ round: number, appUsPerS: number|null, baselineUsPerS: number|null, hbaseUsPerS: number|null }>} idleRuns
 * @returns {{ appUsPerS: object|null, baselineUsPerS: object|null, hbaseUsPerS: object|null, runs: object[] }}
 */
function summarizeIdle (idleRuns) {
  const column = (k) => stats(idleRuns.map((r) => r[k]), 0)
  return { appUsPerS: column('appUsPerS'), baselineUsPerS: column('baselineUsPerS'), hbaseUsPerS: column('hbaseUsPerS'), runs: idleRuns }
}

/**
 * Each case's medians and spreads, and its ratios against sample1 (same ids, same load shape)
 * and the bare node:http baseline (same load shape), paired per round; an OFREP case's also
 * against the JSONP view of its endpoint (same ids, same load shape).
 * @param {Record<string, { target: string, view?: string, ids: string, shape: string, runs: Array<Record<string, any>> }>} cases
 *   view: 'jsonp' (the default) or 'ofrep' (the OFREP bulk evaluation); ids: 'range' (1..idRange)
 *   or 'one' (id=1); shape: 'rate' (fixed open-loop rate) or 'saturation'
 * @param {Array<Record<string, any>>} [idleRuns] the rounds' idle samples (summarizeIdle)
 * @returns {Record<string, Record<string, any>>} the cases with rps, p99, appUsPerReq, hbaseUsPerReq,
 *   generatorUsPerReq, non200 (answers other than 200, all rounds; null without status counts),
 *   vsSample1 (app CPU), vsBaseline (app CPU), rpsVsSample1, appAboveIdle and hbaseAboveIdle (with
 *   idle samples), at the fixed rate (same rate, so the same HBase background per request)
 *   hbaseAboveSample1, and for an OFREP case vsJsonp (app CPU) and rpsVsJsonp
 */
function summarizeCases (cases, idleRuns = []) {
  const idleOf = new Map(idleRuns.map((r) => [r.round, r]))
  const find = (target, ids, shape, view = 'jsonp') => Object.values(cases).find((c) => c.target === target && c.ids === ids &&
    c.shape === shape && (c.view || 'jsonp') === view)
  /** @type {Record<string, Record<string, any>>} */
  const out = {}
  for (const [key, c] of Object.entries(cases)) {
    const s1 = find('sample1', c.target === BASELINE ? 'range' : c.ids, c.shape)
    const bare = find(BASELINE, 'range', c.shape)
    const non200 = c.runs.map((r) => r.non200).filter((n) => typeof n === 'number')
    const column = (k, digits) => stats(c.runs.map((r) => r[k]), digits)
    const aboveIdle = (runs, k, idleKey) => stats(runs.map((r) => {
      const background = idlePerRequest(r, idleOf.get(r.round), idleKey)
      return typeof r[k] === 'number' && background !== null ? r[k] - background : null
    }))
    out[key] = {
      ...c,
      rps: column('rps', 0),
      p99: column('p99', 3),
      appUsPerReq: column('appUsPerReq'),
      hbaseUsPerReq: column('hbaseUsPerReq'),
      generatorUsPerReq: column('generatorUsPerReq'),
      non200: non200.length ? non200.reduce((a, b) => a + b, 0) : null,
      ...(c.view === 'ofrep' ? versusJsonp(c.runs, find(c.target, c.ids, c.shape)) : {}),
      vsSample1: s1 ? stats(paired(c.runs, s1.runs, ratioOf('appUsPerReq')), 3) : null,
      vsBaseline: bare ? stats(paired(c.runs, bare.runs, ratioOf('appUsPerReq')), 3) : null,
      rpsVsSample1: s1 ? stats(paired(c.runs, s1.runs, ratioOf('rps')), 3) : null,
      hbaseAboveSample1: s1 && c.shape === 'rate' ? stats(paired(c.runs, s1.runs, differenceOf('hbaseUsPerReq'))) : null,
      appAboveIdle: aboveIdle(c.runs, 'appUsPerReq', c.target === BASELINE ? 'baselineUsPerS' : 'appUsPerS'),
      hbaseAboveIdle: aboveIdle(c.runs, 'hbaseUsPerReq', 'hbaseUsPerS'),
      hbase: summarizeTraffic(c.runs, stats)
    }
  }
  return out
}

/**
 * "61.2 (58.9–64)": the median and, over more than one run, the spread.
 * @param {{ median: number, min: number, max: number, n: number }|null|undefined} s
 * @returns {string}
 */
function spread (s) {
  if (!s) return ''
  return s.n > 1 ? `${s.median} (${s.min}–${s.max})` : String(s.median)
}

/**
 * The report's first table: per endpoint the seed's published throughput beside ours, and what
 * each layer costs in CPU per request (the cpu scenario's; the seed table alone has no CPU
 * figures to set beside the seed's).
 * @param {{ endpoints?: Record<string, any>, baseline?: any, scenarios?: Record<string, any> }} report
 * @returns {string[]} markdown lines (none when the cpu scenario did not run)
 */
function glanceTable (report) {
  const seedRuns = report.endpoints || {}
  const cpu = report.scenarios && report.scenarios.cpu
  if (!cpu) return []
  const cases = Object.values(cpu.cases)
  const caseOf = (target, shape) => cases.find((c) => c.target === target && c.ids === 'range' && c.shape === shape && c.view !== 'ofrep')
  const names = [...new Set([...Object.keys(SEED), ...Object.keys(seedRuns), ...cases.map((c) => c.target)])]
    .filter((n) => n !== BASELINE && (seedRuns[n] || caseOf(n, 'rate') || caseOf(n, 'saturation')))
  if (!names.length) return []
  const one = (v) => (typeof v === 'number' ? String(v) : '')
  const ours = (name) => {
    const e = name === BASELINE ? report.baseline : seedRuns[name]
    if (e) {
      return { rps: fmt(e.rps), ratio: name === BASELINE ? one(seedRuns.sample1 && round(e.rps / seedRuns.sample1.rps, 3)) : one(e.ratio) }
    }
    const sat = caseOf(name, 'saturation')
    return sat ? { rps: sat.rps ? fmt(sat.rps.median) : '', ratio: spread(sat.rpsVsSample1) } : { rps: '', ratio: '' }
  }
  // At saturation first: the CPU a request costs when the host is busy decides how many hosts
  // a load needs; the fixed rate adds the per-wake-up cost a lightly loaded host pays.
  const costs = (name) => {
    const sat = caseOf(name, 'saturation')
    const rate = caseOf(name, 'rate')
    return [
      spread(sat?.appUsPerReq),
      spread(sat?.vsSample1),
      spread(sat?.hbaseAboveIdle),
      spread(rate?.appUsPerReq),
      spread(rate?.vsSample1),
      spread(rate?.hbaseAboveSample1)
    ]
  }
  const lines = [
    '## What each layer costs: the seed beside beacon',
    '',
    '| endpoint | seed req/s | seed vs sample1 | beacon req/s | beacon vs sample1 | app CPU µs/req at ' +
      'saturation | vs sample1 | HBase CPU µs/req at saturation | app CPU µs/req at ' +
      `${fmt(cpu.parameters.rate)} req/s | vs sample1 | HBase CPU µs/req above sample1 |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const name of names) {
    const seed = SEED[name]
    const o = ours(name)
    lines.push(`| ${name} | ${seed ? fmt(seed.rps) : ''} | ${seed ? round(seed.rps / SEED.sample1.rps, 3) : ''} ` +
      `| ${o.rps} | ${o.ratio} | ${costs(name).join(' | ')} |`)
  }
  if (report.baseline || caseOf(BASELINE, 'rate') || caseOf(BASELINE, 'saturation')) {
    const o = ours(BASELINE)
    lines.push(`| bare node:http (same body) | | | ${o.rps} | ${o.ratio} | ${costs(BASELINE).join(' | ')} |`)
  }
  const s1 = caseOf('sample1', 'rate')
  lines.push('', 'Seed: its published run (../shared/seed-benchmark.md; 3 VMs, wrk, id=1). beacon req/s: ' +
    `${Object.keys(seedRuns).length ? 'the seed protocol below (closed loop, ids 1..N)' : 'the cpu scenario at saturation (median)'}. ` +
    `CPU: the cpu scenario, ids 1..${cpu.parameters.idRange}, at saturation (closed loop) and at ${fmt(cpu.parameters.rate)} req/s ` +
    `(open loop), median (min–max) of ${cpu.parameters.runs} run(s), ratios paired per round; app = every process and thread of the ` +
    'server; HBase at saturation = the JVM\'s CPU per request above its idle; at the fixed rate, above sample1\'s in the same round ' +
    '(sample1 never asks HBase: that is its ' +
    `background).${s1 && s1.vsBaseline
      ? ` sample1 costs ${spread(s1.vsBaseline)}× the CPU of bare node:http writing the same body.`
      : ''}`)
  // The rollup job's cost, beside the endpoints' (its process serves no request).
  if (cpu.hbaseTotal) lines.push('', ...rollupJobLines(cpu.hbaseTotal))
  return [...lines, '']
}

/**
 * The cpu scenario's own tables: every case at the fixed rate, then at saturation, then the OFREP
 * cases beside the JSONP ones.
 * @param {{ description?: string, parameters: { rate: number, idRange: number },
 *   idle?: { appUsPerS: any, baselineUsPerS: any, hbaseUsPerS: any, runs: object[] }, cases: Record<string, Record<string, any>>,
 *   hbaseTotal?: any }} cpu hbaseTotal: the HBase traffic over the whole scenario (cpu.js)
 * @returns {string[]} markdown lines
 */
function cpuTables (cpu) {
  const lines = ['## CPU per request', '', cpu.description || '', '']
  const idle = cpu.idle
  if (idle && idle.runs.length) {
    const perReq = (st) => (st
      ? ` (${round(st.median / cpu.parameters.rate, 2)} µs per request at ${fmt(cpu.parameters.rate)} req/s)`
      : '')
    lines.push(`Idle, CPU µs per second: the server cluster ${spread(idle.appUsPerS)}${perReq(idle.appUsPerS)}, bare ` +
      `node:http ${spread(idle.baselineUsPerS)}, HBase ${spread(idle.hbaseUsPerS)}${perReq(idle.hbaseUsPerS)}.`, '')
  }
  const shapes = [['rate', `At ${fmt(cpu.parameters.rate)} req/s (open loop)`], ['saturation', 'At saturation (closed loop)']]
  for (const [shape, title] of shapes) {
    const rows = Object.entries(cpu.cases).filter(([, c]) => c.shape === shape)
    if (!rows.length) continue
    lines.push(`### ${title}`, '',
      '| case | req/s | app CPU µs/req | app above idle | vs sample1 | vs bare node:http | HBase CPU µs/req | HBase above idle | HBase ' +
        'above sample1 | load gen CPU µs/req | p99 ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const [key, c] of rows) {
      lines.push(`| ${key} | ${spread(c.rps)} | ${spread(c.appUsPerReq)} | ${spread(c.appAboveIdle)} | ` +
        `${spread(c.vsSample1)} | ${spread(c.vsBaseline)} | ${spread(c.hbaseUsPerReq)} | ${spread(c.hbaseAboveIdle)} ` +
        `| ${spread(c.hbaseAboveSample1)} | ${spread(c.generatorUsPerReq)} | ${spread(c.p99)} |`)
    }
    lines.push('')
  }
  return [...lines, ...ofrepTable(cpu), ...trafficTables(cpu.cases, spread, cpu.parameters.rate), ...totalLines(cpu.hbaseTotal)]
}

/**
 * The OFREP bulk evaluation beside the JSONP view of the same endpoint: per endpoint, id set and
 * load shape, 200s per second and app CPU µs per 200 of each, and OFREP/JSONP paired per round.
 * @param {{ parameters: { rate: number, idRange: number }, cases: Record<string, Record<string, any>> }} cpu
 * @returns {string[]} markdown lines (none without an OFREP case)
 */
function ofrepTable (cpu) {
  const all = Object.values(cpu.cases)
  const ofrep = all.filter((c) => c.view === 'ofrep')
  if (!ofrep.length) return []
  const jsonpOf = (c) => all.find((j) => j.target === c.target && j.ids === c.ids && j.shape === c.shape && (j.view || 'jsonp') === 'jsonp')
  const n = (v) => (typeof v === 'number' ? String(v) : '')
  const lines = ['### OFREP bulk evaluation beside the JSONP view', '',
    'The same endpoint, ids, load and rounds: `POST /api/<endpoint>/ofrep/v1/evaluate/flags` with ' +
      '`{"context":{"targetingKey":"<id>"}}` (every flag of the id\'s config, with its ETag; no If-None-Match, so no 304) beside ' +
      '`GET /api/<endpoint>.js?id=<id>&callback=EXAMPLE.process`. Only 200 answers count (req/s = 200s per second, CPU per 200), so ' +
      'an error answered fast cannot look cheap. OFREP/JSONP is paired per round. The cached endpoints\' OFREP runs are cache hits ' +
      'with each entry\'s flags already made (a sweep in the OFREP view before them; see tools/bench/README.md).', '',
    '| endpoint | ids | load | JSONP req/s | OFREP req/s | OFREP/JSONP req/s | JSONP app CPU µs/req | OFREP app CPU µs/req | ' +
      'OFREP/JSONP app CPU | non-200 JSONP / OFREP |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|']
  for (const c of ofrep) {
    const j = jsonpOf(c) || {}
    const ids = c.ids === 'one' ? 'id=1' : `1..${cpu.parameters.idRange}`
    const load = c.shape === 'rate' ? `${fmt(cpu.parameters.rate)} req/s` : 'closed loop'
    lines.push(`| ${c.target} | ${ids} | ${load} | ${spread(j.rps)} | ${spread(c.rps)} | ${spread(c.rpsVsJsonp)} | ` +
      `${spread(j.appUsPerReq)} | ${spread(c.appUsPerReq)} | ${spread(c.vsJsonp)} | ${n(j.non200)} / ${n(c.non200)} |`)
  }
  return [...lines, '']
}

/**
 * What opens the markdown report: the glance table, then the cpu scenario's tables if it ran.
 * @param {{ endpoints?: Record<string, any>, baseline?: any, scenarios?: Record<string, any> }} report
 * @returns {string[]}
 */
function leadSection (report) {
  const cpu = report.scenarios && report.scenarios.cpu
  return [...glanceTable(report), ...(cpu ? cpuTables(cpu) : [])]
}

module.exports = {
  BASELINE,
  stats,
  perRequest,
  cpuRun,
  paired,
  summarizeIdle,
  summarizeCases,
  spread,
  glanceTable,
  cpuTables,
  ofrepTable,
  leadSection
}
