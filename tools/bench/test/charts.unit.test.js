'use strict'

const { barChart, lineChart, linearTicks } = require('../lib/svg')
const { buildCharts } = require('../lib/charts')
const { SEED } = require('../lib/report')

/**
 * A strict-enough XML check for our generated SVG: one root <svg> with the SVG namespace,
 * every tag closed in order, attributes quoted, no raw '<' or unescaped '&' in text.
 */
function assertWellFormed (svg) {
  expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
  const stack = []
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g
  let last = 0
  let m
  let roots = 0
  while ((m = tag.exec(svg))) {
    const text = svg.slice(last, m.index)
    expect(text).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot);)/)
    last = tag.lastIndex
    if (m[1]) {
      expect(stack.pop()).toBe(m[2])
    } else if (!m[4]) {
      if (!stack.length) roots++
      stack.push(m[2])
    }
  }
  expect(svg.slice(last).trim()).toBe('')
  expect(stack).toEqual([])
  expect(roots).toBe(1)
}

const count = (svg, cls) => (svg.match(new RegExp(`class="${cls}"`, 'g')) || []).length

describe('svg charts', () => {
  test('bar chart: one bar per finite value, heights proportional to the values, labels escaped', () => {
    const svg = barChart({
      title: 'a < b & c',
      yLabel: 'req/s',
      series: ['run', 'seed'],
      groups: [
        { label: 's1', values: [100, 50] },
        { label: 's<2>', values: [25, null] }
      ]
    })
    assertWellFormed(svg)
    expect(count(svg, 'bar')).toBe(3)
    expect(svg).toContain('a &lt; b &amp; c')
    const heights = [...svg.matchAll(/class="bar"[^>]*height="([\d.]+)"/g)].map((x) => Number(x[1]))
    expect(heights[0] / heights[1]).toBeCloseTo(2, 1)
    expect(heights[0] / heights[2]).toBeCloseTo(4, 1)
  })

  test('line chart: one point per finite value (non-positive dropped on a log axis), one line per series with 2+ points', () => {
    const svg = lineChart({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      logY: true,
      series: [
        {
          name: 'p50',
          points: [
            [1000, 0.5],
            [2000, 1],
            [5000, 0]
          ]
        },
        { name: 'p99', points: [[1000, 3]] }
      ]
    })
    assertWellFormed(svg)
    expect(count(svg, 'point')).toBe(3)
    expect(count(svg, 'line')).toBe(1)
    // Higher latency is drawn higher (smaller y).
    const ys = [...svg.matchAll(/class="point" cx="[\d.]+" cy="([\d.]+)"/g)].map((x) => Number(x[1]))
    expect(ys[1]).toBeLessThan(ys[0])
  })

  test('ticks are round and cover the maximum', () => {
    expect(linearTicks(95)).toEqual([0, 20, 40, 60, 80, 100])
    expect(linearTicks(12636)).toEqual([0, 5000, 10000, 15000])
    expect(linearTicks(0)).toEqual([0, 1])
  })

  test('buildCharts: throughput vs the seed per endpoint (+ baseline), percentiles per endpoint, sweep p50/p99 per endpoint', () => {
    const e = (rps) => ({ rps, p50: 1, p90: 2, p99: 3, p999: 4 })
    const steps = [{ offeredRate: 1000, p50: 0.3, p99: 1 }, { offeredRate: 2000, p50: 0.5, p99: 20 }]
    const charts = buildCharts({
      endpoints: { sample1: e(14000), sample5: e(9000) },
      baseline: e(16000),
      scenarios: { sweep: { limits: { kneeP99Ms: 10, stopP99Ms: 100 }, endpoints: { sample1: { steps }, sample5: { steps } } } }
    })
    expect(Object.keys(charts).sort()).toEqual(['latency', 'sweep', 'throughput'])
    for (const svg of Object.values(charts)) assertWellFormed(svg)
    // sample1 and sample5 have a run and a seed bar, the baseline only a run bar.
    expect(count(charts.throughput, 'bar')).toBe(5)
    expect(charts.throughput).toContain(`sample5 seed (3 × 4 vCPU VMs): ${SEED.sample5.rps.toLocaleString('en-US')}`)
    expect(count(charts.latency, 'bar')).toBe(8)
    expect(count(charts.sweep, 'point')).toBe(8)
    // p50 dashed and p99 solid per endpoint; the knee and stop limits as reference lines.
    expect((charts.sweep.match(/stroke-dasharray="6 4"/g) || []).length).toBe(2)
    expect(count(charts.sweep, 'ref')).toBe(2)
    expect(charts.sweep).toContain('knee: p99 &lt; 10 ms')
    expect(buildCharts({ endpoints: {} })).toEqual({})
  })
})
