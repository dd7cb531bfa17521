'use strict'

// Events over real sockets against the real HBase: a batch POSTed the way sendBeacon sends it,
// or one event by the GIF form, becomes one entry per event in the endpoint's event sinks (HBase
// rows and file lines, the access-log pipeline's counts) and is answered at once; everything
// else gets a clear 4xx from the error table, writes nothing and reflects nothing.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { startBeacon } = require('../support/beacon')
const { GIF } = require('../../api/public/events')

const SHOP = 'https://shop.example'
const EVENTS = { names: ['exposure', 'click'], sinks: ['hbase', 'file'] }
let app

beforeAll(async () => {
  app = await startBeacon({
    overrides: {
      endpoints: {
        sample5: { cors: { origins: [SHOP] }, events: EVENTS },
        sample3: { events: { names: ['exposure'], sinks: ['hbase'], maxEvents: 2, maxBodyBytes: 256, gif: false } }
      }
    }
  })
})

afterAll(async () => {
  if (app) await app.close()
})

/**
 * One request with an optional body; `chunks` sends it chunked (no Content-Length).
 * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }>}
 */
function send (urlPath, { method = 'POST', headers = {}, body, chunks } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(app.url + urlPath, { method, headers, agent: false }, (res) => {
      const parts = []
      res.on('data', (c) => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
    })
    req.on('error', reject)
    if (chunks) for (const c of chunks) req.write(c)
    req.end(body)
  })
}

const beacon = (body, headers = {}) =>
  send('/api/sample5/events', {
    headers: { 'Content-Type': 'text/plain;charset=UTF-8', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })

async function eventRows () {
  await app.sinks.get('hbase').flush()
  const rows = []
  for await (const row of app.client.scan(app.accessLogTable, {})) {
    const entry = JSON.parse(row.cells[0].value.toString())
    if (entry.event) rows.push({ key: row.row.toString(), entry })
  }
  return rows
}

async function fileEvents () {
  await app.sinks.get('file').flush()
  const dir = path.dirname(app.settings.logSinks.file.path)
  return fs
    .readdirSync(dir)
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l))
    .filter((e) => e.event)
}

async function metric (line) {
  const found = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

test('a sendBeacon batch: 204 at once, one row and one file line per event, counted', async () => {
  // A page's own events: a browser's, so people's (logging/bot-agent.js).
  const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
  const accepted = app.sinks.get('hbase').stats().accepted
  const res = await beacon(
    [
      { id: '42', event: 'exposure', variant: 'B' },
      { id: 'x_1-y', event: 'click' }
    ],
    { Origin: SHOP, 'User-Agent': BROWSER, Referer: `${SHOP}/cart` }
  )
  expect(res.status).toBe(204)
  expect(res.body.length).toBe(0)
  expect(res.headers['access-control-allow-origin']).toBe(SHOP)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(app.sinks.get('hbase').stats().accepted).toBe(accepted + 2)

  const rows = await eventRows()
  expect(rows.map((r) => r.entry).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
    {
      ts: expect.any(Number),
      endpoint: 'sample5',
      id: '42',
      bot: false,
      event: 'exposure',
      variant: 'B',
      ip: '127.0.0.1',
      ua: BROWSER,
      ref: `${SHOP}/cart`
    },
    {
      ts: expect.any(Number),
      endpoint: 'sample5',
      id: 'x_1-y',
      bot: false,
      event: 'click',
      variant: null,
      ip: '127.0.0.1',
      ua: BROWSER,
      ref: `${SHOP}/cart`
    }
  ])
  // The access-log row layout: salt bucket, 13-digit time, writer-unique suffix.
  for (const { key, entry } of rows) {
    expect(key).toMatch(new RegExp(`^[0-9a-f]{2}${String(entry.ts).padStart(13, '0')}t${process.pid}-\\d+$`))
  }
  expect((await fileEvents()).map((e) => e.id).sort()).toEqual(['42', 'x_1-y'])
  expect(await metric('beacon_events_total{endpoint="sample5",event="exposure"}')).toBe(1)
  expect(await metric('beacon_events_total{endpoint="sample5",event="click"}')).toBe(1)
  expect(await metric('beacon_event_requests_total{endpoint="sample5",outcome="accepted"}')).toBe(1)
})

test('application/json and a single object; no Origin (a server, curl) is accepted', async () => {
  const before = (await eventRows()).length
  const res = await send('/api/sample5/events', {
    headers: { 'Content-Type': 'application/json' },
    body: '{"id":"7","event":"exposure","variant":"A"}'
  })
  expect(res.status).toBe(204)
  expect(res.headers['access-control-allow-origin']).toBeUndefined()
  expect((await eventRows()).length).toBe(before + 1)
})

test('the GIF form: a 1x1 GIF, one event; not served when gif is false', async () => {
  const before = (await eventRows()).length
  const res = await send('/api/sample5/events.gif?id=9&event=click&variant=C&_=1700000000000', { method: 'GET' })
  expect(res.status).toBe(200)
  expect(res.headers['content-type']).toBe('image/gif')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.body.equals(GIF)).toBe(true)
  expect(res.body.subarray(0, 6).toString()).toBe('GIF89a')
  expect([res.body.readUInt16LE(6), res.body.readUInt16LE(8)]).toEqual([1, 1])
  const rows = await eventRows()
  expect(rows.length).toBe(before + 1)
  expect(rows.map((r) => r.entry)).toContainEqual(expect.objectContaining({ id: '9', event: 'click', variant: 'C' }))
  expect((await send('/api/sample3/events.gif?id=9&event=exposure', { method: 'GET' })).status).toBe(404)
})

test('a preflight for a JSON fetch(): POST and Content-Type allowed', async () => {
  const res = await send('/api/sample5/events', {
    method: 'OPTIONS',
    headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' }
  })
  expect(res.status).toBe(204)
  expect(res.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'Content-Type',
    'access-control-max-age': '600'
  })
})

test.each([
  ['not JSON', () => beacon('id=7&event=exposure'), 400, 'BAD_BODY'],
  ['an undeclared event', () => beacon({ id: '7', event: 'purchase<script>' }), 400, 'BAD_EVENT'],
  ['a wrong type', () => beacon({ id: 7, event: 'exposure' }), 400, 'BAD_EVENT'],
  ['an extra key', () => beacon({ id: '7', event: 'exposure', secret: 'reflect-me' }), 400, 'BAD_EVENT'],
  ['one bad event of a batch', () => beacon([{ id: '7', event: 'exposure' }, { id: '../8', event: 'exposure' }]), 400, 'BAD_EVENT'],
  [
    'a batch over maxEvents',
    () =>
      send('/api/sample3/events', {
        headers: { 'Content-Type': 'text/plain' },
        body: JSON.stringify(Array(3).fill({ id: '1', event: 'exposure' }))
      }),
    400,
    'BAD_EVENT'
  ],
  ['a form post', () => beacon('id=7', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ['no Content-Type', () => send('/api/sample5/events', { body: '{"id":"7","event":"exposure"}' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  [
    'a Content-Length over maxBodyBytes',
    () => send('/api/sample3/events', { headers: { 'Content-Type': 'text/plain' }, body: 'x'.repeat(257) }),
    413,
    'BODY_TOO_LARGE'
  ],
  [
    'a chunked body over maxBodyBytes',
    () => send('/api/sample3/events', { headers: { 'Content-Type': 'text/plain' }, chunks: Array(40).fill('reflect-me') }),
    413,
    'BODY_TOO_LARGE'
  ],
  ['another origin', () => beacon({ id: '7', event: 'exposure' }, { Origin: 'https://evil.example' }), 403, 'ORIGIN_NOT_ALLOWED'],
  [
    'a preflight from another origin',
    () =>
      send('/api/sample5/events', {
        method: 'OPTIONS',
        headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' }
      }),
    403,
    'ORIGIN_NOT_ALLOWED'
  ],
  ['GET on the POST path', () => send('/api/sample5/events?id=7&event=exposure', { method: 'GET' }), 405, 'METHOD_NOT_ALLOWED'],
  ['POST on the GIF path', () => send('/api/sample5/events.gif?id=7&event=exposure', { body: 'x' }), 405, 'METHOD_NOT_ALLOWED'],
  ['a bad GIF query', () => send('/api/sample5/events.gif?id=%3Cscript%3E&event=exposure', { method: 'GET' }), 400, 'BAD_EVENT'],
  [
    'an endpoint without events',
    () => send('/api/sample2/events', { headers: { 'Content-Type': 'text/plain' }, body: '{"id":"7","event":"exposure"}' }),
    404,
    'NOT_FOUND'
  ]
])('%s: a 4xx from the error table, nothing written, nothing reflected', async (name, act, status, code) => {
  const accepted = app.sinks.get('hbase').stats().accepted
  const res = await act()
  expect(res.status).toBe(status)
  const text = res.body.toString()
  expect(JSON.parse(text).error.code).toBe(code)
  expect(text).not.toMatch(/reflect-me|script|evil|purchase|\.\.\//)
  expect(res.headers['access-control-allow-origin']).toBeUndefined()
  if (status === 405) expect(res.headers.allow).toMatch(name.startsWith('GET') ? /^POST, OPTIONS$/ : /^GET$/)
  if (status === 413) expect(res.headers.connection).toBe('close')
  expect(app.sinks.get('hbase').stats().accepted).toBe(accepted)
  if (code !== 'NOT_FOUND') {
    expect(
      await metric(
        `beacon_event_requests_total{endpoint="${name.includes('maxBodyBytes') || name.includes('maxEvents')
          ? 'sample3'
          : 'sample5'}",outcome="${code}"}`
      )
    ).toBeGreaterThan(0)
  }
})

test('a disabled endpoint refuses its events (404 ENDPOINT_DISABLED)', async () => {
  app.beacon.applyChange({ cmd: 'endpoint', name: 'sample3', enabled: false })
  try {
    const res = await send('/api/sample3/events', { headers: { 'Content-Type': 'text/plain' }, body: '{"id":"7","event":"exposure"}' })
    expect(res.status).toBe(404)
    expect(JSON.parse(res.body.toString()).error.code).toBe('ENDPOINT_DISABLED')
  } finally {
    app.beacon.applyChange({ cmd: 'endpoint', name: 'sample3', enabled: true })
  }
})

test('durable mode: each event goes through the write-ahead log, like a request', async () => {
  const durable = await startBeacon({
    env: { BEACON_ACCESS_LOG_DURABLE: '1' },
    overrides: { endpoints: { sample3: { events: { names: ['exposure'], sinks: ['hbase'] } } } }
  })
  try {
    const sink = durable.sinks.get('hbase')
    const before = sink.stats().walAppended
    const res = await new Promise((resolve, reject) => {
      const req = http.request(`${durable.url}/api/sample3/events`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        agent: false
      }, (r) => {
        // Read the sink's count the moment the answer arrives.
        resolve({ status: r.statusCode, walAppended: sink.stats().walAppended })
        r.resume()
      })
      req.on('error', reject)
      req.end(JSON.stringify([{ id: '1', event: 'exposure' }, { id: '2', event: 'exposure' }, { id: '3', event: 'exposure' }]))
    })
    expect(res).toEqual({ status: 204, walAppended: before + 3 })
    await sink.flush()
    expect(sink.stats().written).toBeGreaterThanOrEqual(3)
  } finally {
    await durable.close()
  }
})
