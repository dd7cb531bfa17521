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
 * Markdown table of a benchmark report.
 * @param {{ endpoints: Record<string, object>, baseline?: object, machine: object, parameters: object, date: string }} report
 * @returns {string}
 */
function markdownReport (report) {
  const head = '| endpoint | req/s | vs sample1 | vs bare node:http | mean ms | σ ms | p50 | p90 | p99 | p99.9 | non-2xx | errors | lost | seed req/s | seed ratio |'
  const rule = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  const seed1 = SEED.sample1.rps
  const rows = Object.entries(report.endpoints).map(([name, e]) => {
    const seed = SEED[name]
    const vsBase = report.baseline ? round(e.rps / report.baseline.rps, 3) : ''
    return `| ${name} | ${fmt(e.rps)} | ${e.ratio ?? ''} | ${vsBase} | ${e.latencyMean} | ${e.latencyStdev} | ${e.p50} | ${e.p90} | ${e.p99} | ${e.p999} | ${e.non2xx} | ${e.errors} | ${e.lost ?? 'n/a'} | ${seed ? fmt(seed.rps) : ''} | ${seed ? round(seed.rps / seed1, 3) : ''} |`
  })
  if (report.baseline) {
    const b = report.baseline
    rows.push(`| bare node:http (baseline) | ${fmt(b.rps)} | | 1 | ${b.latencyMean} | ${b.latencyStdev} | ${b.p50} | ${b.p90} | ${b.p99} | ${b.p999} | ${b.non2xx} | ${b.errors} | | | |`)
  }
  const p = report.parameters
  const m = report.machine
  return [
    `# Beacon benchmark — ${report.date}${p.label ? ` (${p.label})` : ''}`,
    '',
    `Machine: ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB, node ${m.node}, HBase ${m.hbaseVersion}; topology: ${m.topology}.`,
    `Load: autocannon, ${p.connections} connections, ${p.runs} run(s) of ${p.durationSeconds} s after ${p.warmupSeconds} s warm-up, ids 1..${p.idRange} with miss ratio ${p.missRatio}; second-best run reported (seed protocol). Server: ${p.workers} worker(s); baseline: bare node:http with the same process count.`,
    '',
    head,
    rule,
    ...rows,
    '',
    'lost = 2xx responses minus access-log entries found afterwards (file lines for file sinks, HBase rows for HBase sinks).',
    ''
  ].join('\n')
}

function round (n, digits) {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

function fmt (n) {
  return Math.round(n).toLocaleString('en-US')
}

module.exports = { SEED, secondBest, summarizeRun, withRatios, markdownReport }
