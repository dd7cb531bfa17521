'use strict'

// Per-client limits over real sockets (issue 35): a greedy client on 127.0.0.1 and a modest
// one on 127.0.0.2, against a beacon built by the root factory on the shared test HBase. The
// greedy one gets 429 with Retry-After (a script body for a script tag, JSON otherwise, the
// OFREP error body on OFREP), counted per endpoint and never an access-log entry; the modest one
// is never refused. A trusted proxy's X-Forwarded-For makes its clients count apart.

const http = require('node:http')
const { startBeacon } = require('../support/beacon')

const BURST = 20
let app
// The beacon's clock, the buckets' included: it stands still unless a test moves it, so what a
// bucket lets through is exact however slow the machine is.
let clock = 1e6

beforeAll(async () => {
  app = await startBeacon({ env: { BEACON_RATE_LIMIT: `1:${BURST}`, BEACON_TRUSTED_PROXIES: '127.0.0.3' }, now: () => clock })
})
afterAll(() => app && app.close())

/** One request from a chosen loopback address, on a fresh connection. */
function from (localAddress, path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}${path}`, { method, headers, localAddress, agent: false }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

function metric (series) {
  return app.metrics.register.getSingleMetricAsString('beacon_rate_limited_total').then((text) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '))
    return line === undefined ? 0 : Number(line.slice(series.length + 1))
  })
}

test('the greedy address gets 429 with Retry-After; the other is never refused; refusals are counted, not logged', async () => {
  const greedy = []
  const modest = []
  for (let i = 0; i < 60; i++) {
    greedy.push(await from('127.0.0.1', `/api/sample5.js?id=${i}&callback=cb`))
    if (i % 4 === 0) modest.push(await from('127.0.0.2', `/api/sample5.js?id=${i}&callback=cb`))
  }
  expect(modest.map((r) => r.status)).toEqual(modest.map(() => 200))
  const refused = greedy.filter((r) => r.status === 429)
  const answered = greedy.filter((r) => r.status === 200)
  expect(answered.length).toBe(BURST)
  expect(refused.length).toBe(60 - BURST)
  expect(greedy.slice(0, BURST).map((r) => r.status)).toEqual(Array(BURST).fill(200))
  // A second later the bucket holds one token again, and only one.
  clock += 1000
  const later = [await from('127.0.0.1', '/api/sample5.js?id=a&callback=cb'), await from('127.0.0.1', '/api/sample5.js?id=b&callback=cb')]
  expect(later.map((r) => r.status)).toEqual([200, 429])
  refused.push(later[1])
  answered.push(later[0])
  for (const r of refused) {
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(r.headers['content-type']).toMatch(/javascript/)
    expect(r.body).toContain('RATE_LIMITED')
    expect(r.body).not.toContain('cb(') // the page's callback is not called with a refusal
  }
  expect(await metric('beacon_rate_limited_total{endpoint="sample5"}')).toBe(refused.length)
  // Only the answered views are entries of the access log.
  await app.sinks.get('hbase').flush()
  expect(app.sinks.get('hbase').stats().accepted).toBe(answered.length + modest.length)
})

test('JSON without a callback, and the OFREP error body with Retry-After on OFREP paths', async () => {
  let json
  for (let i = 0; i < 2 * BURST + 5 && !json; i++) {
    const r = await from('127.0.0.4', '/api/sample3.js?id=1')
    if (r.status === 429) json = r
  }
  expect(json.headers['content-type']).toMatch(/application\/json/)
  expect(JSON.parse(json.body)).toMatchObject({ error: { code: 'RATE_LIMITED' } })
  let ofrep
  const body = JSON.stringify({ context: { targetingKey: '1' } })
  for (let i = 0; i < 2 * BURST + 5 && !ofrep; i++) {
    const headers = { 'content-type': 'application/json' }
    const r = await from('127.0.0.5', '/api/sample5/ofrep/v1/evaluate/flags', { method: 'POST', headers, body })
    if (r.status === 429) ofrep = r
  }
  expect(Number(ofrep.headers['retry-after'])).toBeGreaterThanOrEqual(1)
  expect(JSON.parse(ofrep.body)).toEqual({ errorCode: 'GENERAL', errorDetails: expect.stringMatching(/too many requests/) })
})

test('behind a trusted proxy, each forwarded client has its own share', async () => {
  const statuses = async (client) => {
    const out = []
    for (let i = 0; i < BURST; i++) {
      out.push((await from('127.0.0.3', '/api/sample1.js?id=1', { headers: { 'x-forwarded-for': client } })).status)
    }
    return out
  }
  // 2 × BURST requests through one proxy address: neither client is past its own burst.
  expect(await statuses('198.51.100.7')).toEqual(Array(BURST).fill(200))
  expect(await statuses('198.51.100.8')).toEqual(Array(BURST).fill(200))
  // A client that is not the proxy cannot pick its share by the header.
  const direct = []
  for (let i = 0; i < 2 * BURST; i++) {
    direct.push((await from('127.0.0.6', '/api/sample1.js?id=1', { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status)
  }
  expect(direct).toEqual([...Array(BURST).fill(200), ...Array(BURST).fill(429)])
})
