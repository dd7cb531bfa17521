'use strict'

// The cpu scenario's OFREP cases: only 200 answers count, OFREP against the JSONP view of the
// same endpoint paired per round, the report's table, and how the cache is readied for them.

const { BASELINE, cpuRun, summarizeCases, glanceTable, cpuTables, ofrepTable } = require('../lib/cpu-report')
const { ofrepSweeps } = require('../lib/cpu')

/** A load job's summary as scenarios.js run() returns it, with CPU per role in µs. */
function job ({ rps = 1000, requests = 5000, app, statusCounts = { 200: requests } }) {
  return {
    rps,
    requests,
    p50: 1,
    p99: 2,
    errors: 0,
    non2xx: requests - (statusCounts[200] || 0),
    statusCounts,
    generatorCpuUs: 100000,
    server: { app: { cpuUs: app, cpuSource: 'threads' }, hbase: { cpuUs: 20000, cpuSource: 'ticks' } }
  }
}

describe('only 200 answers count', () => {
  test('CPU per 200 answer and 200s per second; a fast 4xx makes a run dearer, not cheaper', () => {
    const all = cpuRun(job({ app: 500000 }), 0)
    expect(all).toMatchObject({ ok200: 5000, non200: 0, appUsPerReq: 100, rps: 1000 })
    // Half of the answers were 400s: the CPU is charged to the 2,500 200s, and only they make the rate.
    const half = cpuRun(job({ app: 400000, statusCounts: { 200: 2500, 400: 2500 } }), 0)
    expect(half).toMatchObject({ requests: 5000, ok200: 2500, non200: 2500, appUsPerReq: 160, hbaseUsPerReq: 8, rps: 500 })
    // Nothing but 400s: no figure at all.
    expect(cpuRun(job({ app: 100000, statusCounts: { 400: 5000 } }), 0)).toMatchObject({ ok200: 0, appUsPerReq: null, rps: 0 })
    // A 2xx other than 200 (a 204, a 206) is not an evaluation either.
    expect(cpuRun(job({ app: 100000, statusCounts: { 200: 4000, 204: 1000 } }), 0)).toMatchObject({ non200: 1000, appUsPerReq: 25 })
    // A job without status counts: every answer, as before.
    const { statusCounts, ...bare } = job({ app: 500000 })
    expect(statusCounts).toBeDefined()
    expect(cpuRun(bare, 0)).toMatchObject({ ok200: null, non200: null, appUsPerReq: 100, rps: 1000 })
  })
})

describe('OFREP beside the JSONP view', () => {
  // Two rounds; round 1 is slow for everyone: the paired ratio cancels it.
  const runs = (apps, rpss, counts = []) => apps.map((app, i) => cpuRun(job({ app, rps: rpss[i], statusCounts: counts[i] }), i))
  const kase = (target, view, ids, shape, theRuns) => ({ target, view, ids, shape, runs: theRuns })
  const cases = {
    'sample1 ids 1..10000 closed loop': kase('sample1', 'jsonp', 'range', 'saturation', runs([250000, 500000], [12000, 6000])),
    'sample5 ids 1..10000 closed loop': kase('sample5', 'jsonp', 'range', 'saturation', runs([400000, 800000], [10000, 5000])),
    'sample5 ofrep ids 1..10000 closed loop': kase('sample5', 'ofrep', 'range', 'saturation', runs([500000, 1000000], [8000, 4000])),
    'sample5 id=1 @ 1,000 req/s': kase('sample5', 'jsonp', 'one', 'rate', runs([400000, 420000], [1000, 1000])),
    'sample5 ofrep id=1 @ 1,000 req/s': kase('sample5', 'ofrep', 'one', 'rate',
      runs([450000, 1000], [1000, 1000], [undefined, { 200: 0, 400: 5000 }]))
  }
  const summary = summarizeCases(cases)

  test('summarizeCases: OFREP/JSONP app CPU and req/s paired per round, against the same endpoint, ids and shape', () => {
    const o = summary['sample5 ofrep ids 1..10000 closed loop']
    expect(o.appUsPerReq).toEqual({ median: 150, min: 100, max: 200, n: 2 })
    expect(o.vsJsonp).toEqual({ median: 1.25, min: 1.25, max: 1.25, n: 2 })
    expect(o.rpsVsJsonp).toEqual({ median: 0.8, min: 0.8, max: 0.8, n: 2 })
    // OFREP cases are compared with sample1 like any other (same ids, same shape).
    expect(o.vsSample1).toEqual({ median: 2, min: 2, max: 2, n: 2 })
    expect(o.non200).toBe(0)
    // The JSONP cases get no OFREP ratio.
    expect(summary['sample5 ids 1..10000 closed loop'].vsJsonp).toBeUndefined()
    // Round 1 of the id=1 OFREP case answered only 400s: no figure for it, so no pair either.
    const one = summary['sample5 ofrep id=1 @ 1,000 req/s']
    expect(one.non200).toBe(5000)
    expect(one.appUsPerReq).toEqual({ median: 90, min: 90, max: 90, n: 1 })
    expect(one.vsJsonp).toEqual({ median: 1.125, min: 1.125, max: 1.125, n: 1 })
    // Without its JSONP case, no ratio.
    const alone = summarizeCases({ x: cases['sample5 ofrep ids 1..10000 closed loop'] })
    expect(alone.x).toMatchObject({ vsJsonp: null, rpsVsJsonp: null })
  })

  test('the table: per endpoint, ids and load, JSONP and OFREP side by side with their ratio and the non-200 answers', () => {
    const cpu = { parameters: { rate: 1000, idRange: 10000 }, cases: summary }
    const lines = ofrepTable(cpu)
    expect(lines[0]).toBe('### OFREP bulk evaluation beside the JSONP view')
    expect(lines).toContain('| sample5 | 1..10000 | closed loop | 7500 (5000–10000) | 6000 (4000–8000) | 0.8 (0.8–0.8) | ' +
      '120 (80–160) | 150 (100–200) | 1.25 (1.25–1.25) | 0 / 0 |')
    expect(lines).toContain('| sample5 | id=1 | 1,000 req/s | 1000 (1000–1000) | 500 (0–1000) | 0.5 (0–1) | 82 (80–84) | 90 | ' +
      '1.125 | 0 / 5000 |')
    // In the cpu tables, after the per-shape tables; nothing without an OFREP case.
    const md = cpuTables(cpu)
    expect(md.indexOf('### OFREP bulk evaluation beside the JSONP view')).toBeGreaterThan(md.indexOf('### At saturation (closed loop)'))
    const jsonpOnly = Object.fromEntries(Object.entries(summary).filter(([, c]) => c.view !== 'ofrep'))
    expect(ofrepTable({ parameters: { rate: 1000, idRange: 10000 }, cases: jsonpOnly })).toEqual([])
  })

  test('the glance table keeps to the JSONP view', () => {
    // The OFREP case comes first here: the glance row must still be the JSONP one (120 µs, not 150).
    const reordered = Object.fromEntries(Object.entries(summary).reverse())
    const cpu = { parameters: { rate: 1000, runs: 2, idRange: 10000 }, cases: reordered }
    const lines = glanceTable({ endpoints: {}, scenarios: { cpu } })
    expect(lines.find((l) => l.startsWith('| sample5 |'))).toMatch(/^\| sample5 \| 93 \| 0\.007 \| 7,500 \| [^|]+ \| 120 \(80–160\) \|/)
    expect(lines.filter((l) => l.includes('ofrep'))).toEqual([])
    expect(BASELINE).toBe('baseline')
  })
})

describe('readying the cache for the OFREP runs', () => {
  const ttlMs = 30000
  test('entries that stay fresh through one OFREP sweep and the range runs: that sweep alone', () => {
    // Swept 0–1 s; now 10 s: 10 + 2 + 6 = 18 s < 30 s.
    expect(ofrepSweeps({ now: 10000, loaded: { started: 0, ended: 1000 }, ttlMs, sweepMs: 2000, runsMs: 6000 }))
      .toEqual({ waitMs: 0, sweeps: ['ofrep'], fits: true })
  })

  test('entries that would expire during the runs: wait until all are stale, reload them, then make their flags', () => {
    // Swept 0–6 s; now 28 s: 28 + 12 + 16 > 30. Stale from 36 s on (+1 s): wait 9 s; then 6 + 12 + 16 = 34 s > 30.
    expect(ofrepSweeps({ now: 28000, loaded: { started: 0, ended: 6000 }, ttlMs, sweepMs: 12000, runsMs: 16000 }))
      .toEqual({ waitMs: 9000, sweeps: ['jsonp', 'ofrep'], fits: false })
    // Long stale already: no wait; quick sweeps fit.
    expect(ofrepSweeps({ now: 90000, loaded: { started: 0, ended: 3000 }, ttlMs, sweepMs: 6000, runsMs: 16000 }))
      .toEqual({ waitMs: 0, sweeps: ['jsonp', 'ofrep'], fits: true })
  })
})
