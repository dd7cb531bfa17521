'use strict'

/**
 * The report's charts, from a finished report object: throughput vs the seed, latency
 * percentiles per endpoint and the rate-sweep latency curves.
 */

const { barChart, lineChart } = require('./svg')
const { SEED } = require('./report')

/**
 * @param {{ endpoints: Record<string, any>, baseline?: any, parameters?: { connections?: number },
 *   scenarios?: { sweep?: any } }} report
 * @returns {Record<string, string>} chart name ('throughput', 'latency', 'sweep') -> SVG; absent
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
  return charts
}

module.exports = { buildCharts }
