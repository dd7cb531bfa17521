'use strict'

// The five seed endpoints end to end over real sockets against the real HBase.

const fs = require('node:fs')
const path = require('node:path')
const { startBeacon, request } = require('../support/beacon')
const { sampleConfig } = require('../../tools/dev-hbase')
const { serializeConfig } = require('../../lib/toggles/script-json')
const { countLines } = require('../../logging/count-lines')

const FIXED = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'config', 'fixed', 'sample1.json'), 'utf8'))
const CB = 'EXAMPLE.process'
const jsonp = (payload) => `/**/ typeof ${CB} === 'function' && ${CB}(${payload});`
const payload = (id, isDefault, config) => `{"id":"${id}","default":${isDefault},"config":${serializeConfig(config)}}`

let app

beforeAll(async () => {
  app = await startBeacon()
})

afterAll(async () => {
  if (app) await app.close()
})

describe.each([
  ['sample1', 'public, max-age=60'],
  ['sample2', 'public, max-age=30'],
  ['sample3', 'public, max-age=30'],
  ['sample4', 'no-cache'],
  ['sample5', 'no-cache']
])('%s.js', (name, cacheControl) => {
  const known = name === 'sample1' ? FIXED : sampleConfig(7)

  test('known id: 200, script headers, exact body, ETag revalidation', async () => {
    const res = await request(`${app.url}/api/${name}.js?id=7&callback=${CB}`)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['cache-control']).toBe(cacheControl)
    expect(res.headers['x-powered-by']).toBeUndefined()
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(res.body).toBe(jsonp(payload('7', false, known)))

    const again = await request(`${app.url}/api/${name}.js?id=7&callback=${CB}`, { headers: { 'If-None-Match': res.headers.etag } })
    expect(again.status).toBe(304)
    expect(again.body).toBe('')
  })

  test('unknown id: 200 with the endpoint default, stated in the body', async () => {
    const res = await request(`${app.url}/api/${name}.js?id=no-such-id-42&callback=${CB}`)
    expect(res.status).toBe(200)
    expect(res.body).toBe(name === 'sample1'
      ? jsonp(payload('no-such-id-42', false, FIXED)) // fixed config: every id gets the same value
      : jsonp(payload('no-such-id-42', true, { features: {} })))
  })

  test('no callback: plain JSON', async () => {
    const res = await request(`${app.url}/api/${name}.js?id=7`)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(res.body)).toEqual({ id: '7', default: false, config: known })
  })

  test('bad input: 400 with a script-safe body that echoes nothing', async () => {
    const evil = encodeURIComponent('alert(document.cookie)//')
    const res = await request(`${app.url}/api/${name}.js?id=7&callback=${evil}`)
    expect(res.status).toBe(400)
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.body).toMatch(/^\/\*\*\/ typeof console === 'object' && console\.error\("beacon: BAD_CALLBACK: [^"<]*"\);$/)
    expect(res.body).not.toContain('alert')
    const badId = await request(`${app.url}/api/${name}.js?id=%3Cscript%3E&callback=${CB}`)
    expect(badId.status).toBe(400)
    expect(badId.body).not.toMatch(/script>/i)
    const noId = await request(`${app.url}/api/${name}.js`)
    expect(noId.status).toBe(400)
    expect(JSON.parse(noId.body).error.code).toBe('MISSING_ID')
    const post = await request(`${app.url}/api/${name}.js?id=7`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe('GET, HEAD')
  })
})

test('anything else on the public port is express\'s JSON 404, never echoing the path', async () => {
  const res = await request(`${app.url}/api/nope<script>.js?id=1`)
  expect(res.status).toBe(404)
  expect(res.body).not.toContain('script')
  expect(JSON.parse(res.body).error.code).toBe('NOT_FOUND')
})

test('HEAD answers headers only', async () => {
  const res = await request(`${app.url}/api/sample3.js?id=7&callback=${CB}`, { method: 'HEAD' })
  expect(res.status).toBe(200)
  expect(res.body).toBe('')
  expect(Number(res.headers['content-length'])).toBeGreaterThan(0)
})

test('sample4 writes one file log line per request, parsed back', async () => {
  const n = 50
  for (let i = 0; i < n; i++) {
    const res = await request(`${app.url}/api/sample4.js?id=${i + 1}&callback=${CB}`, {
      headers: { 'User-Agent': 'jest-ua', Referer: 'http://page.test/x' }
    })
    expect(res.status).toBe(200)
  }
  await app.sinks.get('file').flush()
  const logDir = path.dirname(app.settings.logSinks.file.path)
  const lines = fs
    .readdirSync(logDir)
    .flatMap((f) => fs.readFileSync(path.join(logDir, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l))
  const mine = lines.filter((l) => l.endpoint === 'sample4' && l.ua === 'jest-ua')
  expect(mine).toHaveLength(n)
  expect(countLines(logDir)).toBe(lines.length)
  expect(mine[0]).toMatchObject({ endpoint: 'sample4', id: '1', status: 200, ua: 'jest-ua', ref: 'http://page.test/x' })
  expect(typeof mine[0].ts).toBe('number')
  expect(mine[0].ms).toBeGreaterThanOrEqual(0)
})

test('sample5 writes one HBase row per request, counted and read back', async () => {
  const before = await app.client.count(app.accessLogTable)
  const n = 120
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => request(`${app.url}/api/sample5.js?id=${(i % 30) + 1}&callback=${CB}`))
  )
  expect(results.every((r) => r.status === 200)).toBe(true)
  await app.sinks.get('hbase').flush()
  expect(await app.client.count(app.accessLogTable)).toBe(before + n)
  let sample
  for await (const row of app.client.scan(app.accessLogTable, { limit: 1 })) sample = JSON.parse(row.cells[0].value.toString())
  expect(sample).toMatchObject({ endpoint: 'sample5', status: 200 })
})

test('a callback allowlist on an endpoint: listed names and prefixes answer, others get a 400 that calls nothing', async () => {
  const strict = await startBeacon({ overrides: { endpoints: { sample3: { callbacks: [CB, 'jQuery*'] } } } })
  try {
    expect((await request(`${strict.url}/api/sample3.js?id=7&callback=${CB}`)).body).toBe(jsonp(payload('7', false, sampleConfig(7))))
    expect((await request(`${strict.url}/api/sample3.js?id=7&callback=jQuery3710_17`)).status).toBe(200)
    expect((await request(`${strict.url}/api/sample3.js?id=7`)).status).toBe(200) // plain JSON needs no callback
    for (const other of ['opener.document.forms.f.submit', 'EXAMPLE.processX', 'alert']) {
      const res = await request(`${strict.url}/api/sample3.js?id=7&callback=${other}`)
      expect(res.status).toBe(400)
      expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
      expect(res.body).toBe('/**/ typeof console === \'object\' && console.error("beacon: CALLBACK_NOT_ALLOWED: this callback name is ' +
        'not allowed for this endpoint");')
    }
    // Other endpoints of the same process keep accepting any valid callback.
    expect((await request(`${strict.url}/api/sample2.js?id=7&callback=anything.goes`)).status).toBe(200)
  } finally {
    await strict.close()
  }
})
