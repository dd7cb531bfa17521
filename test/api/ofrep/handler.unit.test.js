'use strict'

// The OFREP wiring over a real socket, with the endpoint's lookup and sinks stood in for (the
// main tier's test/api/ofrep.test.js runs the same paths against HBase): routing by the
// endpoint's base, the order of the checks, the answers, and one access entry and one count per
// evaluation, none per preflight.

const http = require('node:http')
const { loadSettings } = require('../../../config')
const { createDataPlane } = require('../../../api/public/data-plane')
const { buildOfrepRoutes, matchOfrepRoute } = require('../../../api/public/ofrep/routes')
const { createOfrepHandler } = require('../../../api/public/ofrep/handler')
const { configEntry } = require('../../../lib/toggles/entry')
const { ofrepPost } = require('../../support/ofrep-client')

const SHOP = 'https://shop.example'
const KEY = 'k-0123456789abcdef'
const CONFIGS = { 42: { variant: 'B', features: { search: true }, limit: 5 } }
const DEFAULT = { features: {} }

let server
let base
let endpoints
const logged = []
const counted = []
const cors = []
let failLookups = false

function endpoint (name) {
  return {
    name,
    enabled: true,
    lookup (id) {
      if (failLookups) return Promise.reject(Object.assign(new Error('down'), { code: 'HBASE_UNAVAILABLE' }))
      const value = CONFIGS[id]
      const entry = value ? configEntry(value, '1700000000000', true) : configEntry(DEFAULT, 'd1', false)
      return id === 'async' ? Promise.resolve(entry) : entry
    },
    sinks: [{ write: (entry) => logged.push(entry) }],
    sinkGroups: null,
    logBeforeAnswer: false
  }
}

beforeAll(async () => {
  const settings = loadSettings({
    env: { T_OFREP_KEYS: KEY },
    overrides: {
      endpoints: {
        sample5: { cors: { origins: [SHOP] } },
        sample3: { ofrep: { apiKeysEnv: 'T_OFREP_KEYS', maxBodyBytes: 128 } },
        sample2: { ofrep: false }
      }
    }
  })
  endpoints = new Map(['sample2', 'sample3', 'sample5'].map((n) => [`/api/${n}.js`, endpoint(n)]))
  const handler = createDataPlane({
    endpoints,
    limits: settings.limits,
    maxUrlLength: 2048,
    fallback: (req, res) => { res.writeHead(404); res.end('"fallback"') },
    ofrepRoutes: buildOfrepRoutes(settings, endpoints),
    handleOfrep: createOfrepHandler({
      hooks: { onResponse: (name, status) => counted.push([name, status]), onCors: (name, outcome) => cors.push(outcome) }
    }),
    onResponse: () => {}
  })
  server = http.createServer(handler)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${server.address().port}`
})

afterAll(() => new Promise((resolve) => server.close(resolve)))

beforeEach(() => {
  logged.length = 0
  counted.length = 0
  cors.length = 0
  failLookups = false
})

const post = (path, options = {}) => ofrepPost(base + path, { body: '{"context":{"targetingKey":"42"}}', ...options })

const BULK = '/api/sample5/ofrep/v1/evaluate/flags'

test('matchOfrepRoute: the bulk path, the key as the raw rest, and nothing else', () => {
  const route = /** @type {any} */ ({ name: 'sample5' })
  const routes = new Map([['/api/sample5', route]])
  expect(matchOfrepRoute(routes, BULK)).toEqual({ route, rawKey: null })
  expect(matchOfrepRoute(routes, BULK + '/a%2Fb/c')).toEqual({ route, rawKey: 'a%2Fb/c' })
  expect(matchOfrepRoute(routes, BULK + '/')).toEqual({ route, rawKey: '' })
  for (const path of [BULK + 'x', '/api/sample3/ofrep/v1/evaluate/flags', '/api/sample5//ofrep/v1/evaluate/flags', '/api/sample5/ofrep',
    '/ofrep/v1/evaluate/flags', '/API/sample5/ofrep/v1/evaluate/flags']) {
    expect({ path, match: matchOfrepRoute(routes, path) }).toEqual({ path, match: null })
  }
})

test('bulk: every flag with an ETag; 304 on If-None-Match; one entry and one count each', async () => {
  const res = await post(BULK)
  expect(res.status).toBe(200)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(res.json.flags).toEqual([
    { key: 'variant', value: 'B', reason: 'TARGETING_MATCH' },
    { key: 'features', value: { search: true }, reason: 'TARGETING_MATCH' },
    { key: 'features.search', value: true, reason: 'TARGETING_MATCH' },
    { key: 'limit', value: 5, reason: 'TARGETING_MATCH' }
  ])
  const again = await post(BULK, { headers: { 'If-None-Match': res.headers.etag } })
  expect(again.status).toBe(304)
  expect(again.text).toBe('')
  expect(again.headers.etag).toBe(res.headers.etag)
  expect(logged.map((e) => [e.endpoint, e.id, e.status])).toEqual([['sample5', '42', 200], ['sample5', '42', 304]])
  expect(counted).toEqual([['sample5', 200], ['sample5', 304]])
})

test('single flag, asynchronous lookup, unknown id, unknown key', async () => {
  expect((await post(BULK + '/features.search')).json).toEqual({ key: 'features.search', value: true, reason: 'TARGETING_MATCH' })
  const fallback = await post(BULK + '/features', { body: '{"context":{"targetingKey":"async"}}' })
  expect(fallback.json).toEqual({ key: 'features', value: {}, reason: 'STATIC' })
  const missing = await post(BULK + '/no%2Fsuch')
  expect(missing.status).toBe(404)
  expect(missing.json).toMatchObject({ key: 'no/such', errorCode: 'FLAG_NOT_FOUND' })
  expect(logged.map((e) => e.status)).toEqual([200, 200, 404])
})

test('a lookup failure is the OFREP 503 with Retry-After, key included on the single path', async () => {
  failLookups = true
  const res = await post(BULK + '/variant')
  expect(res.status).toBe(503)
  expect(res.headers['retry-after']).toBe('1')
  expect(res.json).toMatchObject({ key: 'variant', errorCode: 'GENERAL' })
})

test('a disabled endpoint answers DISABLED items without reading its config', async () => {
  const sample5 = endpoints.get('/api/sample5.js')
  sample5.enabled = false
  failLookups = true // a lookup would fail: none is made
  try {
    const bulk = await post(BULK)
    expect(bulk.status).toBe(200)
    // The change stream is still named: the client hears when the endpoint is switched back on.
    expect(bulk.json).toEqual({
      flags: [{ key: 'features', reason: 'DISABLED' }],
      metadata: { endpoint: 'sample5' },
      eventStreams: [{ type: 'sse', endpoint: { requestUri: '/api/sample5/changes?id=42' }, inactivityDelaySec: 120 }]
    })
    expect((await post(BULK + '/any.key')).json).toEqual({ key: 'any.key', reason: 'DISABLED' })
    expect((await post(BULK, { body: '{}' })).status).toBe(400) // the request is still checked
  } finally {
    sample5.enabled = true
  }
})

test('API key: 401 without, 403 wrong, 200 with X-API-Key or Bearer; checked before the body', async () => {
  const path = '/api/sample3/ofrep/v1/evaluate/flags'
  const none = await post(path)
  expect(none.status).toBe(401)
  expect(none.headers['www-authenticate']).toBe('Bearer')
  expect(none.headers.connection).toBe('close')
  expect((await post(path, { headers: { 'X-API-Key': 'wrong-0123456789abcdef' } })).status).toBe(403)
  expect((await post(path, { headers: { 'X-API-Key': KEY } })).status).toBe(200)
  expect((await post(path + '/variant', { headers: { Authorization: 'Bearer ' + KEY } })).status).toBe(200)
  // The key comes first: a bad body with no key is a 401, not a 400.
  expect((await post(path, { body: 'not json' })).status).toBe(401)
  expect(logged.map((e) => [e.id, e.status])).toEqual([[null, 401], [null, 403], ['42', 200], ['42', 200], [null, 401]])
})

test('400s and 413 from the table; nothing of the body comes back', async () => {
  const cases = [
    [{ headers: { 'Content-Type': 'text/plain' } }, 400, 'PARSE_ERROR'],
    [{ body: '{"context":' }, 400, 'PARSE_ERROR'],
    [{ body: '{"context":[]}' }, 400, 'INVALID_CONTEXT'],
    [{ body: '{}' }, 400, 'TARGETING_KEY_MISSING'],
    [{ body: '{"context":{"targetingKey":"<reflect>"}}' }, 400, 'INVALID_CONTEXT']
  ]
  for (const [options, status, errorCode] of cases) {
    const res = await post(BULK, options)
    expect({ status: res.status, errorCode: res.json.errorCode }).toEqual({ status, errorCode })
    expect(res.text).not.toContain('reflect')
  }
  const big = await post('/api/sample3/ofrep/v1/evaluate/flags', { headers: { 'X-API-Key': KEY }, body: 'x'.repeat(200) })
  expect(big.status).toBe(413)
  expect(big.headers.connection).toBe('close')
  const badKey = await post(BULK + '/a%zz')
  expect(badKey.status).toBe(400)
  expect(badKey.json).toMatchObject({ key: 'a%zz', errorCode: 'PARSE_ERROR' })
})

test('CORS: preflight with POST, the headers and Vary; exposed ETag; none for another origin', async () => {
  const pre = await post(BULK, { method: 'OPTIONS', headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST' } })
  expect(pre.status).toBe(204)
  expect(pre.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'Content-Type, If-None-Match, Authorization, X-API-Key',
    vary: 'Origin'
  })
  const evil = { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' }
  const denied = await post(BULK, { method: 'OPTIONS', headers: evil })
  expect(denied.status).toBe(403)
  expect(denied.headers['access-control-allow-origin']).toBeUndefined()
  const ok = await post(BULK, { headers: { Origin: SHOP } })
  expect(ok.headers['access-control-allow-origin']).toBe(SHOP)
  expect(ok.headers['access-control-expose-headers']).toBe('ETag, Retry-After')
  const other = await post(BULK, { headers: { Origin: 'https://evil.example' } })
  expect(other.status).toBe(200)
  expect(other.headers['access-control-allow-origin']).toBeUndefined()
  expect(other.headers['access-control-expose-headers']).toBeUndefined()
  expect(cors).toEqual(['preflight', 'preflight_denied', 'allowed', 'denied'])
  expect(logged.length).toBe(2) // the two evaluations, not the preflights
})

test('other methods: 405 with Allow; an endpoint without ofrep falls through to the 404 of unknown paths', async () => {
  const get = await post(BULK, { method: 'GET' })
  expect(get.status).toBe(405)
  expect(get.headers.allow).toBe('POST, OPTIONS')
  expect((await post('/api/sample3/ofrep/v1/evaluate/flags', { method: 'PUT' })).headers.allow).toBe('POST')
  const off = await post('/api/sample2/ofrep/v1/evaluate/flags')
  expect(off.status).toBe(404)
  expect(off.json).toBe('fallback')
})
