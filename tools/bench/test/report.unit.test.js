'use strict'

const {
  SEED,
  secondBest,
  summarizeRun,
  withRatios,
  markdownReport,
  stdev,
  costPer1k,
  withServerView,
  scenarioTable
} = require('../lib/report')
const { stopReason, findKnee, runSweep } = require('../lib/sweep')

const run = (rps, extra = {}) => ({
  rps,
  latencyMean: 1,
  latencyStdev: 0.5,
  p50: 1,
  p90: 2,
  p99: 3,
  p999: 4,
  non2xx: 0,
  errors: 0,
  requests: rps * 10,
  ...extra
})
const step = (offeredRate, p99, extra = {}) => ({ offeredRate, rps: offeredRate, p50: p99 / 4, p99, errors: 0, unsent: 0, ...extra })

describe('seed math', () => {
  test('secondBest reports the run with the second-highest throughput, whatever the order', () => {
    expect(secondBest([run(100), run(300), run(200)]).rps).toBe(200)
    expect(secondBest([run(300), run(100), run(200)]).rps).toBe(200)
    expect(secondBest([run(5)]).rps).toBe(5)
    expect(secondBest([run(10), run(10)]).rps).toBe(10)
    expect(() => secondBest([])).toThrow(RangeError)
  })

  test('σ is the population standard deviation', () => {
    expect(stdev([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2)
    expect(stdev([7])).toBe(0)
    expect(stdev([])).toBeNull()
  })

  test('ratios are relative to the reference endpoint, rounded to 3 digits; none without it', () => {
    const r = withRatios({ sample1: run(12000), sample4: run(3000), sample5: run(90) }, 'sample1')
    expect(r.sample1.ratio).toBe(1)
    expect(r.sample4.ratio).toBe(0.25)
    expect(r.sample5.ratio).toBe(0.008)
    expect(withRatios({ sample2: run(5) }, 'sample1').sample2.ratio).toBeNull()
  })

  test('summarizeRun takes throughput over the elapsed time and counts timeouts as errors', () => {
    const s = summarizeRun({
      start: 0,
      finish: 2000,
      duration: 2,
      '2xx': 900,
      non2xx: 100,
      errors: 3,
      timeouts: 2,
      latency: { mean: 1.23456, stddev: 0.5, p50: 1, p90: 2, p99: 3, p99_9: 4 }
    })
    expect(s).toMatchObject({ rps: 500, requests: 1000, ok: 900, non2xx: 100, errors: 5, latencyMean: 1.235, p999: 4 })
  })
})

describe('server-side cost', () => {
  test('CPU ms per 1k requests; unknown when nothing was answered or not measured', () => {
    expect(costPer1k(500, 10000)).toBe(50)
    expect(costPer1k(1, 3000)).toBe(0.33)
    expect(costPer1k(100, 0)).toBeNull()
    expect(costPer1k(null, 100)).toBeNull()
  })

  test('withServerView adds per-role CPU, cost per 1k and peak RSS', () => {
    const s = withServerView(run(1000), { app: { cpuMs: 2000, peakRssMiB: 120 }, hbase: { cpuMs: null, peakRssMiB: null } })
    expect(s.server.app).toEqual({ cpuMs: 2000, cpuMsPer1k: 200, peakRssMiB: 120 })
    expect(s.server.hbase.cpuMsPer1k).toBeNull()
  })
})

describe('rate sweep', () => {
  test('stops on errors, unsent requests, p99 over 100 ms, or a rate not achieved', () => {
    expect(stopReason(step(1000, 5))).toBeNull()
    expect(stopReason(step(1000, 5, { errors: 2 }))).toMatch(/2 errors/)
    expect(stopReason(step(1000, 5, { unsent: 7 }))).toMatch(/never sent/)
    expect(stopReason(step(1000, 100.5))).toMatch(/p99 100.5 ms > 100 ms/)
    expect(stopReason(step(1000, 100))).toBeNull()
    expect(stopReason(step(1000, 5, { rps: 800 }))).toMatch(/achieved 800/)
    expect(stopReason(step(1000, null))).toMatch(/p99/)
  })

  test('the knee is the highest healthy rate with p99 under 10 ms', () => {
    expect(findKnee([step(1000, 1), step(2000, 3), step(5000, 9.99), step(10000, 10), step(15000, 150)])).toBe(5000)
    expect(findKnee([step(1000, 12)])).toBeNull()
    // A rate with errors or not achieved is never the knee, even with a low p99.
    expect(findKnee([step(1000, 1), step(2000, 2, { errors: 1 }), step(5000, 2, { rps: 3000 })])).toBe(1000)
    expect(findKnee([step(1000, 1), step(2000, 1)], { kneeP99Ms: 0.5 })).toBeNull()
    expect(findKnee([])).toBeNull()
  })

  test('runSweep climbs until the first stop reason and reports the knee', async () => {
    const p99At = { 1000: 1, 2000: 4, 5000: 30, 10000: 400, 20000: 1 }
    const asked = []
    const r = await runSweep([1000, 2000, 5000, 10000, 20000], async (rate) => {
      asked.push(rate)
      return step(rate, p99At[rate])
    })
    expect(asked).toEqual([1000, 2000, 5000, 10000])
    expect(r.stoppedAt).toBe(10000)
    expect(r.stopReason).toMatch(/p99 400/)
    expect(r.knee).toBe(2000)
    expect(r.steps.map((s) => s.offeredRate)).toEqual(asked)
    const all = await runSweep([1000, 2000], async (rate) => step(rate, 1))
    expect(all).toMatchObject({ stoppedAt: null, stopReason: null, knee: 2000 })
  })
})

describe('markdown', () => {
  const report = {
    date: '2026-11-22T00:00:00.000Z',
    machine: { cores: 2, cpuModel: 'X', memoryGiB: 4, node: 'v20', hbaseVersion: '2.6.1', topology: 'loopback', netem: 'none' },
    parameters: { label: 't', connections: 100, runs: 3, durationSeconds: 30, warmupSeconds: 10, idRange: 10000, missRatio: 0, workers: 2 },
    endpoints: withRatios({ sample1: run(12000, { lost: undefined }), sample5: run(6000, { lost: 0 }) }, 'sample1'),
    baseline: run(15000),
    scenarios: {
      sweep: {
        title: 'Rate sweep (open loop)',
        limits: { kneeP99Ms: 10 },
        endpoints: { sample1: { knee: 5000, stoppedAt: 10000, stopReason: 'p99 400 ms > 100 ms', steps: [] } },
        rows: { 'sample1 @ 1,000 req/s': { generator: 'open-loop', offeredRate: 1000, ...step(1000, 2), late: 0 } }
      },
      vus: {
        title: 'Virtual users',
        rows: {
          'sample3 100 VUs': { generator: 'open-loop', offeredRate: 100, ...step(100, 1), late: 0 },
          'sample3 1000 VUs': { generator: 'open-loop', offeredRate: 1000, ...step(1000, 1), late: 0 }
        }
      }
    }
  }

  test('seed table with ratios against sample1, the baseline and the seed; scenario sections', () => {
    const md = markdownReport(report)
    expect(md).toMatch(/\| sample5 \| 6,000 \| 0.5 \| 0.4 \|/)
    expect(md).toMatch(new RegExp(`\\| sample5 .*\\| ${SEED.sample5.rps.toFixed(0)} \\| 0.007 \\|`))
    expect(md).toMatch(/\| bare node:http \(baseline\) \| 15,000 \|/)
    expect(md).toMatch(/\| sample1 \| 5,000 req\/s \| 10,000 req\/s \| p99 400 ms > 100 ms \|/)
    expect(md).toContain('## Virtual users')
  })

  test("the machine line names HBase's heap; an uncounted log says so, and why", () => {
    expect(markdownReport(report)).not.toMatch(/heap|not counted/)
    const md = markdownReport({
      ...report,
      machine: { ...report.machine, hbaseHeap: '4g' },
      completenessError: 'meta unavailable'
    })
    expect(md).toMatch(/HBase 2\.6\.1 \(heap 4g\);/)
    expect(md).toContain('The entries were not counted (lost: n/a): meta unavailable.')
  })

  test('every scenario table row has as many cells as the header', () => {
    const lines = scenarioTable(report.scenarios.vus.rows)
    expect(lines).toHaveLength(4)
    const cells = (line) => line.split('|').length
    for (const line of lines) expect(cells(line)).toBe(cells(lines[0]))
  })
})
