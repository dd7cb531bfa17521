'use strict'

// The CORS policy of an endpoint: exact origins, "*" only as written, never credentials; the
// headers of an answer and of a preflight.

const { createCorsPolicy, isPreflight } = require('../../api/public/cors')

const ALLOW = { methods: 'GET, HEAD', headers: 'If-None-Match' }
const SHOP = 'https://shop.example'

describe('a list of origins', () => {
  const cors = createCorsPolicy({ origins: [SHOP, 'http://127.0.0.1:8080'], maxAgeSeconds: 600 }, ALLOW)

  test('an allowed origin gets itself back and Vary: Origin', () => {
    const headers = {}
    expect(cors.decorate(headers, SHOP)).toBe('allowed')
    expect(headers).toEqual({ 'Access-Control-Allow-Origin': SHOP, Vary: 'Origin' })
  })

  test('another origin gets no CORS header, only Vary (a cache must not mix them up)', () => {
    for (const origin of [
      'https://evil.example',
      'https://shop.example.evil.example',
      'http://shop.example',
      'https://SHOP.example',
      SHOP + '/',
      SHOP + ':443',
      'null',
      '',
      SHOP + ', https://evil.example'
    ]) {
      const headers = {}
      expect({ origin, outcome: cors.decorate(headers, origin) }).toEqual({ origin, outcome: 'denied' })
      expect(headers).toEqual({ Vary: 'Origin' })
    }
  })

  test('a request without Origin (a script tag, curl) is not a CORS request', () => {
    const headers = {}
    expect(cors.decorate(headers, undefined)).toBeNull()
    expect(headers).toEqual({ Vary: 'Origin' })
  })

  test('a preflight from an allowed origin: methods, headers, max-age; never credentials', () => {
    expect(cors.preflight(SHOP)).toEqual({
      'Access-Control-Allow-Origin': SHOP,
      'Access-Control-Allow-Methods': 'GET, HEAD',
      'Access-Control-Allow-Headers': 'If-None-Match',
      'Access-Control-Max-Age': '600',
      'Cache-Control': 'no-store',
      Vary: 'Origin'
    })
    expect(cors.preflight('https://evil.example')).toBeNull()
    expect(cors.allows(SHOP)).toBe(true)
    expect(cors.allows(undefined)).toBe(false)
  })
})

describe('"*"', () => {
  const cors = createCorsPolicy({ origins: ['*'], maxAgeSeconds: 60 }, { methods: 'POST', headers: 'Content-Type' })

  test('any origin, answered "*" with no Vary (the answer is the same for all)', () => {
    for (const origin of [SHOP, 'null', undefined]) {
      const headers = {}
      expect(cors.decorate(headers, origin)).toBe(origin === undefined ? null : 'allowed')
      expect(headers).toEqual({ 'Access-Control-Allow-Origin': '*' })
    }
    expect(cors.preflight('https://any.example')).toEqual({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '60',
      'Cache-Control': 'no-store'
    })
  })
})

test('exposed headers: named to an allowed origin (or "*"), never to another', () => {
  const allow = { ...ALLOW, expose: 'ETag, Retry-After' }
  const listed = createCorsPolicy({ origins: [SHOP], maxAgeSeconds: 60 }, allow)
  const headers = {}
  expect(listed.decorate(headers, SHOP)).toBe('allowed')
  expect(headers).toEqual({ 'Access-Control-Allow-Origin': SHOP, 'Access-Control-Expose-Headers': 'ETag, Retry-After', Vary: 'Origin' })
  const denied = {}
  expect(listed.decorate(denied, 'https://evil.example')).toBe('denied')
  expect(denied).toEqual({ Vary: 'Origin' })
  const any = {}
  createCorsPolicy({ origins: ['*'], maxAgeSeconds: 60 }, allow).decorate(any, undefined)
  expect(any).toEqual({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'ETag, Retry-After' })
})

test('no cors declared: no policy', () => {
  expect(createCorsPolicy(undefined, ALLOW)).toBeNull()
})

test('a preflight is OPTIONS with an Origin and Access-Control-Request-Method', () => {
  const req = (method, headers) => /** @type {any} */ ({ method, headers })
  expect(isPreflight(req('OPTIONS', { origin: SHOP, 'access-control-request-method': 'GET' }))).toBe(true)
  expect(isPreflight(req('OPTIONS', { origin: SHOP }))).toBe(false)
  expect(isPreflight(req('OPTIONS', { 'access-control-request-method': 'GET' }))).toBe(false)
  expect(isPreflight(req('GET', { origin: SHOP, 'access-control-request-method': 'GET' }))).toBe(false)
})
