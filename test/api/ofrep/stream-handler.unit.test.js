'use strict'

// The change stream's HTTP wiring over a real socket, with the endpoints' lookups stood in for
// (test/api/ofrep-stream.test.js runs it against HBase and the admin API): the order of the
// checks and their refusals, the stream's headers and first bytes, CORS, the token of a keyed
// endpoint as the bulk answer hands it out, the cap, and an endpoint without a stream.

const http = require('node:http')
const { loadSettings } = require('../../../config')
const { createDataPlane } = require('../../../api/public/data-plane')
const { buildOfrepRoutes } = require('../../../api/public/ofrep/routes')
const { createOfrepHandler } = require('../../../api/public/ofrep/handler')
const { createStreamHub } = require('../../../api/public/ofrep/stream-hub')
const { createStreamHandler, parseStreamQuery } = require('../../../api/public/ofrep/stream-handler')
const { configEntry } = require('../../../lib/toggles/entry')
const { ofrepPost } = require('../../support/ofrep-client')
const { openStream, isRefetch } = require('../../support/sse-client')

const SHOP = 'https://shop.example'
const KEY = 'k-0123456789abcdef'
const DEFAULT = { features: {} }

let server
let base
let hub
const streams = []

function endpoint (name) {
  return { name, enabled: true, lookup: () => configEntry(DEFAULT, 'd1', false), sinks: [], sinkGroups: null, logBeforeAnswer: false }
}

beforeAll(async () => {
  const settings = loadSettings({
    env: { T_STREAM_KEYS: KEY },
    overrides: {
      hbase: { controlPollMs: 0 },
      endpoints: {
        sample5: { cors: { origins: [SHOP] } },
        sample3: { ofrep: { apiKeysEnv: 'T_STREAM_KEYS', maxStreams: 2 } },
        sample2: { ofrep: { maxStreams: 0 } },
        sample4: { ofrep: { maxStreamsPerClient: 2 } }
      }
    }
  })
  const endpoints = new Map(['sample2', 'sample3', 'sample4', 'sample5'].map((n) => [`/api/${n}.js`, endpoint(n)]))
  const routes = buildOfrepRoutes(settings, endpoints)
  hub = createStreamHub({ routes: routes.values(), controlPollMs: 0 })
  server = http.createServer(createDataPlane({
    endpoints,
    limits: settings.limits,
    maxUrlLength: 2048,
    fallback: (req, res) => { res.writeHead(404); res.end('"fallback"') },
    ofrepRoutes: routes,
    handleOfrep: createOfrepHandler({ handleStream: createStreamHandler({ hub, maxIdLength: settings.limits.maxIdLength }) })
  }))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${server.address().port}`
})

afterEach(() => {
  for (const s of streams.splice(0)) s.close()
})

afterAll(async () => {
  hub.close()
  await new Promise((resolve) => server.close(resolve))
})

async function open (path, headers = {}, localAddress = undefined) {
  const stream = await openStream(base + path, { headers, localAddress })
  streams.push(stream)
  return stream
}

/** A request that is answered (not streamed): status, headers, JSON body. */
function ask (path, { method = 'GET', headers = {} } = {}) {
  return ofrepPost(base + path, { method, headers })
}

test('a stream: 200 text/event-stream, no caching or buffering, Connection: close; its first bytes', async () => {
  const s = await open('/api/sample5/changes?id=7&_=1')
  expect(s.status).toBe(200)
  expect(s.headers).toMatchObject({
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-accel-buffering': 'no',
    connection: 'close',
    vary: 'Origin'
  })
  const first = await s.find((b) => b.retry !== undefined)
  expect(first).toMatchObject({ retry: expect.stringMatching(/^[1-4][0-9]{3}$/), id: expect.stringMatching(/^[0-9]{13}$/) })
  const got = s.next(isRefetch)
  hub.configChanged('7', Date.now())
  expect(JSON.parse((await got).data).type).toBe('refetchEvaluation')
})

test('the checks in order, each refused from the error table; nothing of the request comes back', async () => {
  const cases = [
    [{ method: 'POST' }, '/api/sample5/changes?id=7', 405, 'METHOD_NOT_ALLOWED'],
    [{}, '/api/sample5/changes?id=' + 'a'.repeat(3000), 414, 'URL_TOO_LONG'],
    [{ headers: { Origin: 'https://evil.example' } }, '/api/sample5/changes?id=7', 403, 'ORIGIN_NOT_ALLOWED'],
    [{}, '/api/sample5/changes', 400, 'MISSING_ID'],
    [{}, '/api/sample5/changes?id=', 400, 'BAD_ID'],
    [{}, '/api/sample5/changes?id=%3Creflect%3E', 400, 'BAD_ID'],
    [{}, '/api/sample5/changes?id=%zz', 400, 'BAD_ID'],
    [{}, '/api/sample5/changes?id=7&id=8', 400, 'DUPLICATE_PARAM'],
    [{}, '/api/sample3/changes?id=7', 401, 'STREAM_TOKEN_MISSING'],
    [{}, '/api/sample3/changes?id=7&token=reflect', 403, 'STREAM_TOKEN_WRONG'],
    [{ headers: { 'X-API-Key': 'wrong-0123456789abcdef' } }, '/api/sample3/changes?id=7', 403, 'STREAM_TOKEN_WRONG']
  ]
  for (const [options, path, status, code] of cases) {
    const res = await ask(path, options)
    expect({ path, status: res.status, code: res.json.error.code }).toEqual({ path, status, code })
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.text).not.toContain('reflect')
  }
  expect((await ask('/api/sample5/changes?id=7', { method: 'POST' })).headers.allow).toBe('GET, OPTIONS')
  expect((await ask('/api/sample3/changes?id=7', { method: 'DELETE' })).headers.allow).toBe('GET')
  expect((await ask('/api/sample3/changes?id=7')).headers['www-authenticate']).toBe('Bearer')
})

test('CORS: a listed origin gets its header and a preflight answer; another origin is refused', async () => {
  const s = await open('/api/sample5/changes?id=7', { Origin: SHOP })
  expect(s.status).toBe(200)
  expect(s.headers['access-control-allow-origin']).toBe(SHOP)
  const pre = await ask('/api/sample5/changes?id=7', {
    method: 'OPTIONS', headers: { Origin: SHOP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'last-event-id' }
  })
  expect(pre.status).toBe(204)
  expect(pre.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-allow-methods': 'GET',
    'access-control-allow-headers': 'Last-Event-ID, Cache-Control, Authorization, X-API-Key'
  })
  const evil = { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' }
  const denied = await ask('/api/sample5/changes?id=7', { method: 'OPTIONS', headers: evil })
  expect(denied.status).toBe(403)
  expect(denied.headers['access-control-allow-origin']).toBeUndefined()
})

test('a keyed endpoint: the bulk answer\'s URL carries a token that opens the stream; a key header does too', async () => {
  const bulk = await ofrepPost(`${base}/api/sample3/ofrep/v1/evaluate/flags`, { targetingKey: '7', headers: { 'X-API-Key': KEY } })
  const [stream] = bulk.json.eventStreams
  expect(stream.endpoint.requestUri).toMatch(/^\/api\/sample3\/changes\?id=7&token=[A-Za-z0-9_-]{32}$/)
  expect(stream.endpoint.requestUri).not.toContain(KEY)
  expect((await open(stream.endpoint.requestUri)).status).toBe(200)
  expect((await open('/api/sample3/changes?id=7', { 'X-API-Key': KEY })).status).toBe(200)
  // The token is for id 7 only.
  expect((await ask(stream.endpoint.requestUri.replace('id=7', 'id=8'))).status).toBe(403)
})

test('the cap: past maxStreams the worker refuses 503 TOO_MANY_STREAMS with Retry-After; a closed stream frees a place', async () => {
  const keyed = { 'X-API-Key': KEY }
  const a = await open('/api/sample3/changes?id=1', keyed)
  await open('/api/sample3/changes?id=2', keyed)
  const full = await ask('/api/sample3/changes?id=3', { headers: keyed })
  expect(full.status).toBe(503)
  expect(full.headers['retry-after']).toBe('5')
  expect(full.json.error.code).toBe('TOO_MANY_STREAMS')
  a.close()
  // The server sees the close on its own side of the socket a moment later.
  while (hub.stats().open.sample3 === 2) await new Promise((resolve) => setImmediate(resolve))
  expect((await open('/api/sample3/changes?id=3', keyed)).status).toBe(200)
  expect(hub.stats().counts.sample3.refused).toMatchObject({ TOO_MANY_STREAMS: 1 })
})

test('maxStreams 0: no stream, its path is the 404 of unknown paths, and bulk answers name none', async () => {
  expect((await ask('/api/sample2/changes?id=7')).text).toBe('"fallback"')
  const bulk = await ofrepPost(`${base}/api/sample2/ofrep/v1/evaluate/flags`, { targetingKey: '7' })
  expect(bulk.status).toBe(200)
  expect(bulk.json.eventStreams).toBeUndefined()
  const withStreams = await ofrepPost(`${base}/api/sample5/ofrep/v1/evaluate/flags`, { targetingKey: '7' })
  const requestUri = '/api/sample5/changes?id=7'
  expect(withStreams.json.eventStreams).toEqual([{ type: 'sse', endpoint: { requestUri }, inactivityDelaySec: 120 }])
})

test('parseStreamQuery: id once and valid; token at most once; other parameters ignored', () => {
  expect(parseStreamQuery('id=7', 64)).toEqual({ id: '7', token: null, error: null })
  expect(parseStreamQuery('%69d=a_B-9&token=t&x=%zz', 64)).toEqual({ id: 'a_B-9', token: 't', error: null })
  expect(parseStreamQuery('id=7&token=a&token=b', 64)).toMatchObject({ id: '7', token: '' })
  expect(parseStreamQuery('id=' + 'a'.repeat(65), 64).error.code).toBe('BAD_ID')
  expect(parseStreamQuery('id=a+b', 64).error.code).toBe('BAD_ID')
})

test('one client\'s share: past maxStreamsPerClient its address gets 429 RATE_LIMITED with Retry-After; another is let in', async () => {
  await open('/api/sample4/changes?id=1', {}, '127.0.0.2')
  const second = await open('/api/sample4/changes?id=2', {}, '127.0.0.2')
  const refused = await new Promise((resolve, reject) => {
    http.get(`${base}/api/sample4/changes?id=3`, { agent: false, localAddress: '127.0.0.2' }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, json: JSON.parse(text) }))
    }).on('error', reject)
  })
  expect(refused.status).toBe(429)
  expect(refused.headers['retry-after']).toBe('5')
  expect(refused.json.error.code).toBe('RATE_LIMITED')
  expect((await open('/api/sample4/changes?id=3', {}, '127.0.0.3')).status).toBe(200)
  // A closed stream gives its client its place back.
  second.close()
  while (hub.stats().open.sample4 === 3) await new Promise((resolve) => setImmediate(resolve))
  expect((await open('/api/sample4/changes?id=4', {}, '127.0.0.2')).status).toBe(200)
  expect(hub.stats().counts.sample4.refused).toMatchObject({ RATE_LIMITED: 1 })
})
