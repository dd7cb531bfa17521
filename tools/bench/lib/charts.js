'use strict'

/**
 * The report's charts, from a finished report object: throughput vs the seed, latency
 * percentiles per endpoint, the rate-sweep latency curves, and worker memory through an outage.
 */

const { barChart, lineChart } = require('./svg')
const { SEED } = require('./report')

/**
 * @param {{ endpoints: Record<string, any>, baseline?: any, parameters?: { connections?: number },
 *   scenarios?: { sweep?: any, faults?: any } }} report
 * @returns {Record<string, string>} chart name ('throughput', 'latency', 'sweep', 'memory') -> SVG; absent
 *   when there is nothing to draw
 */
function buildCharts (report) {
  /** @type {Record<string, string>} */
  const charts = {}
  const names = Object.keys(report.endpoints || {})
  if (names.length) {
    const groups = names.map((name) => ({ label: name, values: [report.endpoints[name].rps, SEED[name] ? SEED[name].rps : null] }))
    if (report.baseline) groups.push({ label: 'bare node:http', values: [report.baseline.rps, null] })
    charts.throughput = barChart({
      title: 'Throughput per endpoint: this run vs the seed (second-best of the runs)',
      yLabel: 'req/s',
      series: ['this run', 'seed (3 × 4 vCPU VMs)'],
      groups
    })
    const pct = ['p50', 'p90', 'p99', 'p999']
    charts.latency = barChart({
      title: `Latency percentiles per endpoint (seed protocol, closed loop${report.parameters
        ? `, ${report.parameters.connections} connections`
        : ''})`,
      yLabel: 'ms',
      series: ['p50', 'p90', 'p99', 'p99.9'],
      groups: names.map((name) => ({ label: name, values: pct.map((p) => report.endpoints[name][p]) }))
    })
  }
  const sweep = report.scenarios && report.scenarios.sweep
  if (sweep && Object.keys(sweep.endpoints || {}).length) {
    const series = []
    Object.entries(sweep.endpoints).forEach(([name, s], i) => {
      // One colour per endpoint: p99 solid, p50 dashed.
      series.push({ name: `${name} p50 (dashed)`, color: i, dashed: true, points: s.steps.map((st) => [st.offeredRate, st.p50]) })
      series.push({ name: `${name} p99`, color: i, points: s.steps.map((st) => [st.offeredRate, st.p99]) })
    })
    const limits = sweep.limits || {}
    const refLines = [
      ...(limits.kneeP99Ms ? [{ y: limits.kneeP99Ms, label: `knee: p99 < ${limits.kneeP99Ms} ms` }] : []),
      ...(limits.stopP99Ms ? [{ y: limits.stopP99Ms, label: `stop: p99 > ${limits.stopP99Ms} ms` }] : [])
    ]
    charts.sweep = lineChart({
      title: 'Open-loop rate sweep: latency vs offered rate (measured from due time)',
      xLabel: 'offered rate (req/s)',
      yLabel: 'latency ms (log)',
      logY: true,
      series,
      refLines
    })
  }
  const memory = report.scenarios && report.scenarios.faults && report.scenarios.faults.result && report.scenarios.faults.result.memory
  if (memory && memory.curve.length) {
    const workers = memory.summary.length
    const caps = [...new Set(memory.summary.map((w) => w.healthyPeak + memory.capMiB))]
    charts.memory = lineChart({
      title: `Worker RSS through a ${memory.outageMs / 1000} s HBase outage under load`,
      xLabel: `seconds since the load started (${phaseStarts(memory.curve)})`,
      yLabel: 'RSS MiB',
      series: Array.from({ length: workers }, (_, w) => ({
        name: `worker ${w + 1}`,
        color: w,
        points: memory.curve.map((c) => [c.s, c.rss[w]])
      })),
      refLines: caps.map((y) => ({ y, label: `cap: healthy peak + ${memory.capMiB} MiB${caps.length > 1 ? ` (${y})` : ''}`, extend: true }))
    })
  }
  return charts
}

/** @param {Array<{ s: number, phase: string }>} curve @returns {string} "outage from 15, recovering from 615, …" */
function phaseStarts (curve) {
  return curve.filter((c, i) => i > 0 && curve[i - 1].phase !== c.phase).map((c) => `${c.phase} from ${c.s}`).join(', ')
}

module.exports = { buildCharts }
