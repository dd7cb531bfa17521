'use strict'

// A minute of new visitors (issue 35): 1,000,000 access-log rows with 1,000,000 distinct
// 40-character ids in one minute, written through the HBase sink as `bench:scale` writes them,
// on an HBase of its own at the heap `npm start` gives its embedded one. Then the real entry
// point (a primary, 2 workers and the rollup process at its default 128 MiB cap) counts the
// minute: exactly, by the first rollup process (it never dies), `log check` says exact, a count
// of one id and of the minute come from the rollups, and HBase still serves config reads; then
// the same again after a restart of beacon. Before partitions, the rollup process died over and
// over on this minute and the RegionServer ran out of heap.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { startServerProcess } = require('../support/server-process')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { rollupPids } = require('../support/pids')
const { until } = require('../support/until')
const { createHBaseClient } = require('@beacon/hbase-client')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { createRollupMarker } = require('../../logging/rollup/marker')
const { accessEntry } = require('../../logging/access-entry')
const { MINUTE_MS, minuteOf, PARTITIONS } = require('../../logging/rollup/layout')
const { markedMinutes, parkedMinutes } = require('../../logging/rollup/read')
const { SINK_DEFAULTS, DEFAULTS } = require('../../config/defaults')
const { runTool, ensureToolCompiled } = require('../../tools/dev-hbase')
const { hfileBytes } = require('../../tools/bench')
const { ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')
const { ROLLUP_FAMILY } = require('../../logging/rollup/layout')

const ROWS = Number(process.env.BEACON_CARDINALITY_ROWS) || 1000000
const TOKEN = 'cardinality-test-token-0123456789abcdef'
const LOG_TABLE = 'beacon_access_log' // the table npm start's sink writes
const ROLLUP_TABLE = SINK_DEFAULTS.hbase.rollupTable
const BUCKETS = SINK_DEFAULTS.hbase.buckets
const MAX_BACKLOG = 20000
jest.setTimeout(15 * 60 * 1000)

const options = hbase.resolveOptions({
  stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-cardinality'),
  zkPort: 2521,
  masterPort: 16940,
  rsPort: 16960,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 100
})

let bootstrap
let client
let stateDir
let server
let ports
/** The minute written: four minutes ago, so that it is settled and due at once. */
const minute = minuteOf(Date.now()) - 4 * MINUTE_MS
const idOf = (i) => `visitor-${String(i).padStart(32, '0')}`

beforeAll(async () => {
  await hbase.wipe(options, { crash: true })
  bootstrap = (await hbase.up(options, { log: () => {} })).bootstrap
  client = createHBaseClient({ bootstrap })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cardinality-'))
  ports = await freePorts(2)
})

afterAll(async () => {
  if (server) await server.stop(30000)
  if (client) await client.close()
  await hbase.wipe(options, { crash: true })
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true })
})

/** The minute's rows through a sink of the test's own, rollup marks included, as bench:scale writes. */
async function writeMinute () {
  const writerId = 'xcardinality'
  const rollupMarker = createRollupMarker({ client, rollupTable: ROLLUP_TABLE, logTable: LOG_TABLE, writerId })
  const journalDir = path.join(stateDir, 'writer-journal')
  const sink = createHBaseSink({ client, table: LOG_TABLE, journalDir, writerId, buckets: BUCKETS, rollupMarker })
  for (let i = 0; i < ROWS; i++) {
    const ts = minute + Math.floor((i * MINUTE_MS) / ROWS)
    sink.write(accessEntry({ ts, endpoint: 'sample5', id: idOf(i), status: 200, ms: 1, ip: '127.0.0.2', ua: 'vegeta', ref: null }))
    if (i % 2000 !== 1999) continue
    // Backpressure, as bench:scale's writer: the sink's own queue is not the test's to fill.
    while (sink.stats().queueDepth + sink.stats().inFlight > MAX_BACKLOG) await new Promise((resolve) => setTimeout(resolve, 2))
  }
  await sink.flush()
  const stats = sink.stats()
  await sink.close()
  expect({ written: stats.written, spilled: stats.spilled, shed: stats.shed }).toEqual({ written: ROWS, spilled: 0, shed: 0 })
}

async function startBeacon () {
  const [port, adminPort] = ports
  const lines = []
  const started = await startServerProcess({
    port,
    adminPort,
    stateDir,
    log: (line) => lines.push(line),
    env: { BEACON_HBASE_BOOTSTRAP: bootstrap.join(','), BEACON_ADMIN_TOKEN: TOKEN, BEACON_ACCESS_ROLLUPS: '1' }
  })
  return Object.assign(started, { lines })
}

async function admin (pathAndQuery) {
  const res = await request(`http://127.0.0.1:${ports[1]}${pathAndQuery}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  expect(res.status).toBe(200)
  return JSON.parse(res.body)
}

/** Config reads from HBase answer: sample2 reads HBase on every request. */
async function expectHBaseServes () {
  for (let i = 0; i < 20; i++) {
    const res = await request(`http://127.0.0.1:${ports[0]}/api/sample2.js?id=${1 + i}&callback=cb`)
    expect(res.status).toBe(200)
  }
  const ready = await request(`http://127.0.0.1:${ports[1]}/readyz`)
  expect(JSON.parse(ready.body).checks).toMatchObject({ hbase: 'reachable', rollups: 'ok' })
}

/** The minute, counted both ways and from the rollups: exact, every row. */
async function expectExact () {
  const range = `from=${new Date(minute).toISOString()}&to=${new Date(minute + MINUTE_MS).toISOString()}`
  const check = await admin(`/admin/log/check?${range}`)
  expect(check).toMatchObject({ exact: true, rows: ROWS, marked: [], parked: [], differenceCount: 0, differences: [] })
  const total = await admin(`/admin/log/count?${range}`)
  expect(total).toMatchObject({ total: ROWS, source: { rollupMinutes: 1, scannedMinutes: 0 } })
  const one = await admin(`/admin/log/count?${range}&id=${idOf(777777 % ROWS)}`)
  expect(one).toMatchObject({ total: 1, source: { rollupMinutes: 1, scannedMinutes: 0 } })
}

/**
 * The rollup table's bytes on disk per view against the log's, after a flush and a major
 * compaction of both: what the choice of layout was made by (docs/access-log.md).
 */
async function reportBytes () {
  const classpath = await hbase.ensureClasspath(options)
  await ensureToolCompiled(options, classpath)
  const store = (command, table) => runTool(options, classpath, [command, '--table', table, '--timeout-ms', '600000'], {
    tool: 'BeaconHBaseStore'
  })
  const rootDir = path.join(options.dataDir, 'hbase')
  const sizes = {}
  for (const [table, family] of [[LOG_TABLE, ACCESS_LOG_FAMILY], [ROLLUP_TABLE, ROLLUP_FAMILY]]) {
    await store('flush', table)
    await store('compact', table)
    sizes[table] = hfileBytes(rootDir, table, family).bytes
  }
  const perView = (bytes) => Math.round((bytes / ROWS) * 10) / 10
  console.log(`rollup-cardinality: ${ROWS} views, every one a new id: log ${perView(sizes[LOG_TABLE])} B/view, ` +
    `rollups ${perView(sizes[ROLLUP_TABLE])} B/view on disk (flushed, major-compacted, GZ)`)
  expect(sizes[ROLLUP_TABLE]).toBeGreaterThan(0)
}

test(`a minute of ${ROWS} new visitors is counted exactly by one rollup process, and HBase keeps serving, also after a restart`, async () => {
  expect(DEFAULTS.rollupJob.maxOldSpaceMiB).toBe(128)
  expect(options.heap).toBe('1g') // npm start's embedded HBase
  await writeMinute()
  const source = { client, rollupTable: ROLLUP_TABLE, logTable: LOG_TABLE, buckets: BUCKETS }
  expect([...await markedMinutes(source, minute, minute + MINUTE_MS)]).toEqual([minute])

  server = await startBeacon()
  await until('the rollup process', () => rollupPids(server.pid).length === 1, 30000)
  const [rollupPid] = rollupPids(server.pid)
  await until('the minute counted', async () => (await markedMinutes(source, minute, minute + MINUTE_MS)).size === 0, 8 * 60000, 1000)
  expect(rollupPids(server.pid)).toEqual([rollupPid]) // never died, never replaced
  expect(server.lines.filter((l) => l.includes('rollup process died'))).toEqual([])
  expect(await parkedMinutes(source, minute, minute + MINUTE_MS)).toEqual([])
  // No row of counts holds more than a share of the minute.
  let widest = 0
  for await (const row of client.scan(ROLLUP_TABLE, { startRow: 'g/', stopRow: 'g0', keysOnly: true })) {
    widest = Math.max(widest, row.cells.length)
  }
  expect(widest).toBeGreaterThan(0)
  expect(widest).toBeLessThan((3 * ROWS) / PARTITIONS)
  await expectExact()
  await expectHBaseServes()
  await reportBytes()

  expect(await server.stop(30000)).toBe(0)
  server = await startBeacon()
  await until('the rollup process after the restart', () => rollupPids(server.pid).length === 1, 30000)
  const [again] = rollupPids(server.pid)
  await expectExact()
  await expectHBaseServes()
  expect(rollupPids(server.pid)).toEqual([again])
})
