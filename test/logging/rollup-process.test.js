'use strict'

// The rollup job in a process of its own, under the real entry point (server.js: a primary,
// 2 workers and the rollup process): the primary forks it with its own heap cap, it is no
// serving worker, a SIGKILL of it is answered by a replacement, and the replacement counts every
// row exactly — rows written before the kill, and after. Its metrics reach the primary's
// /metrics with the workers'. Log and rollup tables of its own on the shared test HBase.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServerProcess } = require('../support/server-process')
const { testClient, uniqueTable } = require('../support/hbase')
const { request } = require('../support/beacon')
const { freePorts } = require('../support/ports')
const { until } = require('../support/until')
const { rollupPids, workerPids } = require('../support/pids')
const { accessLogSplitKeys, ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')
const { ROLLUP_FAMILY, MINUTE_MS, minuteOf } = require('../../logging/rollup/layout')
const { checkRollups, markedMinutes } = require('../../logging/rollup/read')

jest.setTimeout(4 * 60 * 1000)

const BUCKETS = 16
const HEAP_MIB = 96
let client
let server
let stateDir
let logTable
let rollupTable
let port
let adminPort

beforeAll(async () => {
  ;[port, adminPort] = await freePorts(2)
  client = testClient()
  logTable = uniqueTable('rplog')
  rollupTable = uniqueTable('rproll')
  await client.admin.createTable(logTable, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(BUCKETS, 4) })
  await client.admin.createTable(rollupTable, { families: [ROLLUP_FAMILY] })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-rollup-process-'))
  server = await startServerProcess({
    port,
    adminPort,
    stateDir,
    env: {
      BEACON_ACCESS_LOG_TABLE: logTable,
      BEACON_ACCESS_ROLLUPS: '1',
      BEACON_ACCESS_ROLLUP_TABLE: rollupTable,
      BEACON_ROLLUP_MAX_OLD_SPACE_MIB: String(HEAP_MIB)
    }
  })
})

afterAll(async () => {
  if (server) await server.stop(20000)
  for (const table of [logTable, rollupTable]) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true })
})

/** n sample5 requests (HBase log), new connections so that both workers log some. */
async function load (n, from) {
  for (let i = 0; i < n; i++) {
    const res = await request(`http://127.0.0.1:${port}/api/sample5.js?id=${from + (i % 7)}&callback=cb`)
    expect(res.status).toBe(200)
  }
}

/** One sample of the cluster-wide /metrics. */
async function metric (series) {
  const text = (await request(`http://127.0.0.1:${adminPort}/metrics`)).body
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  return line === undefined ? NaN : Number(line.slice(series.length + 1))
}

test('the primary forks one rollup process with its own heap cap; SIGKILLed, it is replaced, and the replacement counts ' +
  'every row exactly', async () => {
  const started = Date.now()
  await until('the rollup process', () => rollupPids(server.pid).length === 1, 30000)
  const [first] = rollupPids(server.pid)
  expect(workerPids(server.pid)).toHaveLength(2)
  expect(workerPids(server.pid)).not.toContain(first)
  const cmdline = fs.readFileSync(`/proc/${first}/cmdline`, 'utf8').split('\0')
  expect(cmdline).toContain(`--max-old-space-size=${HEAP_MIB}`)
  // Its metrics are in the primary's /metrics (it answers the aggregation as a worker does).
  await until('the rollup job\'s series', async () => !Number.isNaN(await metric('beacon_access_rollup_lag_seconds{sink="hbase"}')), 30000)

  await load(300, 1)
  process.kill(first, 'SIGKILL')
  await until('a new rollup process', () => rollupPids(server.pid).length === 1 && rollupPids(server.pid)[0] !== first, 30000)
  const [second] = rollupPids(server.pid)
  expect(workerPids(server.pid)).toHaveLength(2) // the workers were not touched
  await load(200, 100)

  // The last minute with rows is counted once it ended and settled (5 s): up to ~75 s from now.
  const lastMinute = minuteOf(Date.now())
  const source = { client, rollupTable, logTable, buckets: BUCKETS }
  await until('every marked minute counted by the new rollup process', async () => {
    const marked = await markedMinutes(source, minuteOf(started) - MINUTE_MS, lastMinute + MINUTE_MS)
    return marked.size === 0 && Date.now() > lastMinute + MINUTE_MS
  }, 150000)
  const check = await checkRollups(source, started - MINUTE_MS, Date.now())
  expect(check).toMatchObject({ rows: 500, marked: [], differences: [] })
  expect(rollupPids(server.pid)).toEqual([second])
  // What the replacement counted shows in /metrics (its counters, the killed one's are gone).
  expect(await metric('beacon_access_rollup_rows_total{sink="hbase"}')).toBeGreaterThan(0)
  expect(await metric('beacon_access_rollup_minutes_total{sink="hbase"}')).toBeGreaterThan(0)
  expect(await metric('beacon_access_rollup_lag_seconds{sink="hbase"}')).toBe(0)

  // SIGTERM stops the rollup process with the workers, within the budget: exit 0.
  const code = await server.stop(20000)
  server = null
  expect(code).toBe(0)
})
