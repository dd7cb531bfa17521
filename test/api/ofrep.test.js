'use strict'

// OpenFeature (OFREP) on the endpoints that declare it, over real sockets against the real
// HBase, through createBeacon: an evaluation is a view of the id (the endpoint's cache and
// source, one access-log row and one request count each); ETag and 304; DISABLED on a disabled
// endpoint; API keys; CORS with the ETag exposed; 404 on endpoints without `ofrep`.

const { startBeacon } = require('../support/beacon')
const { ofrepPost } = require('../support/ofrep-client')
const { ofrepValidators } = require('../support/ofrep-schema')
const { sampleConfig } = require('../../tools/dev-hbase')

const SHOP = 'https://shop.example'
const KEY = 'test-key-0123456789abcdef'
const KEYS_ENV = 'BEACON_TEST_OFREP_KEYS'
const schema = ofrepValidators()
let app

beforeAll(async () => {
  app = await startBeacon({
    env: { [KEYS_ENV]: `old-key-0123456789abcdef,${KEY}` },
    overrides: {
      endpoints: {
        sample1: { ofrep: true },
        sample3: { ofrep: { apiKeysEnv: KEYS_ENV } },
        sample5: { cors: { origins: [SHOP] } }
      }
    }
  })
})

afterAll(async () => {
  if (app) await app.close()
})

const flagsUrl = (name, key) => `${app.url}/api/${name}/ofrep/v1/evaluate/flags${key === undefined ? '' : '/' + key}`
const evaluate = (name, options = {}, key = undefined) => ofrepPost(flagsUrl(name, key), options)

async function metric (line) {
  const found = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

/** The access-log rows of sample5 (the endpoint that logs to HBase), flushed first. */
async function accessRows () {
  await app.sinks.get('hbase').flush()
  const rows = []
  for await (const row of app.client.scan(app.accessLogTable, {})) {
    const entry = JSON.parse(row.cells[0].value.toString())
    if (entry.status) rows.push(entry)
  }
  return rows
}

test('bulk for a seeded id: every member a flag, objects expanded to dotted leaves, with an ETag', async () => {
  const config = sampleConfig(7)
  const res = await evaluate('sample5', { targetingKey: '7' })
  expect(res.status).toBe(200)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
  expect(schema.bulkEvaluationSuccess(res.json)).toBeNull()
  const reason = 'TARGETING_MATCH'
  expect(res.json.flags).toEqual([
    { key: 'id', value: 7, reason },
    { key: 'variant', value: config.variant, reason },
    { key: 'sampleRate', value: config.sampleRate, reason },
    { key: 'features', value: config.features, reason },
    ...Object.entries(config.features).map(([name, value]) => ({ key: 'features.' + name, value, reason }))
  ])
  expect(res.json.metadata).toEqual({ endpoint: 'sample5', version: expect.any(String) })
})

test('single flags of every type; an unknown key is 404 FLAG_NOT_FOUND naming it', async () => {
  const config = sampleConfig(7)
  const one = (key) => evaluate('sample5', { targetingKey: '7' }, key)
  for (const [key, value] of [['features.search', config.features.search], ['variant', config.variant], ['sampleRate', 0.8],
    ['features', config.features]]) {
    const res = await one(encodeURIComponent(key))
    expect({ key, status: res.status, body: res.json }).toEqual({ key, status: 200, body: { key, value, reason: 'TARGETING_MATCH' } })
    expect(schema.evaluationSuccess(res.json)).toBeNull()
    expect(res.headers.etag).toBeUndefined()
  }
  const missing = await one('features%2Fnope')
  expect(missing.status).toBe(404)
  expect(missing.json).toMatchObject({ key: 'features/nope', errorCode: 'FLAG_NOT_FOUND' })
  expect(schema.flagNotFound(missing.json)).toBeNull()
})

test('an unknown id gets the defaultConfig with reason STATIC, as a fixed endpoint\'s ids do', async () => {
  const unknown = await evaluate('sample5', { targetingKey: 'no-such-id-42' })
  expect(unknown.json.flags).toEqual([{ key: 'features', value: {}, reason: 'STATIC' }])
  const fixed = await evaluate('sample1', { targetingKey: '7' }, 'variant')
  expect(fixed.json).toEqual({ key: 'variant', value: 'A', reason: 'STATIC' })
})

test('ETag: If-None-Match gets 304 with no body; another id or a stale tag gets 200', async () => {
  const first = await evaluate('sample5', { targetingKey: '9' })
  const again = await evaluate('sample5', { targetingKey: '9', headers: { 'If-None-Match': `"stale", ${first.headers.etag}` } })
  expect(again.status).toBe(304)
  expect(again.text).toBe('')
  expect(again.headers.etag).toBe(first.headers.etag)
  expect((await evaluate('sample5', { targetingKey: '10', headers: { 'If-None-Match': first.headers.etag } })).status).toBe(200)
  expect((await evaluate('sample5', { targetingKey: '9', headers: { 'If-None-Match': '"stale"' } })).status).toBe(200)
})

test('one access-log row and one request count per evaluation, like a JSONP view', async () => {
  const before = { rows: (await accessRows()).length, ok: await metric('beacon_http_requests_total{endpoint="sample5",status="200"}') }
  const bad = await metric('beacon_http_requests_total{endpoint="sample5",status="400"}')
  const answered = JSON.parse((await evaluate('sample5', { targetingKey: '11', headers: { 'User-Agent': 'ofrep-ua' } })).text)
  await evaluate('sample5', { targetingKey: '11' }, 'variant')
  await evaluate('sample5', { body: '{}' })
  const rows = await accessRows()
  expect(rows.length).toBe(before.rows + 3)
  expect(rows.filter((r) => r.id === '11' && r.ua === 'ofrep-ua')).toEqual([{
    ts: expect.any(Number),
    endpoint: 'sample5',
    id: '11',
    bot: true, // 'ofrep-ua' is no browser's agent
    variant: null, // no rollout
    status: 200,
    version: answered.metadata.version, // the config it answered
    ms: expect.any(Number),
    ip: '127.0.0.1',
    ua: 'ofrep-ua',
    ref: null
  }])
  expect(rows.filter((r) => r.id === null && r.status === 400).length).toBeGreaterThanOrEqual(1)
  expect(await metric('beacon_http_requests_total{endpoint="sample5",status="200"}')).toBe(before.ok + 2)
  expect(await metric('beacon_http_requests_total{endpoint="sample5",status="400"}')).toBe(bad + 1)
})

test('a disabled endpoint: DISABLED items for the default keys, 200; no config read', async () => {
  app.beacon.applyChange({ cmd: 'endpoint', name: 'sample5', enabled: false })
  try {
    const lookups = await metric('beacon_config_lookups_total{endpoint="sample5",outcome="miss"}')
    const bulk = await evaluate('sample5', { targetingKey: '12' })
    expect(bulk.status).toBe(200)
    expect(bulk.json).toEqual({
      flags: [{ key: 'features', reason: 'DISABLED' }],
      metadata: { endpoint: 'sample5' },
      eventStreams: [{ type: 'sse', endpoint: { requestUri: '/api/sample5/changes?id=12' }, inactivityDelaySec: 120 }]
    })
    expect((await evaluate('sample5', { targetingKey: '12' }, 'variant')).json).toEqual({ key: 'variant', reason: 'DISABLED' })
    expect(await metric('beacon_config_lookups_total{endpoint="sample5",outcome="miss"}')).toBe(lookups)
  } finally {
    app.beacon.applyChange({ cmd: 'endpoint', name: 'sample5', enabled: true })
  }
})

test('API key: 401 without one, 403 with a wrong one, 200 with either configured key by X-API-Key or Bearer', async () => {
  const none = await evaluate('sample3')
  expect(none.status).toBe(401)
  expect(none.headers['www-authenticate']).toBe('Bearer')
  expect(none.json.errorCode).toBe('GENERAL')
  const wrong = await evaluate('sample3', { headers: { 'X-API-Key': 'wrong-key-0123456789abcdef' } }, 'variant')
  expect(wrong.status).toBe(403)
  expect(wrong.json).toMatchObject({ key: 'variant', errorCode: 'GENERAL' })
  expect((await evaluate('sample3', { headers: { 'X-API-Key': KEY } })).status).toBe(200)
  expect((await evaluate('sample3', { headers: { Authorization: 'Bearer old-key-0123456789abcdef' } }, 'variant')).status).toBe(200)
  expect(JSON.stringify([none.json, wrong.json])).not.toContain('key-0123')
})

test('CORS: a preflight for a listed origin allows POST and the OFREP headers; answers expose ETag', async () => {
  const preflight = (origin) => evaluate('sample5', {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,if-none-match' }
  })
  const ok = await preflight(SHOP)
  expect(ok.status).toBe(204)
  expect(ok.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'Content-Type, If-None-Match, Authorization, X-API-Key',
    'access-control-max-age': '600',
    vary: 'Origin'
  })
  const denied = await preflight('https://evil.example')
  expect(denied.status).toBe(403)
  expect(denied.headers['access-control-allow-origin']).toBeUndefined()
  expect(denied.text).not.toContain('evil')

  const res = await evaluate('sample5', { targetingKey: '7', headers: { Origin: SHOP } })
  expect(res.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-expose-headers': 'ETag, Retry-After',
    vary: 'Origin'
  })
  const other = await evaluate('sample5', { targetingKey: '7', headers: { Origin: 'https://evil.example' } })
  expect(other.status).toBe(200)
  expect(other.headers['access-control-allow-origin']).toBeUndefined()
  expect(other.headers['access-control-expose-headers']).toBeUndefined()
  expect(await metric('beacon_cors_requests_total{endpoint="sample5",outcome="preflight"}')).toBeGreaterThanOrEqual(1)
})

test('an endpoint without ofrep answers its OFREP paths as any unknown path: 404, no hint', async () => {
  const unknown = await ofrepPost(`${app.url}/api/nope/ofrep/v1/evaluate/flags`)
  for (const res of [await evaluate('sample2'), await evaluate('sample4', {}, 'variant')]) {
    expect(res.status).toBe(404)
    expect(res.text).toBe(unknown.text)
  }
  const get = await evaluate('sample5', { method: 'GET' })
  expect(get.status).toBe(405)
  expect(get.headers.allow).toBe('POST, OPTIONS')
})

test('the config store unreachable with nothing cached: 503 GENERAL with Retry-After', async () => {
  // A config table that does not exist fails every read, as an outage does, on this beacon only.
  const down = await startBeacon({ overrides: { hbase: { configTable: 't_no_such_config' } } })
  try {
    const bulk = await ofrepPost(`${down.url}/api/sample5/ofrep/v1/evaluate/flags`)
    expect(bulk.status).toBe(503)
    expect(bulk.headers['retry-after']).toBe('1')
    expect(bulk.json).toEqual({ errorCode: 'GENERAL', errorDetails: expect.any(String) })
    const one = await ofrepPost(`${down.url}/api/sample5/ofrep/v1/evaluate/flags/variant`)
    expect(one.json).toMatchObject({ key: 'variant', errorCode: 'GENERAL' })
  } finally {
    await down.close()
  }
})
