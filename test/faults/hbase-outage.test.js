'use strict'

// HBase killed (SIGKILL) under load and restarted, while one beacon keeps running:
// - cached endpoints (sample3, sample5) keep answering 200 from cache,
// - sample2 (no cache) answers a fast 503 JSONP error with Retry-After, never hangs,
// - every sample5 access-log entry produced, outage included, ends up in HBase (spilled to the
//   journal and replayed), and service resumes by itself without restarting the app;
// - /readyz: 503 for a process that cannot serve without HBase, 200 again once HBase is back;
//   200 throughout for a process whose cache can serve.
// Rows are counted only once the loss audit saw the running beacon's sink idle on /metrics:
// nothing pending, queued, journaled or waiting for the journal's disk.
// Runs on its own HBase instance so the shared one is never disturbed.

const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { startBeacon, request } = require('../support/beacon')
const { createHBaseClient } = require('@beacon/hbase-client')
const { startLoops, stopRunningLoads } = require('../support/load')
const { until } = require('../support/until')
const { rollupsAgainstRaw } = require('../support/rollups')
const { expectIdle, recordAudit } = require('../support/loss-audit')

jest.setTimeout(10 * 60 * 1000)

const options = hbase.resolveOptions({
  stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-outage'),
  zkPort: 2192,
  masterPort: 16240,
  rsPort: 16260,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 100
})
const IDS = 40 // ids 1..IDS, all cached before the outage
// No request may take longer: a lookup may wait for a read in flight (1.5 s) and then its own.
const REQUEST_BOUND_MS = 3500
const STALL_MS = 5000

let app
let bootstrap

beforeAll(async () => {
  await hbase.wipe(options, { crash: true })
  bootstrap = (await hbase.up(options, { log: () => {} })).bootstrap
  app = await startBeacon({
    bootstrap,
    clientOptions: { rpcTimeout: 500, operationTimeout: 1500 },
    overrides: { hbase: { rpcTimeoutMs: 500, operationTimeoutMs: 1500 }, logSinks: { hbase: { rollups: true } } }
  })
})

afterAll(async () => {
  if (app) await app.close()
  await hbase.wipe(options, { crash: true })
})

afterEach(stopRunningLoads)

/**
 * Closed-loop load on three endpoints until `stop()` (or 3 min), paced to at most 1,200
 * requests a second (CPU left for the other test lane); every answer recorded.
 */
function startLoad () {
  const results = { sample2: [], sample3: [], sample5: [] }
  let n = 0
  const load = startLoops({
    loops: 12,
    paceMs: 10,
    maxMs: 180000,
    async step (i, agent) {
      const endpoint = ['sample2', 'sample3', 'sample5'][i % 3]
      const id = 1 + (n++ % IDS)
      const started = Date.now()
      try {
        const res = await request(`${app.url}/api/${endpoint}.js?id=${id}&callback=cb`, { agent })
        results[endpoint].push({
          at: started,
          ms: Date.now() - started,
          status: res.status,
          retryAfter: res.headers['retry-after'],
          body: res.body
        })
      } catch (err) {
        results[endpoint].push({ at: started, ms: Date.now() - started, status: 0, error: err.message })
      }
    }
  })
  return { results, stop: load.stop }
}

test('SIGKILL of HBase under load: cached endpoints serve, sample2 fails fast with 503, no access-log entry is lost, the rollups count ' +
  'each once', async () => {
  const testStarted = Date.now()
  // Warm the caches of sample3 and sample5 for every id used.
  for (let id = 1; id <= IDS; id++) {
    expect((await request(`${app.url}/api/sample3.js?id=${id}&callback=cb`)).status).toBe(200)
    expect((await request(`${app.url}/api/sample5.js?id=${id}&callback=cb`)).status).toBe(200)
  }
  // A second process with nothing cached: it cannot serve without HBase, so it must say so.
  const cold = await startBeacon({ bootstrap, clientOptions: { rpcTimeout: 500, operationTimeout: 1500 } })
  const readyz = async (which) => {
    const res = await request(`${which.adminUrl}/readyz`)
    return { status: res.status, checks: JSON.parse(res.body).checks }
  }
  expect((await readyz(cold)).status).toBe(200)
  const load = startLoad()
  await new Promise((resolve) => setTimeout(resolve, 1500))

  const killedAt = Date.now()
  await hbase.kill(options)
  await new Promise((resolve) => setTimeout(resolve, 6000))
  const coldDown = await readyz(cold)
  expect(coldDown.status).toBe(503)
  expect(coldDown.checks.hbase).toMatch(/^unreachable/)
  const warmDown = await readyz(app) // HBase down, but its cache serves: still ready
  expect(warmDown.status).toBe(200)
  expect(warmDown.checks.hbase).toMatch(/^unreachable/)
  await hbase.up(options, { log: () => {} })
  const upAt = Date.now()
  await until('sample2 answering 200 again', () => load.results.sample2.some((r) => r.at > upAt && r.status === 200), 120000)
  const recoveredMs = Date.now() - upAt
  await until('the cold process ready again', async () => (await readyz(cold)).status === 200, 60000)
  await cold.close()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  await load.stop()

  const { sample2, sample3, sample5 } = load.results
  const during = (list) => list.filter((r) => r.at >= killedAt && r.at < upAt)
  // Cached endpoints never failed, outage included.
  for (const list of [sample3, sample5]) {
    expect(during(list).length).toBeGreaterThan(50)
    expect(list.filter((r) => r.status !== 200)).toEqual([])
  }
  // sample2 during the outage: clear 503 JSONP errors with Retry-After, within the bound.
  const outage2 = during(sample2)
  const failed = outage2.filter((r) => r.status !== 200)
  expect(failed.length).toBeGreaterThan(0)
  for (const r of failed) {
    expect(r.status).toBe(503)
    expect(r.retryAfter).toBeDefined()
    expect(r.body).toMatch(/^\/\*\*\/ typeof cb === 'function' && cb\(\{"error":\{"status":503,"code":"CONFIG_UNAVAILABLE"/)
  }
  for (const list of [sample2, sample3, sample5]) {
    expect(Math.max(...list.map((r) => r.ms))).toBeLessThan(REQUEST_BOUND_MS)
    expect(list.filter((r) => r.status === 0)).toEqual([]) // no dropped connections
  }

  // Every sample5 2xx has its row in HBase once the journal is replayed, by itself.
  const sink = app.sinks.get('hbase')
  const ok5 = sample5.filter((r) => r.status === 200).length + IDS // + the warm-up requests
  await sink.flush()
  await until('the spill journal replayed', () => {
    const s = sink.stats()
    return s.journalPending === 0 && s.pending === 0
  }, 120000)
  const idle = await expectIdle(app.adminUrl)
  const stats = sink.stats()
  const counter = createHBaseClient({ bootstrap })
  try {
    const rows = await counter.count(app.accessLogTable)
    recordAudit({ answered: ok5, rows, idle })
    console.log(
      `outage: sample2 ${sample2.length} answers (${failed.length} x 503 during ${upAt - killedAt} ms down), sample3 ${sample3.length} x ` +
        `200, sample5 ${sample5.length} x 200; entries produced ${ok5}, rows in HBase ${rows}; spilled ${stats.spilled}, replayed ` +
        `${stats.replayed}; sample2 recovered ${recoveredMs} ms after HBase was up`
    )
    expect(stats.spilled).toBeGreaterThan(0)
    expect(stats.replayed).toBe(stats.spilled)
    expect(rows).toBe(ok5)
    // The rollups count every row once: the rows written before the kill, and the replayed ones.
    const rollups = await rollupsAgainstRaw({ bootstrap, logTable: app.accessLogTable, from: testStarted - 60000 })
    console.log(`outage rollups: ${rollups.minutes} minutes, ${rollups.rows} rows, ${rollups.differences.length} differences, ` +
      `${rollups.marked.length} minutes left marked`)
    expect(rollups).toMatchObject({ rows: ok5, marked: [], differences: [] })
  } finally {
    await counter.close()
  }
})

// 5 s: 3x the client's operation timeout, so every stuck call times out. Standalone HBase runs
// its ZooKeeper in the same JVM; the sessions' 30 s timeout (site-config.js) outlasts the freeze,
// which with the 10 s default made the master abort about one run in ten.
test('HBase stuck (SIGSTOP for 5 s): latency stays bounded, sample2 fails fast behind the breaker, the log queue stays bounded, nothing ' +
  'is lost', async () => {
  for (let id = 1; id <= IDS; id++) {
    expect((await request(`${app.url}/api/sample3.js?id=${id}&callback=cb`)).status).toBe(200)
    expect((await request(`${app.url}/api/sample5.js?id=${id}&callback=cb`)).status).toBe(200)
  }
  const sink = app.sinks.get('hbase')
  await sink.flush()
  const counter = createHBaseClient({ bootstrap })
  const rowsBefore = await counter.count(app.accessLogTable)
  const pid = Number(require('node:fs').readFileSync(options.pidFile, 'utf8'))
  const load = startLoad()
  let maxHeld = 0
  const watch = setInterval(() => {
    const s = sink.stats()
    maxHeld = Math.max(maxHeld, s.queueDepth + s.pending)
  }, 100)
  let stoppedAt
  let resumedAt
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    stoppedAt = Date.now()
    process.kill(pid, 'SIGSTOP') // our own HBase instance, by the PID its pid file holds
    await new Promise((resolve) => setTimeout(resolve, STALL_MS))
  } finally {
    process.kill(pid, 'SIGCONT')
    resumedAt = Date.now()
  }
  await until('sample2 answering 200 again', () => load.results.sample2.some((r) => r.at > resumedAt && r.status === 200), 60000)
  await load.stop()
  clearInterval(watch)

  const { sample2, sample3, sample5 } = load.results
  const stalled = (list) => list.filter((r) => r.at >= stoppedAt && r.at < resumedAt)
  for (const list of [sample3, sample5]) expect(list.filter((r) => r.status !== 200)).toEqual([])
  for (const list of [sample2, sample3, sample5]) expect(Math.max(...list.map((r) => r.ms))).toBeLessThan(REQUEST_BOUND_MS)
  const failed = stalled(sample2).filter((r) => r.status === 503)
  expect(failed.length).toBeGreaterThan(10)
  // Behind the open breaker most failures are immediate, not timeouts.
  const fast = failed.filter((r) => r.ms < 100).length
  expect(fast / failed.length).toBeGreaterThan(0.5)
  expect(maxHeld).toBeLessThanOrEqual(app.settings.logSinks.hbase.maxQueue)

  await sink.flush()
  await until('the spill journal replayed', () => {
    const s = sink.stats()
    return s.journalPending === 0 && s.pending === 0
  }, 120000).catch((err) => { throw new Error(`${err.message}; sink: ${JSON.stringify(sink.stats())}`) })
  try {
    const idle = await expectIdle(app.adminUrl)
    const rows = await counter.count(app.accessLogTable) - rowsBefore
    const ok5 = sample5.filter((r) => r.status === 200).length
    recordAudit({ answered: ok5, rows, idle })
    console.log(
      `stall: sample2 ${stalled(sample2).length} answers during the ${STALL_MS / 1000} s stall, ${failed.length} ` +
        `x 503 (${fast} under 100 ms); sample3/5 all 200 (${stalled(sample3).length}/${stalled(sample5).length}); ` +
        `log entries held in memory at most ${maxHeld}; sample5 200s ${ok5}, rows ${rows}`
    )
    expect(rows).toBe(ok5)
  } finally {
    await counter.close()
  }
})

// The access-log pipeline saturates (HBase stuck, writes pile up behind a stalled batch): each
// sink applies its overload policy — spill to the journal, or shed with a counter — answers
// stay 200 and fast, memory stays at maxQueue, and /readyz says "saturated" while it lasts.
test('log pipeline saturated while HBase is stuck: spill and shed policies apply, /readyz says so, nothing is lost ' +
  'unaccounted', async () => {
  const MAX_QUEUE = 300
  const STUCK_MS = 3000
  const start = (overload) => startBeacon({
    bootstrap,
    clientOptions: { rpcTimeout: 500, operationTimeout: 1500 },
    overrides: { hbase: { rpcTimeoutMs: 500, operationTimeoutMs: 1500 }, logSinks: { hbase: { maxQueue: MAX_QUEUE, overload } } }
  })
  const apps = { spill: await start('spill'), shed: await start('shed') }
  const counter = createHBaseClient({ bootstrap })
  const state = { stopped: null }
  let load = null
  let watch = null
  try {
    for (const which of Object.values(apps)) {
      for (let id = 1; id <= IDS; id++) expect((await request(`${which.url}/api/sample5.js?id=${id}&callback=cb`)).status).toBe(200)
      await which.sinks.get('hbase').flush()
    }
    const pid = Number(require('node:fs').readFileSync(options.pidFile, 'utf8'))
    const answers = { spill: [], shed: [] }
    const readyz = { spill: [], shed: [] }
    const next = Array.from({ length: 16 }, (_, i) => i) // each loop's next id index
    load = startLoops({
      loops: 16,
      maxMs: 60000,
      async step (i, agent) {
        const which = i % 2 ? 'shed' : 'spill'
        const n = next[i]
        next[i] += 16
        const at = Date.now()
        const res = await request(`${apps[which].url}/api/sample5.js?id=${1 + (n % IDS)}&callback=cb`, { agent })
        answers[which].push({ status: res.status, ms: Date.now() - at })
      }
    })
    const maxHeld = { spill: 0, shed: 0 }
    watch = setInterval(async () => {
      for (const which of ['spill', 'shed']) {
        maxHeld[which] = Math.max(maxHeld[which], apps[which].sinks.get('hbase').stats().pending)
        const res = await request(`${apps[which].adminUrl}/readyz`).catch(() => null)
        if (res) readyz[which].push({ status: res.status, check: JSON.parse(res.body).checks['accessLog.hbase'] })
      }
    }, 50)
    await new Promise((resolve) => setTimeout(resolve, 500))
    state.stopped = pid
    process.kill(pid, 'SIGSTOP') // our own HBase instance
    await new Promise((resolve) => setTimeout(resolve, STUCK_MS))
    process.kill(pid, 'SIGCONT')
    state.stopped = null
    const shedSink = apps.shed.sinks.get('hbase')
    await until('the shed sink unsaturated', () => shedSink.stats().pending < MAX_QUEUE, 30000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    await load.stop()
    clearInterval(watch)

    for (const which of ['spill', 'shed']) {
      // The policy is about the log, never the answer.
      expect(answers[which].filter((r) => r.status !== 200)).toEqual([])
      expect(Math.max(...answers[which].map((r) => r.ms))).toBeLessThan(REQUEST_BOUND_MS)
      expect(maxHeld[which]).toBeLessThanOrEqual(MAX_QUEUE)
      expect(readyz[which].filter((r) => r.status === 200).length).toBeGreaterThan(0)
    }
    const saturated = (which) => readyz[which].filter((r) => r.status === 503)
    expect(saturated('spill').length).toBeGreaterThan(0)
    for (const r of saturated('spill')) expect(r.check).toBe('saturated: spilling to the journal')
    expect(saturated('shed').length).toBeGreaterThan(0)
    for (const r of saturated('shed')) expect(r.check).toBe('saturated: shedding')
    // Ready again once the queue has room (the batches that were stuck time out and settle first).
    await until('the shed process ready again', async () => (await request(`${apps.shed.adminUrl}/readyz`)).status === 200, 10000, 250)
    const metrics = (await request(`${apps.shed.adminUrl}/metrics`)).body
    const shedCount = Number(/^beacon_access_log_entries_total\{sink="hbase",state="shed"\} (\d+)$/m.exec(metrics)[1])

    // Accounting: spill loses nothing; shed loses exactly what it counted.
    const expectRows = async (which, expected) => {
      const sink = apps[which].sinks.get('hbase')
      await sink.flush()
      await until(`${which}: journal replayed`, () => sink.stats().journalPending === 0 && sink.stats().pending === 0, 120000)
      const idle = await expectIdle(apps[which].adminUrl)
      const rows = await counter.count(apps[which].accessLogTable)
      const shed = sink.stats().shed
      recordAudit({ note: `${which}${shed ? `: ${shed} shed by policy` : ''}`, answered: ok(which), rows, idle })
      expect(rows).toBe(expected)
      return rows
    }
    const ok = (which) => answers[which].length + IDS
    const spillStats = apps.spill.sinks.get('hbase').stats()
    const shedStats = shedSink.stats()
    expect(spillStats.spilled).toBeGreaterThan(0)
    expect(spillStats.shed).toBe(0)
    expect(shedStats.shed).toBeGreaterThan(0)
    expect(shedStats.spilled).toBe(0)
    expect(shedCount).toBe(shedStats.shed)
    const spillRows = await expectRows('spill', ok('spill'))
    const shedRows = await expectRows('shed', ok('shed') - shedStats.shed)
    console.log(
      `overload: stuck ${STUCK_MS} ms, maxQueue ${MAX_QUEUE}. spill: ${ok('spill')} x 200, ${spillStats.spilled} spilled, ${spillRows} ` +
        `rows, readyz 503 ${saturated('spill').length}/${readyz.spill.length} polls; shed: ${ok('shed')} x 200, ${shedStats.shed} shed ` +
        `(counted in /metrics), ${shedRows} rows, readyz 503 ${saturated('shed').length}/${readyz.shed.length} polls; held in memory at ` +
        `most ${maxHeld.spill}/${maxHeld.shed}`
    )
  } finally {
    if (state.stopped) process.kill(state.stopped, 'SIGCONT')
    clearInterval(watch)
    if (load) await load.stop().catch(() => {})
    await counter.close()
    for (const which of Object.values(apps)) await which.close()
  }
})
