'use strict'

/**
 * Report math for the benchmark, kept pure so it is tested on fixed inputs.
 */

/** The seed's published run (../shared/seed-benchmark.md), for side-by-side columns. */
const SEED = Object.freeze({
  sample1: { rps: 12636.18, latencyMean: 8.36, latencyStdev: 5.75 },
  sample2: { rps: 8063.61, latencyMean: 12.42, latencyStdev: 3.10 },
  sample3: { rps: 11556.05, latencyMean: 9.07, latencyStdev: 5.91 },
  sample4: { rps: 2883.61, latencyMean: 34.70, latencyStdev: 4.96 },
  sample5: { rps: 93.14, latencyMean: 1070.00, latencyStdev: 129.72 }
})

/**
 * The seed's protocol: of N runs, report the one with the second-best throughput
 * (the best run alone when there is only one).
 * @param {Array<{ rps: number }>} runs
 * @returns {object} that run
 */
function secondBest (runs) {
  if (!runs.length) throw new RangeError('no runs')
  const sorted = [...runs].sort((a, b) => b.rps - a.rps)
  return sorted[Math.min(1, sorted.length - 1)]
}

/**
 * Summary of one autocannon result.
 * @param {object} result autocannon result
 * @returns {{ rps: number, latencyMean: number, latencyStdev: number, p50: number, p90: number,
 *   p99: number, p999: number, requests: number, ok: number, non2xx: number, errors: number }}
 */
function summarizeRun (result) {
  const seconds = (result.finish - result.start) / 1000 || result.duration
  const total = result['2xx'] + result.non2xx
  return {
    rps: round(total / seconds, 2),
    latencyMean: round(result.latency.mean, 3),
    latencyStdev: round(result.latency.stddev, 3),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    requests: total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}

/**
 * Adds `ratio` (throughput relative to `reference`, e.g. sample1) to each endpoint summary.
 * @param {Record<string, { rps: number }>} endpoints
 * @param {string} reference endpoint name
 * @returns {Record<string, object>}
 */
function withRatios (endpoints, reference) {
  const base = endpoints[reference] && endpoints[reference].rps
  const out = {}
  for (const [name, summary] of Object.entries(endpoints)) {
    out[name] = { ...summary, ratio: base ? round(summary.rps / base, 3) : null }
  }
  return out
}

/**
 * Population standard deviation (σ), e.g. of the runs' throughputs.
 * @param {number[]} values
 * @returns {number|null} null for no values
 */
function stdev (values) {
  if (!values.length) return null
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length)
}

/**
 * CPU milliseconds spent per 1,000 requests answered.
 * @param {number|null} cpuMs
 * @param {number} requests
 * @returns {number|null} null when either is unknown or no request was answered
 */
function costPer1k (cpuMs, requests) {
  if (cpuMs === null || cpuMs === undefined || !(requests > 0)) return null
  return round(cpuMs / (requests / 1000), 2)
}

/**
 * Attaches the server-side view of a run (from proc-sampler) to its summary: per role, CPU ms,
 * CPU ms per 1k requests and peak RSS (and the precise cpuUs, cpuSource, and how many processes
 * were sampled, when the sampler had them).
 * @param {{ requests: number }} summary
 * @param {Record<string, { cpuMs: number|null, peakRssMiB: number|null, cpuUs?: number|null, cpuSource?: string|null,
 *   processes?: number }>} sampled
 * @returns {object} summary with `server`
 */
function withServerView (summary, sampled) {
  const server = {}
  for (const [role, s] of Object.entries(sampled || {})) {
    server[role] = { cpuMs: s.cpuMs, cpuMsPer1k: costPer1k(s.cpuMs, summary.requests), peakRssMiB: s.peakRssMiB }
    // The same CPU to the µs where the sampler had it from the threads (proc-sampler.js).
    if (s.cpuUs !== undefined) Object.assign(server[role], { cpuUs: s.cpuUs, cpuSource: s.cpuSource })
    if (s.processes !== undefined) server[role].processes = s.processes
  }
  return { ...summary, server }
}

/**
 * Markdown of a benchmark report: the seed table, the server-side view and one section per
 * scenario (same table format).
 * @param {{ endpoints: Record<string, object>, baseline?: object, machine: object, parameters: object,
 *   date: string, scenarios?: Record<string, object>, completenessError?: string }} report
 * @param {{ lead?: string[], skip?: string[] }} [options] lead: lines that open the report, after
 *   the machine line (cpu-report.js: the seed beside beacon, CPU per request); skip: scenarios
 *   already rendered there
 * @returns {string}
 */
function markdownReport (report, { lead = [], skip = [] } = {}) {
  const head = '| endpoint | req/s | vs sample1 | vs bare node:http | mean ms | σ ms | p50 | p90 | p99 | p99.9 | non-2xx | errors | ' +
    'lost | seed req/s | seed ratio |'
  const rule = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  const seed1 = SEED.sample1.rps
  const rows = Object.entries(report.endpoints).map(([name, e]) => {
    const seed = SEED[name]
    const vsBase = report.baseline ? round(e.rps / report.baseline.rps, 3) : ''
    return `| ${name} | ${fmt(e.rps)} | ${e.ratio ?? ''} | ${vsBase} | ${e.latencyMean} | ` +
      `${e.latencyStdev} | ${e.p50} | ${e.p90} | ${e.p99} | ${e.p999} | ${e.non2xx} | ${e.errors} | ` +
      `${e.lost ?? 'n/a'} | ${seed ? fmt(seed.rps) : ''} | ${seed ? round(seed.rps / seed1, 3) : ''} |`
  })
  if (report.baseline) {
    const b = report.baseline
    rows.push(`| bare node:http (baseline) | ${fmt(b.rps)} | | 1 | ${b.latencyMean} | ${b.latencyStdev} ` +
      `| ${b.p50} | ${b.p90} | ${b.p99} | ${b.p999} | ${b.non2xx} | ${b.errors} | | | |`)
  }
  const p = report.parameters
  const m = report.machine
  const out = [
    `# Beacon benchmark — ${report.date}${p.label ? ` (${p.label})` : ''}`,
    '',
    `Machine: ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB, node ${m.node}, HBase ${m.hbaseVersion}` +
      `${m.hbaseHeap ? ` (heap ${m.hbaseHeap})` : ''}; ` +
      `topology: ${m.topology}${m.pinning ? `; CPU pinning: ${m.pinning}` : ''}.`,
    '',
    ...lead
  ]
  if (Object.keys(report.endpoints).length) {
    out.push(
      '## Seed protocol (closed loop)',
      '',
      `Load: autocannon, ${p.connections} connections, ${p.runs} run(s) of ${p.durationSeconds} s after ${p.warmupSeconds} s warm-up, ` +
        `ids 1..${p.idRange} with miss ratio ${p.missRatio}; second-best run reported (seed protocol). Server: ${p.workers} worker(s); ` +
        'baseline: bare node:http with the same process count.',
      '',
      head,
      rule,
      ...rows,
      '',
      'lost = 2xx responses (all scenarios of this run) minus access-log entries found afterwards (file lines for file sinks, HBase rows ' +
        'for HBase sinks).',
      ...(report.completenessError ? [`The entries were not counted (lost: n/a): ${report.completenessError}.`] : []),
      ...(report.endpoints.sample5_memory || report.endpoints.sample5_host
        ? ['sample5 has the default durability, process (each turn\'s entries in a write-ahead log, one write(2), before their ' +
            'answers: a killed worker loses nothing it answered); sample5_memory keeps entries in memory only (a killed worker loses ' +
            'what it held), sample5_host adds an fdatasync per group (a power loss loses nothing either): the gaps are the prices.']
        : []),
      '',
      '### Server-side view (the reported runs)',
      '',
      ...serverTable(report.endpoints, report.baseline),
      ''
    )
  }
  for (const [name, sc] of Object.entries(report.scenarios || {})) {
    if (skip.includes(name)) continue
    out.push(`## ${sc.title || name}`, '', sc.description || '', '')
    if (sc.endpoints) {
      out.push(
        '| endpoint | knee (highest rate with p99 < ' + (sc.limits ? sc.limits.kneeP99Ms : 10) + ' ms) | stopped at | why |',
        '|---|---:|---:|---|'
      )
      for (const [ep, r] of Object.entries(sc.endpoints)) {
        out.push(`| ${ep} | ${r.knee === null ? 'none' : fmt(r.knee) + ' req/s'} | ` +
          `${r.stoppedAt === null ? 'not reached' : fmt(r.stoppedAt) + ' req/s'} | ${r.stopReason || 'all steps passed'} |`)
      }
      out.push('')
    }
    if (Object.keys(sc.rows || {}).length) out.push(...scenarioTable(sc.rows), '')
  }
  return out.join('\n')
}

const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'number' ? String(v) : v)

/**
 * One table format for every scenario: a row per case, with the server-side cost.
 * @param {Record<string, object>} rows case name -> summary (withServerView)
 * @returns {string[]} markdown lines
 */
function scenarioTable (rows) {
  const lines = [
    '| case | generator | conns | offered req/s | req/s | mean ms | σ ms | p50 | p90 | p99 | p99.9 | max | non-2xx | errors | late / ' +
      'unsent | app CPU ms/1k req | HBase CPU ms/1k req | load gen CPU ms/1k req | app peak RSS MiB | HBase peak RSS MiB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const [name, r] of Object.entries(rows)) {
    const sv = r.server || {}
    const lateUnsent = r.late === undefined ? '' : `${r.late} / ${r.unsent}`
    const offered = r.offeredRate ? fmt(r.offeredRate) : ''
    lines.push(
      `| ${name} | ${cell(r.generator)} | ${cell(r.connections)} | ${offered} | ${r.rps === undefined ? '' : fmt(r.rps)} | ` +
        `${cell(r.latencyMean ?? r.mean)} | ${cell(r.latencyStdev ?? r.stdev)} | ${cell(r.p50)} | ${cell(r.p90)} | ${cell(r.p99)} | ` +
        `${cell(r.p999)} | ${cell(r.max)} | ${cell(r.non2xx)} | ${cell(r.errors)} | ${lateUnsent} | ${cell(sv.app?.cpuMsPer1k)} | ` +
        `${cell(sv.hbase?.cpuMsPer1k)} | ${cell(sv.loadgen?.cpuMsPer1k)} | ${cell(sv.app?.peakRssMiB)} | ${cell(sv.hbase?.peakRssMiB)} |`
    )
  }
  return lines
}

/**
 * The server-side view of the seed runs: CPU per 1k requests and peak RSS per role.
 * @param {Record<string, object>} endpoints
 * @param {object} [baseline]
 * @returns {string[]} markdown lines
 */
function serverTable (endpoints, baseline) {
  const lines = [
    '| endpoint | requests | app CPU ms | app CPU ms/1k req | app peak RSS MiB | HBase CPU ms/1k req | HBase peak RSS MiB | load gen CPU ' +
      'ms/1k req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  const rows = Object.entries(endpoints)
  if (baseline) rows.push(['bare node:http (baseline)', baseline])
  for (const [name, e] of rows) {
    const sv = e.server || {}
    lines.push(`| ${name} | ${fmt(e.requests || 0)} | ${cell(sv.app?.cpuMs)} | ${cell(sv.app?.cpuMsPer1k)} | ` +
      `${cell(sv.app?.peakRssMiB)} | ${cell(sv.hbase?.cpuMsPer1k)} | ${cell(sv.hbase?.peakRssMiB)} | ${cell(sv.loadgen?.cpuMsPer1k)} |`)
  }
  return lines
}

function round (n, digits) {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

function fmt (n) {
  return Math.round(n).toLocaleString('en-US')
}

module.exports = {
  SEED,
  secondBest,
  summarizeRun,
  withRatios,
  markdownReport,
  stdev,
  costPer1k,
  withServerView,
  scenarioTable,
  serverTable,
  round,
  fmt
}
