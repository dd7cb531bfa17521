'use strict'

// The real cluster (server.js, 2 workers): the admin port gives a cluster-wide view — every
// scrape of /metrics counts the requests of all workers, and an admin change reaches every
// worker at once (not after the cache TTL). Free ports and a config table of its own: the test
// never collides with another run or touches the shared seeded table.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServerProcess } = require('../support/server-process')
const { testClient, uniqueTable } = require('../support/hbase')
const { request } = require('../support/beacon')
const { freePorts } = require('../support/ports')

const TOKEN = 'cluster-test-token-0123456789abcde'
const ID = `cl${process.pid}`
const CONFIG_TABLE = uniqueTable('cfg')
let PORT
let ADMIN_PORT
let server
let stateDir
let admin

beforeAll(async () => {
  ;[PORT, ADMIN_PORT] = await freePorts(2)
  admin = testClient()
  await admin.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cluster-'))
  server = await startServerProcess({
    port: PORT,
    adminPort: ADMIN_PORT,
    stateDir,
    env: { BEACON_ADMIN_TOKEN: TOKEN, BEACON_CONFIG_TABLE: CONFIG_TABLE }
  })
})

afterAll(async () => {
  if (server) await server.stop(20000)
  await admin.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await admin.close()
  fs.rmSync(stateDir, { recursive: true, force: true })
})

test('every /metrics scrape counts the requests of all workers', async () => {
  const n = 120
  // A new connection per request: the primary spreads connections over both workers.
  for (let i = 0; i < n; i++) {
    expect((await request(`http://127.0.0.1:${PORT}/api/sample3.js?id=${(i % 20) + 1}&callback=cb`)).status).toBe(200)
  }
  for (let scrape = 0; scrape < 4; scrape++) {
    const text = (await request(`http://127.0.0.1:${ADMIN_PORT}/metrics`)).body
    expect(text).toMatch(new RegExp(`^beacon_http_requests_total\\{endpoint="sample3",status="200"\\} ${n}$`, 'm'))
    expect(text).toMatch(new RegExp(`^beacon_http_request_duration_seconds_count\\{endpoint="sample3"\\} ${n}$`, 'm'))
  }
  // Each process's event-loop delay and CPU time under its own tag: the workers' and the rollup
  // process's; the CPU times only grow.
  const scrape = async () => (await request(`http://127.0.0.1:${ADMIN_PORT}/metrics`)).body
  const cpuOf = (/** @type {string} */ text, /** @type {string} */ tag) =>
    Number(text.match(new RegExp(`^beacon_cluster_process_cpu_seconds_total\\{process="${tag}"\\} (\\S+)$`, 'm'))?.[1])
  const text = await scrape()
  const later = await scrape()
  for (const tag of ['w1', 'w2', 'rollup']) {
    expect(text).toMatch(new RegExp(`^beacon_event_loop_delay_seconds_count\\{process="${tag}"\\} [1-9]`, 'm'))
    expect(text).toMatch(new RegExp(`^beacon_event_loop_held_seconds_total\\{process="${tag}",part="busy"\\} `, 'm'))
    expect(cpuOf(text, tag)).toBeGreaterThan(0)
    expect(cpuOf(later, tag)).toBeGreaterThanOrEqual(cpuOf(text, tag))
  }
})

test('the configs cached count every worker\'s cache, where /readyz counts its own', async () => {
  const scrape = async () => {
    const text = (await request(`http://127.0.0.1:${ADMIN_PORT}/metrics`)).body
    return Number(text.match(/^beacon_config_cache_entries\{endpoint="sample3"\} (\d+)$/m)?.[1])
  }
  const before = await scrape()
  expect(before).toBeGreaterThanOrEqual(20) // the ids the test above asked for, on one worker or both
  // The primary hands new connections to the workers in turn: each of 20 new ids asked four times
  // in a row, over new connections, is cached by both.
  for (let id = 21; id <= 40; id++) {
    for (let time = 0; time < 4; time++) {
      expect((await request(`http://127.0.0.1:${PORT}/api/sample3.js?id=${id}&callback=cb`)).status).toBe(200)
    }
  }
  const total = await scrape()
  expect(total - before).toBe(40)
  const ready = JSON.parse((await request(`http://127.0.0.1:${ADMIN_PORT}/readyz`)).body)
  expect(ready.checks.cachedConfigs).toBeGreaterThanOrEqual(20) // the new ids, on every worker
  expect(ready.checks.cachedConfigs).toBeLessThan(total)
})

test('an admin change is seen by every worker at once', async () => {
  // Cache the default for this id in both workers.
  for (let i = 0; i < 8; i++) {
    expect((await request(`http://127.0.0.1:${PORT}/api/sample3.js?id=${ID}&callback=cb`)).body).toContain('"default":true')
  }
  const put = await fetch(`http://127.0.0.1:${ADMIN_PORT}/admin/config/${ID}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ features: { everywhere: true } })
  })
  expect(put.status).toBe(200)
  await new Promise((resolve) => setTimeout(resolve, 100)) // IPC to the other worker
  for (let i = 0; i < 8; i++) {
    const body = (await request(`http://127.0.0.1:${PORT}/api/sample3.js?id=${ID}&callback=cb`)).body
    expect(body).toContain('"default":false,"config":{"features":{"everywhere":true}}')
  }
})
