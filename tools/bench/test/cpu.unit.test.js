'use strict'

const {
  BASELINE,
  stats,
  perRequest,
  cpuRun,
  summarizeCases,
  summarizeIdle,
  spread,
  glanceTable,
  cpuTables,
  leadSection
} = require('../lib/cpu-report')
const { processCpuUs, createSampler, readThreads } = require('../lib/proc-sampler')
const { markdownReport, SEED } = require('../lib/report')

/** A load job's summary as scenarios.js run() returns it, with CPU per role in µs. */
function job ({ rps = 1000, requests = 5000, app, hbase = 20000, gen = 100000, p99 = 2 }) {
  return {
    rps,
    requests,
    p50: 1,
    p99,
    errors: 0,
    non2xx: 0,
    generatorCpuUs: gen,
    server: { app: { cpuUs: app, cpuSource: 'threads' }, hbase: { cpuUs: hbase, cpuSource: 'ticks' } }
  }
}

describe('cpu scenario math', () => {
  test('stats: median of odd and even counts, min and max, numbers only', () => {
    expect(stats([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 })
    expect(stats([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4, n: 4 })
    expect(stats([null, 5, undefined, NaN, Infinity])).toEqual({ median: 5, min: 5, max: 5, n: 1 })
    expect(stats([])).toBeNull()
    expect(stats([1.23456, 1.23456], 3)).toEqual({ median: 1.235, min: 1.235, max: 1.235, n: 2 })
  })

  test('perRequest: µs per answered request; unknown without CPU or answers', () => {
    expect(perRequest(300000, 5000)).toBe(60)
    expect(perRequest(null, 5000)).toBeNull()
    expect(perRequest(1000, 0)).toBeNull()
  })

  test('cpuRun: one run\'s CPU per request for the server, HBase and the generator', () => {
    const r = cpuRun(job({ app: 300000, hbase: 25000, gen: 110000, requests: 5000 }), 2)
    expect(r).toMatchObject({
      round: 2,
      appCpuUs: 300000,
      appCpuSource: 'threads',
      appUsPerReq: 60,
      hbaseUsPerReq: 5,
      generatorUsPerReq: 22,
      requests: 5000
    })
    expect(cpuRun({ rps: 0, requests: 0 }, 0)).toMatchObject({
      appUsPerReq: null,
      hbaseUsPerReq: null,
      generatorUsPerReq: null,
      appCpuSource: null
    })
  })

  // Three rounds; round 1 is slow for everyone (another user of the cores): paired ratios cancel it.
  const apps = { baseline: [150000, 300000, 160000], sample1: [300000, 600000, 310000], sample3: [330000, 660000, 341000] }
  const hbases = { baseline: [20000, 20000, 20000], sample1: [20000, 25000, 20000], sample3: [40000, 45000, 41000] }
  const caseOf = (target, ids, shape, rps = 1000) => ({
    target,
    ids,
    shape,
    offeredRate: shape === 'rate' ? 1000 : 0,
    runs: apps[target].map((app, i) => cpuRun(job({ app, hbase: hbases[target][i], rps: shape === 'rate' ? rps : rps * (3 - i) }), i))
  })
  const cases = {
    'bare node:http @ 1,000 req/s': caseOf(BASELINE, 'range', 'rate'),
    'bare node:http closed loop': caseOf(BASELINE, 'range', 'saturation', 9000),
    'sample1 ids 1..10000 @ 1,000 req/s': caseOf('sample1', 'range', 'rate'),
    'sample1 ids 1..10000 closed loop': caseOf('sample1', 'range', 'saturation', 6000),
    'sample1 id=1 @ 1,000 req/s': caseOf('sample1', 'one', 'rate'),
    'sample3 ids 1..10000 @ 1,000 req/s': caseOf('sample3', 'range', 'rate'),
    'sample3 ids 1..10000 closed loop': caseOf('sample3', 'range', 'saturation', 5000),
    'sample3 id=1 @ 1,000 req/s': caseOf('sample3', 'one', 'rate')
  }
  const summary = summarizeCases(cases)

  test('summarizeCases: medians and spreads per case, ratios paired per round against sample1 and the baseline', () => {
    const s3 = summary['sample3 ids 1..10000 @ 1,000 req/s']
    expect(s3.appUsPerReq).toEqual({ median: 68.2, min: 66, max: 132, n: 3 })
    // Per round 1.1, 1.1, 1.1: the slow round cancels out.
    expect(s3.vsSample1).toEqual({ median: 1.1, min: 1.1, max: 1.1, n: 3 })
    expect(s3.vsBaseline).toEqual({ median: 2.2, min: 2.131, max: 2.2, n: 3 })
    // HBase above sample1's background in the same round: (40000-20000)/5000 = 4 µs, 4 µs, 4.2 µs.
    expect(s3.hbaseAboveSample1).toEqual({ median: 4, min: 4, max: 4.2, n: 3 })
    expect(summary['sample1 ids 1..10000 @ 1,000 req/s'].vsSample1).toEqual({ median: 1, min: 1, max: 1, n: 3 })
    expect(summary['bare node:http @ 1,000 req/s'].vsSample1.median).toBe(0.5)
    expect(summary['bare node:http @ 1,000 req/s'].vsBaseline.median).toBe(1)
    // id=1 cases are compared with sample1's id=1 case.
    expect(summary['sample3 id=1 @ 1,000 req/s'].vsSample1.median).toBe(1.1)
    // At saturation the rates differ, so the HBase background per request does too: no difference.
    expect(summary['sample3 ids 1..10000 closed loop'].hbaseAboveSample1).toBeNull()
    expect(summary['sample3 ids 1..10000 closed loop'].rpsVsSample1).toEqual({ median: 0.833, min: 0.833, max: 0.833, n: 3 })
    expect(summary['sample3 ids 1..10000 closed loop'].rps).toEqual({ median: 10000, min: 5000, max: 15000, n: 3 })
  })

  test('above idle: the idle CPU per second of the same round, spread over the run\'s requests per second', () => {
    const idleRuns = [
      { round: 0, appUsPerS: 10000, baselineUsPerS: 0, hbaseUsPerS: 5000 },
      { round: 1, appUsPerS: 20000, baselineUsPerS: 1000, hbaseUsPerS: 5000 },
      { round: 2, appUsPerS: null, baselineUsPerS: 0, hbaseUsPerS: 5000 }
    ]
    const withIdle = summarizeCases(cases, idleRuns)
    const s3 = withIdle['sample3 ids 1..10000 @ 1,000 req/s']
    // 66 - 10000/1000 = 56, 132 - 20 = 112; round 2's server idle is unknown.
    expect(s3.appAboveIdle).toEqual({ median: 84, min: 56, max: 112, n: 2 })
    // HBase: 8 - 5, 9 - 5, 8.2 - 5.
    expect(s3.hbaseAboveIdle).toEqual({ median: 3.2, min: 3, max: 4, n: 3 })
    // The baseline is charged its own idle, not the server's: 30 - 0, 60 - 1, 32 - 0.
    expect(withIdle['bare node:http @ 1,000 req/s'].appAboveIdle).toEqual({ median: 32, min: 30, max: 59, n: 3 })
    // At saturation the same idle weighs less per request: 66 - 10000/15000 and 132 - 20000/10000.
    expect(withIdle['sample3 ids 1..10000 closed loop'].appAboveIdle).toEqual({ median: 97.67, min: 65.33, max: 130, n: 2 })
    expect(summarizeCases(cases)['sample3 ids 1..10000 @ 1,000 req/s'].appAboveIdle).toBeNull()
    expect(summarizeIdle(idleRuns)).toMatchObject({
      appUsPerS: { median: 15000, min: 10000, max: 20000, n: 2 },
      baselineUsPerS: { median: 0, n: 3 },
      hbaseUsPerS: { median: 5000, n: 3 }
    })
    const md = cpuTables({ parameters: { rate: 1000 }, idle: summarizeIdle(idleRuns), cases: withIdle }).join('\n')
    expect(md).toContain('Idle, CPU µs per second: the server cluster 15000 (10000–20000) (15 µs per request at 1,000 req/s), bare ' +
      'node:http 0 (0–1000), HBase 5000 (5000–5000) (5 µs per request at 1,000 req/s).')
    expect(md).toContain('| sample3 ids 1..10000 @ 1,000 req/s | 1000 (1000–1000) | 68.2 (66–132) | 84 (56–112) | 1.1 (1.1–1.1) ' +
      '| 2.2 (2.131–2.2) | 8.2 (8–9) | 3.2 (3–4) | 4 (4–4.2) |')
  })

  test('a ratio needs the reference: none without sample1 or the baseline, and only rounds both measured', () => {
    const lone = summarizeCases({ x: { target: 'sample3', ids: 'range', shape: 'rate', runs: [cpuRun(job({ app: 1000 }), 0)] } })
    expect(lone.x.vsSample1).toBeNull()
    expect(lone.x.vsBaseline).toBeNull()
    const s1 = { target: 'sample1', ids: 'range', shape: 'rate', runs: [cpuRun(job({ app: 1000 }), 1)] }
    const s3 = { target: 'sample3', ids: 'range', shape: 'rate', runs: [cpuRun(job({ app: 3000 }), 0), cpuRun(job({ app: 2000 }), 1)] }
    expect(summarizeCases({ s1, s3 }).s3.vsSample1).toEqual({ median: 2, min: 2, max: 2, n: 1 })
  })

  test('spread: the median, and min–max over more than one run', () => {
    expect(spread({ median: 61.2, min: 58.9, max: 64, n: 3 })).toBe('61.2 (58.9–64)')
    expect(spread({ median: 61.2, min: 61.2, max: 61.2, n: 1 })).toBe('61.2')
    expect(spread(null)).toBe('')
  })
})

describe('the report opens with the seed beside beacon and the CPU per request', () => {
  const machine = { cores: 2, cpuModel: 'X', memoryGiB: 4, node: 'v20', hbaseVersion: '2.6.1', topology: 'loopback', netem: 'none' }
  const cpuScenario = { title: 'CPU per request', description: 'd', parameters: { rate: 1000, runs: 3, idRange: 10000 }, cases: null }
  const report = (withSeed) => ({
    date: '2026-11-22T00:00:00.000Z',
    machine,
    parameters: { label: 't', connections: 100, runs: 1, durationSeconds: 5, warmupSeconds: 2, idRange: 10000, missRatio: 0, workers: 2 },
    endpoints: withSeed
      ? {
          sample1: { rps: 12000, ratio: 1, server: { app: { cpuMsPer1k: 50 } } },
          sample3: { rps: 11000, ratio: 0.917, server: { app: { cpuMsPer1k: 55 } } }
        }
      : {},
    baseline: withSeed ? { rps: 15000 } : null,
    scenarios: { cpu: cpuScenario, vus: { title: 'Virtual users', rows: {} } }
  })

  test('glance table: seed req/s and ratio, ours, app CPU with spread and ratio (at saturation, then at the fixed rate), HBase; the ' +
    'baseline last', () => {
    cpuScenario.cases = summarizeCases({
      'bare node:http @ 1,000 req/s': {
        target: BASELINE,
        ids: 'range',
        shape: 'rate',
        runs: [cpuRun(job({ app: 150000 }), 0), cpuRun(job({ app: 160000 }), 1)]
      },
      'sample1 ids 1..10000 @ 1,000 req/s': {
        target: 'sample1',
        ids: 'range',
        shape: 'rate',
        runs: [cpuRun(job({ app: 300000 }), 0), cpuRun(job({ app: 320000 }), 1)]
      },
      'sample3 ids 1..10000 @ 1,000 req/s': {
        target: 'sample3',
        ids: 'range',
        shape: 'rate',
        runs: [
          cpuRun(job({ app: 330000, hbase: 40000 }), 0),
          cpuRun(job({ app: 320000, hbase: 30000 }), 1)
        ]
      }
    })
    const lines = glanceTable(report(true))
    expect(lines[0]).toMatch(/^## What each layer costs/)
    const row = (name) => lines.find((l) => l.startsWith(`| ${name} |`))
    // Only the fixed rate ran here: the saturation columns stay empty.
    expect(row('sample1')).toBe(
      `| sample1 | ${Math.round(SEED.sample1.rps).toLocaleString('en-US')} | 1 | 12,000 | 1 |  |  |  | 62 (60–64) | 1 (1–1) | 0 ` +
        '(0–0) |'
    )
    expect(row('sample3')).toBe(
      `| sample3 | ${Math.round(SEED.sample3.rps).toLocaleString('en-US')} | ` +
        '0.915 | 11,000 | 0.917 |  |  |  | 65 (64–66) | 1.05 (1–1.1) | 3 (2–4) |'
    )
    expect(row('bare node:http (same body)')).toBe(
      '| bare node:http (same body) | | | 15,000 | 1.25 |  |  |  | 31 (30–32) | 0.5 (0.5–0.5) | 0 (0–0) |'
    )
    expect(lines.join('\n')).toMatch(/sample1 costs 2 \(2–2\)× the CPU of bare node:http/)
    // Endpoints measured nowhere get no row.
    expect(row('sample4')).toBeUndefined()
  })

  test('without the seed runs, beacon req/s come from the cpu scenario at saturation; without the cpu scenario, no table', () => {
    cpuScenario.cases = summarizeCases({
      'sample1 ids 1..10000 @ 1,000 req/s': { target: 'sample1', ids: 'range', shape: 'rate', runs: [cpuRun(job({ app: 300000 }), 0)] },
      'sample1 ids 1..10000 closed loop': {
        target: 'sample1',
        ids: 'range',
        shape: 'saturation',
        runs: [cpuRun(job({ app: 300000, rps: 8000 }), 0)]
      }
    })
    expect(glanceTable(report(false)).find((l) => l.startsWith('| sample1 |'))).toMatch(
      /^\| sample1 \| [\d,]+ \| 1 \| 8,000 \| 1 \| 60 \| 1 \| +\| 60 \| 1 \| 0 \|$/
    )
    expect(glanceTable({ ...report(true), scenarios: {} })).toEqual([])
  })

  test('the markdown report puts them first, before the seed protocol, and does not repeat the cpu section', () => {
    const r = report(true)
    const md = markdownReport(r, { lead: leadSection(r), skip: ['cpu'] })
    const headings = md.split('\n').filter((l) => l.startsWith('## '))
    expect(headings.slice(0, 3)).toEqual([
      '## What each layer costs: the seed beside beacon', '## CPU per request', '## Seed protocol (closed loop)'
    ])
    expect(headings.filter((h) => h === '## CPU per request')).toHaveLength(1)
    expect(md).toContain('### At 1,000 req/s (open loop)')
    expect(md).toContain('### At saturation (closed loop)')
    expect(md).toContain('## Virtual users')
  })
})

describe('CPU from the threads, to the µs', () => {
  test('processCpuUs: the threads\' nanoseconds when they account for the ticks, else the ticks', () => {
    const before = new Map([[1, 1e9], [2, 5e8]])
    // Both threads still there, one new: (1.2e9-1e9) + (6e8-5e8) + 1e7 ns = 310 ms.
    expect(processCpuUs(before, new Map([[1, 1.2e9], [2, 6e8], [3, 1e7]]), 300)).toEqual({ us: 310000, source: 'threads' })
    // A thread exited: its last nanoseconds are unknown, the ticks are not.
    expect(processCpuUs(before, new Map([[1, 1.2e9]]), 300)).toEqual({ us: 300000, source: 'ticks' })
    // The threads account for far less than the ticks (one was born and died in between).
    expect(processCpuUs(before, new Map([[1, 1.1e9], [2, 5e8]]), 300)).toEqual({ us: 300000, source: 'ticks' })
    expect(processCpuUs(null, new Map(), 40)).toEqual({ us: 40000, source: 'ticks' })
  })

  const linux = process.platform === 'linux' ? test : test.skip
  linux('a busy process: the sampler\'s cpuUs agrees with the process\'s own count to within a few ms', async () => {
    expect(readThreads(process.pid).size).toBeGreaterThan(0)
    expect(readThreads(2 ** 22 + 1)).toBeNull()
    const sampler = createSampler({ self: () => [process.pid] }, { intervalMs: 1000 })
    const cpuNow = () => { const u = process.cpuUsage(); return u.user + u.system }
    const outer = cpuNow()
    sampler.start()
    const inner = cpuNow()
    // Burn 250 ms of CPU (not of wall time: the cores are shared), within 10 s.
    const deadline = Date.now() + 10000
    while (cpuNow() - inner < 250000 && Date.now() < deadline) { /* burn */ }
    const innerEnd = cpuNow()
    const r = sampler.stop().self
    const outerEnd = cpuNow()
    // This process from its threads; a child the jest worker has running (another test's) may
    // come and go within the window and be counted from its ticks: then 'mixed'.
    expect(r.processes > 1 ? ['threads', 'mixed'] : ['threads']).toContain(r.cpuSource)
    expect(Number.isInteger(r.cpuUs)).toBe(true)
    expect(r.cpuUs).toBeGreaterThan(200000)
    // The sampler's window lies between the burn alone and the burn with the sampler's own reads
    // of /proc; a running thread's count may lag by up to a scheduler tick (a few ms), and the
    // kernel's per-thread run times and getrusage() are accounted apart (on a loaded machine
    // they differed by up to ~2%): within 5% and a tick of slack either way.
    const slack = (us) => 0.05 * us + 12000
    expect(r.cpuUs).toBeGreaterThan(innerEnd - inner - slack(innerEnd - inner))
    expect(r.cpuUs).toBeLessThan(outerEnd - outer + slack(outerEnd - outer))
  })
})
