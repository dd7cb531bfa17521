'use strict'

// The flood bench's verdict and report (tools/bench/lib/flood-report.js), from a report of the shape
// tools/bench/flood.js writes: the bounds of issue 35 applied as stated, no figure of its own.

const { floodMarkdown, verdict } = require('../lib/flood-report')
const { settings: { DEFAULTS, OFREP_DEFAULTS } } = require('../../../index.js')

function report ({ baseP99 = 4, floodP99 = 5, baseHit = 0.9, floodHit = 0.88, rows = 1000, answered = 1000 } = {}) {
  const visitors = (p99) => ({ rps: 400, p50: 1, p99, max: 20, errors: 0, late: 0 })
  return {
    command: 'node tools/bench/flood.js --seconds 30',
    commit: 'abc1234',
    machine: { cores: 2, cpuModel: 'CPU', node: 'v20' },
    settings: {
      workers: 2,
      ids: 100000,
      seconds: 30,
      rounds: 2,
      rates: { visitors: 400, bots: 1200, greedy: 2000 },
      greedyStreams: 3000,
      limits: { rateLimit: DEFAULTS.rateLimit, http: DEFAULTS.http, ofrep: OFREP_DEFAULTS }
    },
    phases: [
      { name: 'baseline 1', visitors: visitors(baseP99 - 1), hitRatio: baseHit - 0.01, cpuBusy: 0.3 },
      { name: 'flood 1', visitors: visitors(floodP99 - 1), hitRatio: floodHit - 0.01, cpuBusy: 0.7 },
      { name: 'baseline 2', visitors: visitors(baseP99 + 1), hitRatio: baseHit + 0.01, cpuBusy: 0.3 },
      { name: 'flood 2', visitors: visitors(floodP99 + 1), hitRatio: floodHit + 0.01, cpuBusy: 0.7 }
    ],
    counts: {
      visitors: { sent: 24000, byStatus: { 200: 24000 } },
      bots: { sent: 36000, byStatus: { 200: 36000 } },
      greedy: { sent: 60000, byStatus: { 200: 6000, 429: 54000 } }
    },
    streams: { asked: 3000, opened: 2000, byStatus: { 200: 2000, 429: 1000 } },
    log: { answered, rows, byBot: [{ key: 'bot', count: 42000 }, { key: 'human', count: 24000 }], rollups: { exact: true, lagMs: 65000 } }
  }
}

test('within the bounds of the baselines\' mean: p99 at most 1.5 times, hit ratio at most 5 points lower, every view a row', () => {
  expect(verdict(report())).toMatchObject({ pass: true, rowsEqual: true })
  expect(verdict(report()).p99Ratio).toBeCloseTo(1.25)
  expect(verdict(report()).hitPoints).toBeCloseTo(2)
  expect(verdict(report({ floodP99: 6.1 })).pass).toBe(false)
  expect(verdict(report({ floodHit: 0.84 })).pass).toBe(false)
  expect(verdict(report({ rows: 999 })).pass).toBe(false)
})

test('the markdown states the limits it ran with, both phases, the refusals by source and the log', () => {
  const md = floodMarkdown(report())
  expect(md).toContain(`${DEFAULTS.rateLimit.perSecond} requests a second per address`)
  expect(md).toMatch(/\| baseline 1 \| 400 \| 1 ms \| 3 ms \| 20 ms \| 89 % \| 0 \| 30 % \|/)
  expect(md).toMatch(/\| baseline 2 \| 400 \| 1 ms \| 5 ms \| 20 ms \| 91 % \| 0 \| 30 % \|/)
  expect(md).toMatch(/\| greedy \| 60,000 \| 6,000 \| 54,000 \| 0 \| 0 \|/)
  expect(md).toContain('held 2,000; 1,000 were refused with 429')
  expect(md).toMatch(/\| flood 2 \| 400 \| 1 ms \| 6 ms \|/)
  expect(md).toContain('rows: 1,000: every answered view a row')
  expect(md).toContain('**Within every bound.**')
  expect(md).toContain('2 points lower than the baselines\' mean')
  expect(floodMarkdown(report({ floodHit: 0.95 }))).toContain('5 points higher than the baselines\' mean')
  expect(floodMarkdown(report({ rows: 10 }))).toContain('**Outside a bound: see above.**')
})
