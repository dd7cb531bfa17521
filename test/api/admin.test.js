'use strict'

// Admin plane: health, readiness, metrics and the toggle admin API, over real sockets and HBase.

const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { main: cli } = require('../../bin/beacon')

const TOKEN = 'test-token-0123456789-0123456789ab'
const ID = `adm${process.pid}`
let app
// Its own config table: endpoint switches are stored there, and must never leak into the
// shared table that other tests and a dev server read.
const CONFIG_TABLE = uniqueTable('cfg')
const hbaseOverrides = { configTable: CONFIG_TABLE, controlPollMs: 100 }

function adminRequest (path, { method = 'GET', token = TOKEN, body } = {}) {
  return fetch(`${app.adminUrl}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {})
    },
    body
  }).then(async (res) => ({ status: res.status, headers: res.headers, text: await res.text() }))
}

beforeAll(async () => {
  const admin = testClient()
  await admin.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await admin.close()
  app = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: TOKEN },
    overrides: { hbase: hbaseOverrides, logSinks: { hbase: { rollups: true } } }
  })
})

afterAll(async () => {
  if (app) await app.close()
  const admin = testClient()
  await admin.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await admin.close()
})

test('healthz and readyz answer with real status codes and JSON', async () => {
  const health = await request(`${app.adminUrl}/healthz`)
  expect(health.status).toBe(200)
  expect(JSON.parse(health.body).status).toBe('ok')
  const ready = await request(`${app.adminUrl}/readyz`)
  expect(ready.status).toBe(200)
  expect(JSON.parse(ready.body)).toMatchObject({ status: 'ready', checks: { hbase: 'reachable' } })
})

test('metrics expose request, cache, HBase and access-log families after real traffic', async () => {
  for (let i = 0; i < 5; i++) await request(`${app.url}/api/sample5.js?id=${i + 1}&callback=cb`)
  await request(`${app.url}/api/sample3.js?id=bad!&callback=cb`)
  await request(`${app.url}/api/sample2.js?id=1&callback=cb`) // no cache: read whether a row exists or not
  await app.sinks.get('hbase').flush()
  const res = await request(`${app.adminUrl}/metrics`)
  expect(res.status).toBe(200)
  const text = res.body
  expect(text).toMatch(/^beacon_http_requests_total\{endpoint="sample5",status="200"\} 5$/m)
  expect(text).toMatch(/^beacon_http_requests_total\{endpoint="sample3",status="400"\} 1$/m)
  expect(text).toMatch(/^beacon_http_request_duration_seconds_count\{endpoint="sample5"\} 5$/m)
  expect(text).toMatch(/^beacon_config_lookups_total\{endpoint="sample5",outcome="miss"\} 5$/m)
  expect(text).toMatch(/^beacon_hbase_rpc_duration_seconds_count\{method="Multi"\} [1-9]/m)
  // This test's config table is empty: the known-id filter answers sample5's misses, sample2 reads.
  expect(text).toMatch(/^beacon_config_reads_skipped_total 5$/m)
  // What went to HBase, by what it was for: the config read of sample2, the log's batch.
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="config",method="(Get|Multi)"\} [1-9]/m)
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="log",method="Multi"\} [1-9]/m)
  expect(text).toMatch(/^beacon_hbase_request_bytes_total\{kind="log"\} [1-9]/m)
  expect(text).toMatch(/^beacon_hbase_socket_writes_total\{service="ClientService",server="[^"]+"\} [1-9]/m)
  expect(text).toMatch(/^beacon_access_log_entries_total\{sink="hbase",state="written"\} 5$/m)
  expect(text).toMatch(/^beacon_access_log_queue_depth\{sink="hbase"\} 0$/m)
})

test('every beacon_ metric family carries samples after real traffic, with the values that traffic implies', async () => {
  const client = testClient()
  try {
    await client.put(CONFIG_TABLE, `${ID}bad`, { c: { json: '[1,2]' } }) // not an object: the default is served
    expect((await request(`${app.url}/api/sample2.js?id=${ID}bad&callback=cb`)).body).toContain('"default":true')
    await expect(app.client.get(CONFIG_TABLE, 'x', { families: ['nofamily'] })).rejects.toMatchObject({ code: 'HBASE_NO_SUCH_FAMILY' })
    for (let i = 0; i < 3; i++) await request(`${app.url}/api/sample4.js?id=${i + 1}&callback=cb`)
    await Promise.all([app.sinks.get('file').flush(), app.sinks.get('hbase').flush()])
    const text = (await request(`${app.adminUrl}/metrics`)).body
    const families = [...text.matchAll(/^# TYPE (beacon_\S+) (\S+)$/gm)].map((m) => m[1])
    expect(families.length).toBeGreaterThanOrEqual(11)
    const value = (sample) => {
      const line = text.split('\n').find((l) => l.startsWith(sample + ' '))
      return line === undefined ? undefined : Number(line.slice(sample.length + 1))
    }
    for (const family of families) {
      expect([family, text.split('\n').some((l) => l.startsWith(family) && !l.startsWith('#'))]).toEqual([family, true])
    }
    expect(value('beacon_config_invalid_total')).toBe(1)
    expect(value('beacon_hbase_rpc_errors_total{method="Get",code="HBASE_NO_SUCH_FAMILY"}')).toBe(1)
    expect(value('beacon_http_requests_total{endpoint="sample4",status="200"}')).toBe(3)
    expect(value('beacon_access_log_entries_total{sink="file",state="written"}')).toBe(3)
    expect(value('beacon_access_log_pending{sink="hbase"}')).toBe(0)
    expect(value('beacon_access_log_journal_pending{sink="hbase"}')).toBe(0)
    expect(value('beacon_access_log_oldest_pending_seconds{sink="hbase"}')).toBe(0)
  } finally {
    await client.delete(CONFIG_TABLE, `${ID}bad`).catch(() => {})
    await client.close()
  }
})

test('unauthenticated or wrongly authenticated admin calls get 401 and change nothing', async () => {
  const before = await request(`${app.url}/api/sample3.js?id=42&callback=cb`)
  for (const token of [null, 'wrong-token', `${TOKEN}x`]) {
    const put = await adminRequest('/admin/config/42', { method: 'PUT', token, body: '{"hacked":true}' })
    expect(put.status).toBe(401)
    expect(put.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const del = await adminRequest('/admin/config/42', { method: 'DELETE', token })
    expect(del.status).toBe(401)
  }
  const after = await request(`${app.url}/api/sample3.js?id=42&callback=cb`)
  expect(after.body).toBe(before.body)
  expect(app.logLines.filter((l) => l.audit)).toHaveLength(0)
})

test('PUT, GET and DELETE of an id are seen by the JSONP endpoints at once, with an audit line each', async () => {
  await request(`${app.url}/api/sample3.js?id=${ID}&callback=cb`) // caches the default for this id
  const put = await adminRequest(`/admin/config/${ID}`, { method: 'PUT', body: JSON.stringify({ features: { beta: true }, variant: 'Z' }) })
  expect(put.status).toBe(200)
  const served = await request(`${app.url}/api/sample3.js?id=${ID}&callback=cb`)
  expect(served.body).toBe('/**/ typeof cb === \'function\' && ' +
    `cb({"id":"${ID}","default":false,"config":{"features":{"beta":true},"variant":"Z"}});`)
  const got = JSON.parse((await adminRequest(`/admin/config/${ID}`)).text)
  expect(got).toMatchObject({ id: ID, config: { features: { beta: true }, variant: 'Z' } })
  expect(typeof got.version).toBe('number')

  const del = await adminRequest(`/admin/config/${ID}`, { method: 'DELETE' })
  expect(del.status).toBe(204)
  const after = await request(`${app.url}/api/sample3.js?id=${ID}&callback=cb`)
  expect(after.body).toContain('"default":true')
  expect((await adminRequest(`/admin/config/${ID}`)).status).toBe(404)

  const audit = app.logLines.filter((l) => l.audit)
  expect(audit.map((l) => l.action)).toEqual(['config.set', 'config.delete'])
  expect(audit[0]).toMatchObject({ target: ID, actor: 'default', change: { config: { features: { beta: true }, variant: 'Z' } } })
})

test('a config change made on one host reaches the cache of another within the poll interval, not the TTL', async () => {
  const otherHost = await startBeacon({ overrides: { hbase: hbaseOverrides } })
  const id = `${ID}x`
  try {
    const url = `${otherHost.url}/api/sample3.js?id=${id}&callback=cb`
    expect((await request(url)).body).toContain('"default":true') // cached there for ttlMs (30 s)
    expect((await adminRequest(`/admin/config/${id}`, { method: 'PUT', body: '{"features":{"far":true}}' })).status).toBe(200)
    const changedAt = Date.now()
    while (!(await request(url)).body.includes('"far":true') && Date.now() - changedAt < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect((await request(url)).body).toContain('"default":false,"config":{"features":{"far":true}}')
    expect(Date.now() - changedAt).toBeLessThan(2000)
    expect((await adminRequest(`/admin/config/${id}`, { method: 'DELETE' })).status).toBe(204)
    const deletedAt = Date.now()
    while (!(await request(url)).body.includes('"default":true') && Date.now() - deletedAt < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect((await request(url)).body).toContain('"default":true')
  } finally {
    await otherHost.close()
  }
})

test('invalid toggle bodies are rejected with a 4xx naming the problem', async () => {
  const cases = [
    ['[1,2]', 400, /must be a JSON object/],
    ['"text"', 400, /must be a JSON object/],
    ['{"a":{"b":{"c":{"d":{"e":1}}}}}', 400, /deeper/],
    ['{"bad key!":1}', 400, /invalid key/],
    ['{"n":1e999}', 400, /./],
    ['{not json', 400, /valid JSON/],
    [JSON.stringify({ big: 'x'.repeat(20000) }), 413, /exceeds/]
  ]
  for (const [body, status, message] of cases) {
    const res = await adminRequest(`/admin/config/${ID}`, { method: 'PUT', body })
    expect(res.status).toBe(status)
    expect(JSON.parse(res.text).error.message).toMatch(message)
  }
  expect((await adminRequest('/admin/config/bad%20id', { method: 'PUT', body: '{}' })).status).toBe(400)
})

test('an endpoint switched off at runtime is off on every host (stored in HBase), and back on', async () => {
  const otherHost = await startBeacon({ overrides: { hbase: hbaseOverrides } })
  let lateHost
  try {
    const status = async (base) => (await request(`${base}/api/sample2.js?id=1&callback=cb`)).status
    expect(await status(otherHost.url)).toBe(200)
    expect((await adminRequest('/admin/endpoints/sample2', { method: 'PUT', body: '{"enabled":false}' })).status).toBe(200)
    const off = await request(`${app.url}/api/sample2.js?id=1&callback=cb`)
    expect(off.status).toBe(404) // this process: at once
    expect(off.body).toContain('ENDPOINT_DISABLED')
    // Another process: within its poll interval (100 ms here, 1 s by default) plus one read.
    const switchedAt = Date.now()
    while (await status(otherHost.url) === 200 && Date.now() - switchedAt < 5000) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await status(otherHost.url)).toBe(404)
    expect(Date.now() - switchedAt).toBeLessThan(2000)
    // A process started later reads the switch before it serves its first request.
    lateHost = await startBeacon({ overrides: { hbase: { ...hbaseOverrides, controlPollMs: 60000 } } })
    expect(await status(lateHost.url)).toBe(404)
    const listed = JSON.parse((await adminRequest('/admin/endpoints')).text).endpoints
    expect(listed).toContainEqual({ name: 'sample2', enabled: false })
    expect(listed).toContainEqual({ name: 'sample3', enabled: true })

    expect((await adminRequest('/admin/endpoints/sample2', { method: 'PUT', body: '{"enabled":true}' })).status).toBe(200)
    expect(await status(app.url)).toBe(200)
    const onAt = Date.now()
    while (await status(otherHost.url) !== 200 && Date.now() - onAt < 5000) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await status(otherHost.url)).toBe(200)
    expect((await adminRequest('/admin/endpoints/nope', { method: 'PUT', body: '{"enabled":true}' })).status).toBe(404)
    expect((await adminRequest('/admin/endpoints/sample2', { method: 'PUT', body: '{"enabled":"no"}' })).status).toBe(400)
    const audit = app.logLines.filter((l) => l.audit && l.target === 'sample2').map((l) => l.action)
    expect(audit).toEqual(['endpoint.disable', 'endpoint.enable'])
  } finally {
    await otherHost.close()
    if (lateHost) await lateHost.close()
  }
})

test('the CLI drives the same API', async () => {
  const env = { ...process.env }
  process.env.BEACON_ADMIN_URL = app.adminUrl
  process.env.BEACON_ADMIN_TOKEN = TOKEN
  try {
    await cli(['config', 'set', ID, '{"features":{"cli":true}}'])
    expect(await cli(['config', 'get', ID])).toMatchObject({ config: { features: { cli: true } } })
    const list = await cli(['config', 'list', '--start', ID, '--limit', '1'])
    expect(list.ids).toEqual([ID])
    expect(await cli(['config', 'delete', ID])).toEqual({ id: ID, deleted: true })
    await expect(cli(['config', 'get', ID])).rejects.toThrow(/404/)
    expect((await cli(['endpoint', 'list'])).endpoints.map((e) => e.name)).toEqual(['sample1', 'sample2', 'sample3', 'sample4', 'sample5'])
    process.env.BEACON_ADMIN_TOKEN = 'nope'
    await expect(cli(['config', 'get', '1'])).rejects.toThrow(/401/)
  } finally {
    process.env = env
  }
})

test('without a configured token the admin API is off', async () => {
  const plain = await startBeacon()
  try {
    const res = await fetch(`${plain.adminUrl}/admin/config/1`, { headers: { Authorization: 'Bearer anything' } })
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe('ADMIN_DISABLED')
  } finally {
    await plain.close()
  }
})
