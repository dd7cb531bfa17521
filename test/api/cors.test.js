'use strict'

// CORS on the JSON answer, over real sockets against the real HBase: an allowed origin gets its
// headers and otherwise the very answer a request without Origin gets (body, caching, ETag/304,
// access log, request metrics); another origin gets no CORS header and is counted; preflights
// are answered and counted but not access-logged; endpoints without `cors` are unchanged.

const { startBeacon, request } = require('../support/beacon')

const SHOP = 'https://shop.example'
const EVIL = 'https://evil.example'
let app

beforeAll(async () => {
  app = await startBeacon({
    overrides: {
      endpoints: {
        sample5: { cors: { origins: [SHOP, 'http://127.0.0.1:8080'], maxAgeSeconds: 120 } },
        sample3: { cors: { origins: ['*'] } }
      }
    }
  })
})

afterAll(async () => {
  if (app) await app.close()
})

async function metric (line) {
  const found = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

const corsCount = (outcome) => metric(`beacon_cors_requests_total{endpoint="sample5",outcome="${outcome}"}`)
const requestCount = (status) => metric(`beacon_http_requests_total{endpoint="sample5",status="${status}"}`)
const corsHeaders = (headers) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('access-control-') || k === 'vary'))

async function accessLogRows () {
  await app.sinks.get('hbase').flush()
  let n = 0
  for await (const row of app.client.scan(app.accessLogTable, {})) if (JSON.parse(row.cells[0].value.toString()).status) n++
  return n
}

test('an allowed origin: its CORS headers, and otherwise the same answer as without Origin', async () => {
  const plain = await request(`${app.url}/api/sample5.js?id=7`)
  const before = { allowed: await corsCount('allowed'), ok: await requestCount(200), rows: await accessLogRows() }
  const res = await request(`${app.url}/api/sample5.js?id=7`, { headers: { Origin: SHOP } })
  expect(res.status).toBe(200)
  expect(corsHeaders(res.headers)).toEqual({ 'access-control-allow-origin': SHOP, vary: 'Origin' })
  expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  expect(res.body).toBe(plain.body)
  for (const h of ['content-type', 'cache-control', 'etag', 'content-length', 'x-content-type-options']) {
    expect({ h, v: res.headers[h] }).toEqual({ h, v: plain.headers[h] })
  }
  // Without Origin, the endpoint still says its answers vary by it.
  expect(corsHeaders(plain.headers)).toEqual({ vary: 'Origin' })

  // Revalidation from the page: 304 with the CORS headers, so fetch() can use its cached copy.
  const again = await request(`${app.url}/api/sample5.js?id=7`, { headers: { Origin: SHOP, 'If-None-Match': res.headers.etag } })
  expect(again.status).toBe(304)
  expect(corsHeaders(again.headers)).toEqual({ 'access-control-allow-origin': SHOP, vary: 'Origin' })

  // An error is readable by the page too (the same fixed body, nothing reflected).
  const bad = await request(`${app.url}/api/sample5.js?id=%3Cscript%3E`, { headers: { Origin: SHOP } })
  expect(bad.status).toBe(400)
  expect(bad.headers['access-control-allow-origin']).toBe(SHOP)
  expect(JSON.parse(bad.body).error.code).toBe('BAD_ID')

  expect(await corsCount('allowed')).toBe(before.allowed + 3)
  expect(await requestCount(200)).toBe(before.ok + 1)
  expect(await accessLogRows()).toBe(before.rows + 3) // 200, 304, 400: logged like any request
})

test('another origin: the same answer without CORS headers, counted', async () => {
  const before = await corsCount('denied')
  for (const origin of [EVIL, 'null', `${SHOP}.evil.example`, 'http://shop.example', SHOP + '/', `${SHOP}, ${EVIL}`]) {
    const res = await request(`${app.url}/api/sample5.js?id=7&callback=cb`, { headers: { Origin: origin } })
    expect({ origin, status: res.status }).toEqual({ origin, status: 200 })
    expect({ origin, cors: corsHeaders(res.headers) }).toEqual({ origin, cors: { vary: 'Origin' } })
  }
  expect(await corsCount('denied')).toBe(before + 6)
})

test('a preflight: 204 with methods, headers and max-age for a listed origin, 403 otherwise; never access-logged', async () => {
  const rows = await accessLogRows()
  const ask = (origin) =>
    request(`${app.url}/api/sample5.js?id=7`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'if-none-match' }
    })
  const before = { preflight: await corsCount('preflight'), denied: await corsCount('preflight_denied') }
  const ok = await ask('http://127.0.0.1:8080')
  expect(ok.status).toBe(204)
  expect(ok.body).toBe('')
  expect(corsHeaders(ok.headers)).toEqual({
    'access-control-allow-origin': 'http://127.0.0.1:8080',
    'access-control-allow-methods': 'GET, HEAD',
    'access-control-allow-headers': 'If-None-Match',
    'access-control-max-age': '120',
    vary: 'Origin'
  })
  const no = await ask(EVIL)
  expect(no.status).toBe(403)
  expect(JSON.parse(no.body).error.code).toBe('ORIGIN_NOT_ALLOWED')
  expect(no.body).not.toContain('evil')
  expect(corsHeaders(no.headers)).toEqual({ vary: 'Origin' })
  expect(await corsCount('preflight')).toBe(before.preflight + 1)
  expect(await corsCount('preflight_denied')).toBe(before.denied + 1)
  // OPTIONS that is not a preflight is still a wrong method.
  const bare = await request(`${app.url}/api/sample5.js?id=7`, { method: 'OPTIONS' })
  expect(bare.status).toBe(405)
  expect(bare.headers.allow).toBe('GET, HEAD, OPTIONS')
  expect(await accessLogRows()).toBe(rows + 1) // the 405 only
})

test('"*": any origin gets "*" and no Vary', async () => {
  const res = await request(`${app.url}/api/sample3.js?id=7`, { headers: { Origin: EVIL } })
  expect(res.status).toBe(200)
  expect(corsHeaders(res.headers)).toEqual({ 'access-control-allow-origin': '*' })
  const pre = await request(`${app.url}/api/sample3.js?id=7`, {
    method: 'OPTIONS',
    headers: { Origin: EVIL, 'Access-Control-Request-Method': 'GET' }
  })
  expect(pre.status).toBe(204)
  expect(pre.headers['access-control-allow-origin']).toBe('*')
})

test('an endpoint without cors is unchanged: no CORS header, OPTIONS is 405', async () => {
  const res = await request(`${app.url}/api/sample2.js?id=7`, { headers: { Origin: SHOP } })
  expect(res.status).toBe(200)
  expect(corsHeaders(res.headers)).toEqual({})
  const pre = await request(`${app.url}/api/sample2.js?id=7`, {
    method: 'OPTIONS',
    headers: { Origin: SHOP, 'Access-Control-Request-Method': 'GET' }
  })
  expect(pre.status).toBe(405)
  expect(pre.headers.allow).toBe('GET, HEAD')
  expect(corsHeaders(pre.headers)).toEqual({})
  expect((await app.metrics.metrics())).not.toMatch(/beacon_cors_requests_total\{endpoint="sample2"/)
})
