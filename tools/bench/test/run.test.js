'use strict'

// One tiny real run of `npm run bench` end to end: real HBase, the server cluster, the baseline,
// load workers in their own processes; a few seconds per endpoint plus one short sweep step.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { testHBaseEnv } = require('../../../test/support/test-hbase')

const ROOT = path.join(__dirname, '..', '..', '..')
// 4700 (public), 4701 (admin), 4702 (baseline): kept clear of the other tests' ports.
const PORT = 4700

test('tools/bench/run.js --quick writes the JSON contract and the markdown; nothing lost', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-bench-'))
  const out = path.join(dir, 'quick.json')
  const args = ['tools/bench/run.js', '--quick', '--endpoints', 'sample1,sample4,sample5',
    '--duration', '2', '--warmup', '1', '--hbase-warmup', '1', '--id-range', '500', '--sweep-rates', '300', '--sweep-step', '1',
    '--cpu-runs', '2', '--cpu-duration', '1', '--cpu-rate', '300', '--cpu-endpoints', 'sample5',
    '--port', String(PORT), '--out', out]
  const stdout = await new Promise((resolve, reject) => {
    // The HBase of this test run, not the checkout's default one (another checkout may hold its ports).
    const env = { ...process.env, ...testHBaseEnv() }
    execFile(process.execPath, args, { cwd: ROOT, env, timeout: 330000, maxBuffer: 16 * 2 ** 20 }, (err, so, se) =>
      err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so)
    )
  })
  const report = JSON.parse(fs.readFileSync(out, 'utf8'))
  for (const name of ['sample1', 'sample4', 'sample5']) {
    const e = report.endpoints[name]
    for (const key of ['rps', 'latencyMean', 'latencyStdev', 'p50', 'p99', 'non2xx', 'errors', 'ratio']) {
      expect(typeof e[key]).toBe('number')
    }
    expect(e.rps).toBeGreaterThan(0)
    expect(e.errors).toBe(0)
    expect(e.non2xx).toBe(0)
    expect(e.server.app.cpuMsPer1k).toBeGreaterThan(0)
  }
  expect(report.endpoints.sample1.ratio).toBe(1)
  // Logged endpoints: every 2xx of the run left one access-log entry (file lines, HBase rows).
  expect(report.endpoints.sample4.lost).toBe(0)
  expect(report.endpoints.sample5.lost).toBe(0)
  expect(report.endpoints.sample1.lost).toBeUndefined()
  expect(report.baseline.rps).toBeGreaterThan(0)
  expect(report.machine).toMatchObject({ cores: os.cpus().length, node: process.version })
  expect(report.machine.topology).toMatch(/^loopback/)

  const sweep = report.scenarios.sweep
  expect(Object.keys(sweep.endpoints)).toEqual(['sample1', 'sample4', 'sample5'])
  const step = sweep.endpoints.sample1.steps[0]
  expect(step.offeredRate).toBe(300)
  expect(step.sent).toBe(300)
  expect(step.requests + step.errors + step.unsent).toBe(300)
  expect(step.p50).toBeLessThanOrEqual(step.p99)
  expect(step.generator).toBe('open-loop')

  const md = fs.readFileSync(path.join(dir, 'quick.md'), 'utf8')
  expect(stdout).toContain(md.split('\n')[0])
  expect(md).toMatch(/\| sample5 \| [\d,]+ \|/)
  // The sweep's step in the scenario table: generator, connections, offered and achieved rate.
  expect(md).toMatch(/\| sample1 @ 300 req\/s \| open-loop \| 100 \| 300 \| [\d,]+ \|/)
  expect(md).not.toContain('Stalls per step')
  // No charts any more: the report's tables carry the figures.
  expect(report.charts).toBeUndefined()
  expect(fs.readdirSync(dir).filter((f) => f.endsWith('.svg'))).toEqual([])

  // CPU per request: every case in each of the 2 rounds, from real /proc samples.
  const cpu = report.scenarios.cpu
  expect(cpu.parameters).toMatchObject({
    rate: 300, runs: 2, seconds: 1, idRange: 500, endpoints: ['sample1', 'sample5'], ofrep: ['sample5']
  })
  // sample5 serves OFREP: its bulk evaluation is measured beside its JSONP view, same ids and shapes.
  const cpuCases = ['bare node:http @ 300 req/s', 'bare node:http closed loop',
    ...['sample1', 'sample5', 'sample5 ofrep'].flatMap((n) => [
      `${n} ids 1..500 @ 300 req/s`,
      `${n} ids 1..500 closed loop`,
      `${n} id=1 @ 300 req/s`,
      `${n} id=1 closed loop`
    ])]
  expect(Object.keys(cpu.cases)).toEqual(cpuCases)
  const positive = (v) => {
    expect(Number.isFinite(v)).toBe(true)
    expect(v).toBeGreaterThan(0)
  }
  const median = (values) => { const v = [...values].sort((a, b) => a - b); return (v[0] + v[1]) / 2 }
  // The app and the generator work in every run. HBase works only where a case writes rows
  // (sample5's log): an idle JVM over 1 s may show no CPU at all when a thread of its exited
  // meanwhile and its 10 ms ticks stand in, so a run's HBase figure is only never negative.
  const notMeasured = []
  for (const [name, c] of Object.entries(cpu.cases)) {
    expect(c.runs.map((r) => r.round)).toEqual([0, 1])
    for (const r of c.runs) {
      expect(r).toMatchObject({ errors: 0, non2xx: 0 })
      expect(['threads', 'ticks', 'mixed']).toContain(r.appCpuSource)
      for (const [cpuUs, perReq] of [
        ['appCpuUs', 'appUsPerReq'],
        ['hbaseCpuUs', 'hbaseUsPerReq'],
        ['generatorCpuUs', 'generatorUsPerReq']
      ]) {
        const least = cpuUs === 'hbaseCpuUs' ? 0 : 1
        if (!(Number.isFinite(r[cpuUs]) && r[cpuUs] >= least)) notMeasured.push(`${name} round ${r.round}: ${cpuUs} ${r[cpuUs]}`)
        expect(r[perReq]).toBeCloseTo(r[cpuUs] / r.requests, 1)
      }
      if (c.shape === 'rate') expect(r.requests).toBeGreaterThan(0.8 * 300)
    }
    for (const key of ['appUsPerReq', 'hbaseUsPerReq', 'generatorUsPerReq']) {
      expect(c[key].n).toBe(2)
      expect(c[key].median).toBeCloseTo(median(c.runs.map((r) => r[key])), 1)
      expect(c[key].min).toBeLessThanOrEqual(c[key].max)
    }
    positive(c.vsSample1.median)
    positive(c.vsBaseline.median)
  }
  expect(notMeasured).toEqual([])
  const sample5Runs = Object.entries(cpu.cases).filter(([name]) => name.startsWith('sample5 ')).flatMap(([, c]) => c.runs)
  positive(sample5Runs.reduce((sum, r) => sum + r.hbaseCpuUs, 0))
  expect(cpu.cases['sample1 ids 1..500 @ 300 req/s'].vsSample1).toMatchObject({ median: 1, min: 1, max: 1 })
  expect(cpu.cases['bare node:http closed loop'].vsBaseline).toMatchObject({ median: 1, min: 1, max: 1 })
  expect(cpu.cases['sample5 ids 1..500 @ 300 req/s'].hbaseAboveSample1.n).toBe(2)
  // Every OFREP answer a 200, and OFREP against the JSONP view paired in both rounds.
  for (const key of cpuCases.filter((k) => k.startsWith('sample5 ofrep'))) {
    expect(cpu.cases[key]).toMatchObject({ target: 'sample5', view: 'ofrep', non200: 0 })
    expect(cpu.cases[key].runs.every((r) => r.ok200 === r.requests)).toBe(true)
    expect(cpu.cases[key].vsJsonp.n).toBe(2)
    positive(cpu.cases[key].vsJsonp.median)
    positive(cpu.cases[key].rpsVsJsonp.median)
  }
  expect(cpu.idle.runs).toHaveLength(2)
  for (const r of cpu.idle.runs) for (const k of ['appUsPerS', 'baselineUsPerS', 'hbaseUsPerS']) expect(r[k]).toBeGreaterThanOrEqual(0)
  // The report opens with the seed beside beacon (with CPU per request), then the cpu tables and
  // what went to HBase per request beside them, then the seed protocol's own runs.
  const headings = md.split('\n').filter((l) => l.startsWith('## '))
  expect(headings.slice(0, 4)).toEqual([
    '## What each layer costs: the seed beside beacon', '## CPU per request', '## HBase traffic per request',
    '## Seed protocol (closed loop)'
  ])
  // At saturation (app CPU, vs sample1, HBase above idle), then at the fixed rate (app CPU, vs
  // sample1, HBase above sample1): each a median with its spread over the 2 rounds.
  const cell = String.raw`-?[\d.]+ \(-?[\d.]+–-?[\d.]+\)`
  expect(md).toMatch(new RegExp(String.raw`\n\| sample5 \| 93 \| 0\.007 \| [\d,]+ \| [\d.]+ \| ${Array(6).fill(cell).join(' \\| ')} \|\n`))
  // The OFREP table, inside the cpu section: each view's req/s and app CPU, OFREP/JSONP, no non-200 answer.
  expect(md).toContain('\n### OFREP bulk evaluation beside the JSONP view\n')
  expect(md).toMatch(new RegExp(String.raw`\n\| sample5 \| id=1 \| closed loop \| ${Array(6).fill(cell).join(' \\| ')} \| 0 / 0 \|\n`))
  fs.rmSync(dir, { recursive: true, force: true })
}, 360000) // the cpu scenario's OFREP cases (and their cache sweeps) add up to a minute on a loaded machine
