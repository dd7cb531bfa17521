'use strict'

// The known-id filter over the real HBase, through the root factory: a cached endpoint answers
// ids with no row without an HBase read; an id set through the admin API is served at once, one
// written around beacon from the next scan; sample2 (no cache) still reads every request.

const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { until } = require('../support/until')

const TOKEN = 'known-ids-admin-token-0123-0123456'
const CONFIG_TABLE = uniqueTable('cfg_known')
const SEEDED = 3000
let app
let writer

/** Config reads so far (the store's `config` kind: the caches' misses and sample2's every request). */
const configReads = () => {
  const calls = (app.client.trafficStats().kinds.config || { calls: {} }).calls
  return (calls.Get || 0) + (calls.Multi || 0)
}
const view = (endpoint, id) => request(`${app.url}/api/${endpoint}.js?id=${id}&callback=cb`)
const isDefault = (res) => res.status === 200 && res.body.includes('"default":true')

beforeAll(async () => {
  writer = testClient()
  await writer.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  // More than one scan page (5,000 rows) would need more rows than a test should write; the
  // store's paging is the client's, tested with it.
  const rows = Array.from({ length: SEEDED }, (_, i) => ({ row: `k${i}`, cells: { c: { json: JSON.stringify({ n: i }) } } }))
  await writer.multiPut(CONFIG_TABLE, rows)
  app = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: TOKEN },
    // Rescans often enough for a test to see one: a row written around beacon waits for it.
    overrides: { hbase: { configTable: CONFIG_TABLE, knownIdScanMs: 300 } }
  })
})

afterAll(async () => {
  if (app) await app.close()
  await writer.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await writer.close()
})

test('ids with no row cost no HBase read on a cached endpoint; ids with one are read as before', async () => {
  expect(app.beacon.knownIds.stats()).toMatchObject({ ready: true, ids: SEEDED, lastScanIds: SEEDED })
  const before = configReads()
  const skippedBefore = app.beacon.knownIds.stats().skipped
  for (let i = 0; i < 200; i++) expect(isDefault(await view('sample3', `new-visitor-${i}`))).toBe(true)
  // At 1 % false positives, a few of 200 may be read; the filter is sized for that share.
  const readForUnknown = configReads() - before
  expect(readForUnknown).toBeLessThan(10)
  expect(app.beacon.knownIds.stats().skipped - skippedBefore).toBe(200 - readForUnknown)
  const known = await view('sample3', 'k17')
  expect(known.body).toContain('"n":17')
  expect(configReads()).toBe(before + readForUnknown + 1)
  // sample2 has no cache: it reads every request, id known or not.
  const plain = configReads()
  expect(isDefault(await view('sample2', 'new-visitor-0'))).toBe(true)
  expect(configReads()).toBe(plain + 1)
  const metrics = (await request(`${app.adminUrl}/metrics`)).body
  expect(metrics).toMatch(new RegExp(`^beacon_config_reads_skipped_total ${app.beacon.knownIds.stats().skipped}$`, 'm'))
  expect(metrics).toMatch(/^beacon_config_known_ids [1-9]/m)
})

test('an id set through the admin API is served from its next request; one written around beacon from the next scan', async () => {
  expect(isDefault(await view('sample5', 'fresh-1'))).toBe(true)
  const res = await fetch(`${app.adminUrl}/admin/config/fresh-1`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ shown: 'admin' })
  })
  expect(res.status).toBe(200)
  expect((await view('sample5', 'fresh-1')).body).toContain('"shown":"admin"')

  await writer.put(CONFIG_TABLE, 'around-1', { c: { json: JSON.stringify({ shown: 'around' }) } })
  // The next scan, not a wait for the timer's (it rescans at 10x a scan's length, which a loaded
  // machine stretches): the first call joins a scan that may have begun before the write, the
  // second begins after it.
  const scans = app.beacon.knownIds.stats().scans
  await app.beacon.knownIds.scan()
  await app.beacon.knownIds.scan()
  expect(app.beacon.knownIds.stats().scanFailures).toBe(0)
  expect(app.beacon.knownIds.stats().scans).toBeGreaterThan(scans)
  // Seen by the scan; the negative entry the cache may hold of it lives negativeTtlMs (5 s).
  await until('the row written around beacon is served', async () => (await view('sample3', 'around-1')).body.includes('around'), 10000)
})
