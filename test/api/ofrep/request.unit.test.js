'use strict'

// What a client sends to the OFREP paths: the body ({"context":{"targetingKey":"<id>"}}) and
// the single-flag path's key. Every refusal is an entry of the one table, carrying no input.

const fc = require('fast-check')
const { parseEvaluationRequest, parseFlagKey, isJsonMediaType } = require('../../../api/public/ofrep/request')
const { OFREP_ERRORS } = require('../../../api/public/ofrep/errors')

const JSON_TYPE = 'application/json; charset=utf-8'
const LIMITS = { maxBodyBytes: 8192, maxIdLength: 64 }
const raw = (body) => (typeof body === 'string' || body === null || Buffer.isBuffer(body) ? body : JSON.stringify(body))
const parse = (body, contentType = JSON_TYPE, limits = LIMITS) => parseEvaluationRequest(contentType, raw(body), limits)

describe('the body', () => {
  test('the id is the targetingKey; other context attributes and body members are ignored', () => {
    const result = parse({ context: { targetingKey: 'user_42-a', email: 'x@example.com', plan: { tier: 2 } }, extra: true })
    expect(result).toEqual({ ok: true, id: 'user_42-a', context: expect.anything() })
    expect(result.ok && { ...result.context }).toEqual({ targetingKey: 'user_42-a', email: 'x@example.com', plan: { tier: 2 } })
    expect(parse(Buffer.from('\ufeff  {"context":{"targetingKey":"7"}}\n')).ok).toBe(true)
  })

  test('the context comes back frozen and without a prototype', () => {
    const result = parse('{"context":{"targetingKey":"7","__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}}')
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(Object.getPrototypeOf(result.context)).toBeNull()
    expect(Object.isFrozen(result.context)).toBe(true)
    expect(Object.keys(result.context)).toEqual(['targetingKey', '__proto__', 'constructor'])
    expect(({}).polluted).toBeUndefined()
    expect(Object.prototype.x).toBeUndefined()
  })

  test('a targetingKey inherited through "__proto__" is no targetingKey; a "__proto__" context no context', () => {
    expect(parse('{"context":{"__proto__":{"targetingKey":"7"}}}').error).toBe(OFREP_ERRORS.TARGETING_KEY_MISSING)
    expect(parse('{"__proto__":{"context":{"targetingKey":"7"}}}').error).toBe(OFREP_ERRORS.TARGETING_KEY_MISSING)
  })

  test.each([
    ['no context: what the JS providers send without one', '{}', 'TARGETING_KEY_MISSING'],
    ['an empty context: the web SDK default', '{"context":{}}', 'TARGETING_KEY_MISSING'],
    ['a null targetingKey', '{"context":{"targetingKey":null}}', 'TARGETING_KEY_MISSING'],
    ['an empty targetingKey', '{"context":{"targetingKey":""}}', 'TARGETING_KEY_MISSING'],
    ['a numeric targetingKey', '{"context":{"targetingKey":42}}', 'BAD_TARGETING_KEY'],
    ['a targetingKey array', '{"context":{"targetingKey":["7"]}}', 'BAD_TARGETING_KEY'],
    ['a targetingKey with a slash', '{"context":{"targetingKey":"../7"}}', 'BAD_TARGETING_KEY'],
    ['a targetingKey with a space', '{"context":{"targetingKey":"7 "}}', 'BAD_TARGETING_KEY'],
    ['a targetingKey with markup', '{"context":{"targetingKey":"<script>"}}', 'BAD_TARGETING_KEY'],
    ['a unicode targetingKey', '{"context":{"targetingKey":"usér"}}', 'BAD_TARGETING_KEY'],
    ['a targetingKey over maxIdLength', JSON.stringify({ context: { targetingKey: 'a'.repeat(65) } }), 'BAD_TARGETING_KEY'],
    ['a null context', '{"context":null}', 'BAD_CONTEXT'],
    ['a context array', '{"context":[{"targetingKey":"7"}]}', 'BAD_CONTEXT'],
    ['a context string', '{"context":"7"}', 'BAD_CONTEXT'],
    ['not JSON', 'context=7', 'BAD_JSON'],
    ['empty', '', 'BAD_JSON'],
    ['cut short', '{"context":{"targetingKey":"7"}', 'BAD_JSON'],
    ['trailing garbage', '{"context":{"targetingKey":"7"}} x', 'BAD_JSON'],
    ['JSON5', "{context:{targetingKey:'7'}}", 'BAD_JSON'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'BAD_JSON'],
    ['a lone surrogate in UTF-8', Buffer.from([0x7b, 0xed, 0xa0, 0x80, 0x7d]), 'BAD_JSON'],
    ['an array', '[{"context":{"targetingKey":"7"}}]', 'BAD_JSON'],
    ['null', 'null', 'BAD_JSON'],
    ['a string', '"7"', 'BAD_JSON'],
    ['a number', '7', 'BAD_JSON']
  ])('%s: %s', (name, body, errorName) => {
    const result = parse(body)
    expect(result).toEqual({ ok: false, error: OFREP_ERRORS[errorName] })
  })

  test('a unicode id at maxIdLength is still refused, an ASCII one at it accepted', () => {
    expect(parse({ context: { targetingKey: 'a'.repeat(64) } })).toMatchObject({ ok: true, id: 'a'.repeat(64) })
    expect(parse({ context: { targetingKey: 'a'.repeat(10) } }, JSON_TYPE, { maxBodyBytes: 8192, maxIdLength: 9 }).ok).toBe(false)
    // unicode elsewhere in the context is fine: only the id has rules
    expect(parse({ context: { targetingKey: '7', name: 'Zoë 🚀 \u2028' } }).ok).toBe(true)
  })

  describe('size', () => {
    test('over maxBodyBytes: 413 PARSE_ERROR, counted in bytes, not characters', () => {
      const at = JSON.stringify({ context: { targetingKey: '7', pad: 'x'.repeat(8192 - 41) } })
      expect(Buffer.byteLength(at)).toBe(8192)
      expect(parse(at).ok).toBe(true)
      const over = JSON.stringify({ context: { targetingKey: '7', pad: 'x'.repeat(8192 - 40) } })
      expect(parse(over).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
      expect(parse(Buffer.from(over)).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
      const multibyte = JSON.stringify({ context: { targetingKey: '7', pad: 'é'.repeat(4100) } })
      expect(multibyte.length).toBeLessThan(8192)
      expect(parse(multibyte).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
      expect(OFREP_ERRORS.BODY_TOO_LARGE).toMatchObject({ status: 413, errorCode: 'PARSE_ERROR' })
    })

    test('a huge body is refused without being parsed; null (the reader stopped at the cap) too', () => {
      const huge = Buffer.alloc(50 * 1024 * 1024, 0x5b) // 50 MiB of '['
      const jsonParse = jest.spyOn(JSON, 'parse')
      try {
        expect(parse(huge).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
        expect(parse(null).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
        expect(jsonParse).not.toHaveBeenCalled()
      } finally {
        jsonParse.mockRestore()
      }
    })

    test('the cap is a parameter, with a default of 8 KiB', () => {
      const body = JSON.stringify({ context: { targetingKey: '7', pad: 'x'.repeat(100) } })
      expect(parse(body, JSON_TYPE, { maxBodyBytes: 100, maxIdLength: 64 }).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
      expect(parseEvaluationRequest(JSON_TYPE, body).ok).toBe(true)
      expect(parseEvaluationRequest(JSON_TYPE, 'x'.repeat(8193)).error).toBe(OFREP_ERRORS.BODY_TOO_LARGE)
    })

    test('a deeply nested body within the cap parses or is refused, never throws', () => {
      const deep = '{"context":{"targetingKey":"7","a":' + '['.repeat(4000) + ']'.repeat(4000) + '}}'
      expect(parse(deep).ok).toBe(true)
    })
  })

  describe('media type', () => {
    test.each([
      'application/json', 'application/json; charset=utf-8', 'Application/JSON;Charset=UTF-8', 'application/json;charset="utf-8"',
      'application/json ; charset=utf8', 'application/json; foo=bar', 'application/json;'
    ])('%s: accepted', (contentType) => {
      expect(isJsonMediaType(contentType)).toBe(true)
      expect(parse({ context: { targetingKey: '7' } }, contentType).ok).toBe(true)
    })

    test.each([
      [undefined], [''], ['text/plain'], ['text/plain;charset=UTF-8'], ['application/x-www-form-urlencoded'],
      ['multipart/form-data; boundary=x'], ['application/json; charset=latin1'], ['application/json; charset=utf-16'],
      ['application/jsonp'], ['application/merge-patch+json'], ['json']
    ])('%s: 400 PARSE_ERROR, whatever the body', (contentType) => {
      expect(isJsonMediaType(contentType)).toBe(false)
      expect(parseEvaluationRequest(contentType, '{"context":{"targetingKey":"7"}}', LIMITS).error).toBe(OFREP_ERRORS.BAD_MEDIA_TYPE)
    })
  })

  test('whatever the bytes: an id that is a beacon id, or an entry of the table', () => {
    const errors = new Set(Object.values(OFREP_ERRORS))
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.json().map((s) => Buffer.from(s)),
      fc.record({ context: fc.dictionary(fc.string(), fc.jsonValue()) }).map((v) => Buffer.from(JSON.stringify(v))),
      fc.record({ context: fc.record({ targetingKey: fc.jsonValue() }) }).map((v) => Buffer.from(JSON.stringify(v)))
    )
    fc.assert(fc.property(bodies, (body) => {
      const result = parse(body)
      return result.ok ? /^[A-Za-z0-9_-]{1,64}$/.test(result.id) : errors.has(result.error)
    }), { numRuns: 2000 })
  })
})

describe('the flag key of the single-flag path', () => {
  test.each([
    ['discount-banner', 'discount-banner'],
    ['features.search', 'features.search'],
    ['a%2Fb', 'a/b'], // encodeURIComponent's form of a slash
    ['a/b', 'a/b'], // sent raw by ofrep-core before 2.2.1
    ['50%25%20off', '50% off'],
    ['caf%C3%A9%20%F0%9F%9A%80', 'café 🚀'],
    ['a+b', 'a+b'], // a path, not a form: + is a plus
    ['__proto__', '__proto__'],
    ['x'.repeat(256), 'x'.repeat(256)]
  ])('%s → %s', (raw, key) => {
    expect(parseFlagKey(raw)).toEqual({ ok: true, key })
  })

  test('an empty key, or one over maxKeyLength once decoded, is not found (no flag has one)', () => {
    expect(parseFlagKey('')).toEqual({ ok: false, key: '', error: OFREP_ERRORS.FLAG_NOT_FOUND })
    expect(parseFlagKey('x'.repeat(257))).toEqual({ ok: false, key: 'x'.repeat(257), error: OFREP_ERRORS.FLAG_NOT_FOUND })
    expect(parseFlagKey('%78'.repeat(10), { maxKeyLength: 10 })).toEqual({ ok: true, key: 'x'.repeat(10) })
    expect(parseFlagKey('%78'.repeat(11), { maxKeyLength: 10 }).error).toBe(OFREP_ERRORS.FLAG_NOT_FOUND)
  })

  test.each([['50%off'], ['%'], ['%E9'], ['%C3'], ['%ED%A0%80']])('malformed percent-encoding %s: 400 PARSE_ERROR, raw key kept', (key) => {
    expect(parseFlagKey(key)).toEqual({ ok: false, key, error: OFREP_ERRORS.BAD_KEY_ENCODING })
    expect(OFREP_ERRORS.BAD_KEY_ENCODING).toMatchObject({ status: 400, errorCode: 'PARSE_ERROR' })
  })

  test('any key survives encodeURIComponent and back', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 256, unit: 'grapheme' }), (key) => {
      fc.pre(key.length <= 256)
      expect(parseFlagKey(encodeURIComponent(key))).toEqual({ ok: true, key })
    }), { numRuns: 1000 })
  })
})
