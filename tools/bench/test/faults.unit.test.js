'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { memoryMarkdown, slowMarkdown, readReports } = require('../lib/faults')
const { buildCharts } = require('../lib/charts')

const memory = {
  outageMs: 600000,
  capMiB: 96,
  ok: { sample4: 1200, sample5: 1100 },
  failed: 0,
  rows: 1260,
  expectedRows: 1260,
  drainedMs: 41234,
  summary: [
    { worker: 1, healthyPeak: 120, outagePeak: 150, recoveringPeak: 160, after: 140 },
    { worker: 2, healthyPeak: 110, outagePeak: 140, recoveringPeak: 170, after: 150 }
  ],
  curve: [
    { s: 0, phase: 'healthy', rss: [100, 101] },
    { s: 15, phase: 'outage', rss: [130, 120] },
    { s: 615, phase: 'recovering', rss: [160, 170] }
  ]
}

test('the memory run: a row per worker with its cap, the counts and the drain time', () => {
  const md = memoryMarkdown(memory).join('\n')
  expect(md).toContain('600 s HBase outage')
  expect(md).toContain('| 1 | 120 | 150 | 160 | 140 | 216 |')
  expect(md).toContain('| 2 | 110 | 140 | 170 | 150 | 206 |')
  expect(md).toContain('every row in HBase 41.2 s after HBase was back')
})

test('the slow run: each phase against the healthy p99', () => {
  const phase = (name, rttMs, cachedP99) => ({
    phase: name,
    rttMs,
    cached: 10,
    cachedNon200: 0,
    cachedP50: 1,
    cachedP99,
    sample2: 5,
    sample2_503: 0,
    sample2MaxMs: 3,
    maxQueueDepth: 1,
    spilled: 0,
    maxHeapMb: 50,
    retainedHeapMb: 40,
    maxRssMb: 150
  })
  const md = slowMarkdown({
    phaseMs: 60000,
    sample2Rate: 20,
    deadlineMs: 1500,
    maxInFlight2: 31,
    drainMs: 2500,
    phases: [phase('healthy', 0, 2.5), phase('2s', 2000, 3.25)]
  }).join('\n')
  expect(md).toContain('60 s per phase')
  expect(md).toMatch(/\| 2s \| 2000 \| 10 \| 0 \| 1 \| 3\.25 \| 0\.75 \|/)
})

test('reports are read back by name; a missing file is no report', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'faults-')), 'r.jsonl')
  expect(readReports(file)).toEqual({})
  fs.writeFileSync(file, JSON.stringify({ name: 'memory', a: 1 }) + '\n' + JSON.stringify({ name: 'slow', b: 2 }) + '\n')
  expect(readReports(file)).toEqual({ memory: { a: 1 }, slow: { b: 2 } })
})

test('the memory curve is charted per worker, its caps on the axis', () => {
  const { memory: svg } = buildCharts({ endpoints: {}, scenarios: { faults: { result: { memory } } } })
  expect(svg).toContain('outage from 15, recovering from 615')
  expect(svg.match(/class="point"/g)).toHaveLength(6)
  expect(svg.match(/class="ref"/g)).toHaveLength(2) // two caps (216 and 206 MiB)
})
