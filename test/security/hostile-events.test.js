'use strict'

// The hostile-input corpus for the browser-facing paths (events, the GIF form, CORS and
// preflights), against a real beacon and HBase over real sockets: bodies of every wrong type,
// shape and size, wrong media types, bad origins and preflights, malformed uploads over raw
// sockets. Every answer is a 4xx (2xx/304 when valid), never a 5xx or a dropped connection;
// nothing of the input comes back, in the body or as Access-Control-Allow-Origin; every valid
// event is written, once; the heap stays flat over repeated passes.

const http = require('node:http')
const { startBeacon, request } = require('../support/beacon')
const { prng, rawRequest, runThreePasses, settledHeapUsed, CONCURRENCY } = require('../support/hostile')
const { ERRORS } = require('../../lib/errors')

const CORPUS_SIZE = 3000
const SEED = 0xbeac0
const SHOP = 'https://shop.example'
const ALLOWED = new Set([200, 204, 304, 400, 403, 404, 405, 408, 413, 414, 415, 431])
const MARK = 'zq<reflect>' // put into hostile values: must never come back
const NAMES = { sample5: ['exposure', 'click'], sample3: ['exposure'] }
const MAX = { sample5: { events: 20, bytes: 8192 }, sample3: { events: 5, bytes: 1024 } }

const BAD_ORIGINS = [
  'https://evil.example',
  'null',
  'https://shop.example.evil.example',
  'http://shop.example',
  SHOP + '/',
  SHOP + ':443',
  'HTTPS://SHOP.EXAMPLE',
  `${SHOP}, https://evil.example`,
  'https://' + MARK,
  'x'.repeat(3000) + MARK,
  'file://',
  '*'
]
// Invalid as an id, an event name and a variant alike (strings), and wrong JSON types.
const BAD_STRINGS = ['', ' ', 'a b', '../etc', '<script>' + MARK, MARK, 'x'.repeat(65), '\u00e9', '\u2028', '7\u0000', 'a.b', 'a/b']
const BAD_JSON = [42, -1, 1e308, true, false, [], {}, ['7'], { id: '7' }, '\ud800', ...BAD_STRINGS]
const WRONG_TYPES = [
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/xml',
  '',
  'text/plain' + MARK,
  'application/jsonp'
]
const VALID_TYPES = ['text/plain;charset=UTF-8', 'text/plain', 'application/json', 'application/json; charset=utf-8']
const PATHS = [
  '/api/sample5.js?id=7', '/api/sample5/events', '/api/sample3/events', '/api/sample1.js?id=7', '/api/sample3.js?id=7',
  '/api/sample1/events', '/api/sample5/events.gif'
]
const CUSTOM_PATHS = [
  '/api/sample5/events/', '/api/sample5/events.gif/x', '/api/sample5/Events', '/api/sample5/events.js', '/api/sample5//events',
  '/api/sample5/events%00', '/api/%2e%2e/sample5/events'
]

function generateCase (rand) {
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const name = rand() < 0.7 ? 'sample5' : 'sample3'
  const event = () => {
    const e = { id: String(Math.floor(rand() * 1000)), event: pick(NAMES[name]) }
    if (rand() < 0.5) e.variant = pick(['A', 'B', 'c-1', 'x_Y'])
    return e
  }
  const batch = (n) => Array.from({ length: n }, event)
  const origin = () => (rand() < 0.5 ? {} : { Origin: SHOP })
  const post = (body, headers, extra) => ({
    kind: 'http',
    method: 'POST',
    path: `/api/${name}/events`,
    headers: { 'Content-Type': pick(VALID_TYPES), ...origin(), ...headers },
    body,
    ...extra
  })
  const r = rand()
  if (r < 0.15) {
    const events = batch(1 + Math.floor(rand() * MAX[name].events))
    return post(
      JSON.stringify(rand() < 0.2 && events.length === 1 ? events[0] : events),
      {},
      { valid: true, events: events.length, needles: [] }
    )
  }
  if (r < 0.45) {
    // A body that breaks a rule: a wrong type or value in a field, a wrong shape, not JSON.
    const e = event()
    const mode = rand()
    let body
    if (mode < 0.4) {
      // One field of the wrong type or value (null is a valid variant), or a key too many.
      const field = pick(['id', 'event', 'variant', 'extra'])
      e[field] = field === 'variant' ? pick(BAD_JSON) : pick([null, ...BAD_JSON])
      body = JSON.stringify(rand() < 0.5 ? e : [...batch(Math.floor(rand() * 3)), e])
    } else if (mode < 0.45) {
      body = `{"id":"7","event":"${NAMES[name][0]}","__proto__":{"variant":"${MARK}"}}`
    } else if (mode < 0.55) {
      body = JSON.stringify(pick([null, 7, 'exposure', true, [], [[event()]], { events: [event()] }, batch(MAX[name].events + 1)]))
    } else if (mode < 0.65) {
      const depth = Math.floor((MAX[name].bytes - 2) / 2)
      body = '['.repeat(depth) + ']'.repeat(depth)
    } else if (mode < 0.8) {
      body = pick([
        '',
        ' ',
        'id=7&event=exposure',
        '<event id="7"/>',
        '{"id":"7","event":"exposure"',
        '{"id":"7",,}',
        "{'id':'7'}",
        'NaN',
        '\ufeff\ufeff{}',
        MARK
      ])
    } else {
      // Random bytes after a 0xff, which is never UTF-8.
      body = Buffer.concat([
        Buffer.from([0xff]),
        Buffer.from(Array.from({ length: Math.floor(rand() * 300) }, () => Math.floor(rand() * 256)))
      ])
    }
    return post(body, {}, { valid: false, needles: [MARK] })
  }
  if (r < 0.52) {
    // Over the size cap: refused from Content-Length, before reading.
    const size = MAX[name].bytes + 1 + Math.floor(rand() * 2 * MAX[name].bytes)
    return post(MARK + 'x'.repeat(size), {}, { valid: false, needles: [MARK] })
  }
  if (r < 0.58) return post(JSON.stringify(batch(1)), { 'Content-Type': pick(WRONG_TYPES) }, { valid: false, needles: [MARK] })
  if (r < 0.66) {
    // A valid batch from an origin sample5 does not list: refused, counted.
    const body = JSON.stringify([{ id: '7', event: 'exposure' }])
    return {
      kind: 'http',
      method: 'POST',
      path: '/api/sample5/events',
      headers: { 'Content-Type': 'text/plain', Origin: pick(BAD_ORIGINS) },
      body,
      valid: false,
      needles: [MARK, 'evil']
    }
  }
  if (r < 0.74) {
    // The GIF form: valid, or one of id, event, variant bad, or a parameter twice.
    const params = { id: String(Math.floor(rand() * 1000)), event: 'click', variant: pick(['A', 'B']) }
    const mode = rand()
    const valid = mode < 0.4
    if (!valid) {
      if (mode < 0.85) params[pick(['id', 'event', 'variant'])] = pick(BAD_STRINGS)
      else params.id += '&id=8'
    }
    const query = Object.entries(params).map(([k, v]) => `${k}=${k === 'id' && v.includes('&id=') ? v : encodeURIComponent(v)}`).join('&')
    return {
      kind: 'http',
      method: 'GET',
      path: '/api/sample5/events.gif?' + query + (rand() < 0.3 ? '&_=1700000000000' : ''),
      headers: origin(),
      valid,
      events: valid ? 1 : 0,
      needles: [MARK]
    }
  }
  if (r < 0.82) {
    // Preflights and plain OPTIONS anywhere, with good and bad origins and asks.
    const headers = { Origin: rand() < 0.5 ? SHOP : pick(BAD_ORIGINS) }
    if (rand() < 0.8) headers['Access-Control-Request-Method'] = pick(['GET', 'POST', 'PUT', MARK])
    if (rand() < 0.5) {
      headers['Access-Control-Request-Headers'] = pick([
        'content-type',
        'if-none-match',
        'x-' + MARK.replace(/[<>]/g, ''),
        'authorization, cookie'
      ])
    }
    return { kind: 'http', method: 'OPTIONS', path: pick(PATHS), headers, valid: false, maybeValid: true, needles: [MARK, 'evil'] }
  }
  if (r < 0.9) {
    // The JSON answer with an Origin: the answer is the same; CORS headers only for SHOP.
    return {
      kind: 'http',
      method: rand() < 0.1 ? 'HEAD' : 'GET',
      path: pick(['/api/sample5.js?id=7', '/api/sample3.js?id=8', '/api/sample1.js?id=7&callback=cb']),
      headers: { Origin: rand() < 0.3 ? SHOP : pick(BAD_ORIGINS) },
      valid: true,
      needles: [MARK]
    }
  }
  if (r < 0.95) {
    // Methods and paths around the event routes; only a GET of a valid GIF query is accepted.
    const method = pick(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'POST'])
    const path = pick([...CUSTOM_PATHS, '/api/sample5/events', '/api/sample5/events.gif?id=1&event=click', '/api/sample1/events'])
    const valid = method === 'GET' && path.startsWith('/api/sample5/events.gif?')
    const body = method === 'GET' || method === 'HEAD' ? undefined : MARK
    return { kind: 'http', method, path, headers: { 'Content-Type': 'text/plain' }, body, valid, events: valid ? 1 : 0, needles: [MARK] }
  }
  return pick(RAW)(name, rand)
}

// Uploads node's http client would not send: chunked over the cap or malformed, lengths that lie.
const RAW = [
  (name) => ({
    kind: 'raw',
    bytes: rawRequest(
      'POST',
      `/api/${name}/events`,
      { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' },
      '\r\n' + `2000\r\n${('x' + MARK).repeat(700).slice(0, 0x2000)}\r\n`.repeat(3) + '0\r\n'
    ),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: rawRequest(
      'POST',
      `/api/${name}/events`,
      { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' },
      `\r\nzz\r\n${MARK}\r\n0\r\n`
    ),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: rawRequest('POST', `/api/${name}/events`, { 'Content-Type': 'text/plain', 'Content-Length': '99999999999' }, '\r\n' + MARK),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: rawRequest('POST', `/api/${name}/events`, { 'Content-Type': 'text/plain', 'Content-Length': '-1' }),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: rawRequest(
      'POST',
      `/api/${name}/events`,
      { 'Content-Type': 'text/plain', 'Content-Length': '5', 'Transfer-Encoding': 'chunked' },
      '\r\n0\r\n'
    ),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: rawRequest(
      'POST',
      `/api/${name}/events`,
      { 'Content-Type': 'text/plain', 'Content-Length': '3' },
      '\r\n' + `{"id":"7","event":"exposure","x":"${MARK}"}`
    ),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: Buffer.from(
      `POST /api/${name}/events HTTP/1.1\r\nHost: x\r\nOrigin: ${SHOP}\r\n\u0000${MARK}\r\nContent-Type: text/plain\r\nConnection: ` +
        'close\r\n\r\n',
      'latin1'
    ),
    valid: false,
    needles: [MARK]
  }),
  (name) => ({
    kind: 'raw',
    bytes: Buffer.from(
      `POST /api/${name}/events HTTP/1.1\r\nHost: x\r\nOrigin: ${SHOP}\rX: ${MARK}\r\nContent-Type: text/plain\r\nContent-Length: ` +
        '2\r\nConnection: close\r\n\r\n{}',
      'latin1'
    ),
    valid: false,
    needles: [MARK]
  }),
  // Non-ASCII bytes in Origin: no listed origin for sample5 (403); sample3 allows "*" (200).
  (name) => ({
    kind: 'raw',
    bytes: rawRequest('GET', `/api/${name}/events.gif?id=1&event=exposure`, { Origin: 'https://\u00e9vil.example' }),
    valid: name === 'sample3',
    events: name === 'sample3' ? 1 : 0,
    needles: ['vil.example']
  })
]

function buildCorpus () {
  const rand = prng(SEED)
  return Array.from({ length: CORPUS_SIZE }, () => generateCase(rand))
}

const CODES = new Set(Object.keys(ERRORS))

/** @returns {string|null} why the answer to `c` is wrong, or null */
function check (c, res) {
  if (res.error) return `no response (${res.error})`
  if (!ALLOWED.has(res.status)) return `status ${res.status}`
  const ok = res.status < 300 || res.status === 304
  if (c.valid && !ok) return `valid request got ${res.status}`
  if (!c.valid && !c.maybeValid && ok) return `invalid request got ${res.status}`
  if (res.setCookie) return 'response sets a cookie'
  if (res.acao !== undefined && res.acao !== SHOP && res.acao !== '*') {
    return `Access-Control-Allow-Origin ${JSON.stringify(res.acao.slice(0, 40))}`
  }
  for (const n of c.needles) if (res.body.includes(n)) return `body reflects ${JSON.stringify(n.slice(0, 40))}`
  if (res.status >= 400 && res.body) {
    let code
    try { code = JSON.parse(res.body).error.code } catch {}
    if (!CODES.has(code)) return `error body is not from the error table: ${JSON.stringify(res.body.slice(0, 80))}`
  }
  return null
}

let app
let agent

beforeAll(async () => {
  app = await startBeacon({
    overrides: {
      // Short request timeouts: a body that never comes in full is cut within the test's time.
      http: { requestTimeoutMs: 3000, headersTimeoutMs: 3000 },
      endpoints: {
        sample5: { cors: { origins: [SHOP] }, events: { names: NAMES.sample5, sinks: ['hbase'] } },
        sample3: {
          cors: { origins: ['*'] },
          events: { names: NAMES.sample3, sinks: ['hbase'], maxEvents: MAX.sample3.events, maxBodyBytes: MAX.sample3.bytes }
        }
      }
    }
  })
  agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
})

afterAll(async () => {
  if (agent) agent.destroy()
  if (app) await app.close()
})

async function acceptedEvents () {
  const text = await app.metrics.metrics()
  return text.split('\n').filter((l) => l.startsWith('beacon_events_total{')).reduce((n, l) => n + Number(l.split(' ').pop()), 0)
}

async function eventRows () {
  await app.sinks.get('hbase').flush()
  let n = 0
  for await (const row of app.client.scan(app.accessLogTable, {})) if (row.cells[0].value.includes('"event":')) n++
  return n
}

test('a hostile corpus on the event and CORS paths: only 4xx (2xx when valid), nothing reflected, every valid event written once, flat ' +
  'heap', async () => {
  const started = Date.now()
  const corpus = buildCorpus()
  const expectedEvents = corpus.reduce((n, c) => n + (c.valid && c.events ? c.events : 0), 0)
  expect(corpus.filter((c) => c.valid).length).toBeGreaterThan(300)
  expect(expectedEvents).toBeGreaterThan(1000)
  expect(corpus.filter((c) => c.kind === 'raw').length).toBeGreaterThan(50)

  // The heap is read with the sink flushed: entries waiting for their batch are not a leak.
  let perPass
  const { passes: [warm, second, third], growthMb } = await runThreePasses(app, corpus, agent, check, {
    afterWarmUp: async () => { perPass = await acceptedEvents() },
    settle: () => app.sinks.get('hbase').flush()
  })
  expect(warm.failures).toEqual([])
  expect(second.failures).toEqual([])
  expect(third.failures).toEqual([])
  expect(second.counts).toEqual(warm.counts)
  expect(third.counts).toEqual(warm.counts)
  // The first pass accepted exactly the events of the valid cases.
  expect(perPass).toBe(expectedEvents)
  // 6,000 more requests retaining even 2.5 KB each would be 15 MB; the noise after a full GC is
  // a few MB (see hostile-input.test.js).
  expect(growthMb).toBeLessThan(15)

  // Lossless: every accepted event is one row, and each pass accepted the same number.
  expect(await acceptedEvents()).toBe(3 * perPass)
  expect(await eventRows()).toBe(3 * perPass)
  const stats = app.sinks.get('hbase').stats()
  expect(stats.accepted).toBe(stats.written)

  const after = await request(`${app.url}/api/sample5.js?id=7`, { headers: { Origin: SHOP } })
  expect(after.status).toBe(200)
  expect(after.headers['access-control-allow-origin']).toBe(SHOP)
  const byStatus = Object.entries(warm.counts).sort().map(([s, n]) => `${s}:${n}`).join(' ')
  console.log(`hostile-events: ${CORPUS_SIZE} requests/pass x3, by status ${byStatus}; ${perPass} events/pass; heap growth ` +
    `${growthMb.toFixed(1)} MB (${settledHeapUsed.afterGc ? 'after gc' : 'no gc'}); ${((Date.now() - started) / 1000).toFixed(1)} s`)
})
