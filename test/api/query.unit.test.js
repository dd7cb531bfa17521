'use strict'

const { parseBeaconQuery, isCallbackPath, RESERVED_WORDS } = require('../../api/public/query')
const { ERRORS } = require('../../lib/errors')

const LIMITS = Object.freeze({ maxIdLength: 64, maxCallbackLength: 128 })
// CPU time, not the wall clock: a loaded machine stretches the latter, not the work.
const cpuMs = (since) => { const u = process.cpuUsage(since); return (u.user + u.system) / 1000 }

function parse (query, limits = LIMITS) {
  const { id, callback, error } = parseBeaconQuery(query, limits)
  return error ? error.code : { id, callback }
}

describe('accepted', () => {
  test.each([
    ['id=1&callback=EXAMPLE.process', { id: '1', callback: 'EXAMPLE.process' }],
    ['callback=EXAMPLE.process&id=10000', { id: '10000', callback: 'EXAMPLE.process' }],
    ['id=7', { id: '7', callback: null }],
    ['id=abc_DEF-123', { id: 'abc_DEF-123', callback: null }],
    ['id=1&callback=jQuery1124_1700000000000&_=1700000000001', { id: '1', callback: 'jQuery1124_1700000000000' }],
    ['id=1&callback=$jq_123.cb', { id: '1', callback: '$jq_123.cb' }],
    ['id=1&callback=_', { id: '1', callback: '_' }],
    ['id=1&callback=a.b.c.d', { id: '1', callback: 'a.b.c.d' }],
    ['id=1&callback=newThing.thisOne', { id: '1', callback: 'newThing.thisOne' }], // reserved words only as whole segments
    ['id=%31', { id: '1', callback: null }], // percent-encoded id
    ['id=%61%62', { id: 'ab', callback: null }],
    ['id=1&callback=EXAMPLE%2Eprocess', { id: '1', callback: 'EXAMPLE.process' }],
    ['id=1&callback=%24cb', { id: '1', callback: '$cb' }],
    ['%69d=5', { id: '5', callback: null }], // an escaped key is still `id`
    ['callback[]=x&id=1', { id: '1', callback: null }], // callback[] is not callback
    ['callback[]=x&callback[]=y&id=1&callback=cb', { id: '1', callback: 'cb' }],
    ['id=1&_=1&_=2&x&&=y&', { id: '1', callback: null }], // unknown, repeated and empty params are ignored
    ['id=1&junk=%E0%A4%A', { id: '1', callback: null }], // unknown params are never decoded
    ['id=1&ID=2&Callback=x', { id: '1', callback: null }], // keys are case-sensitive
    ['id=' + 'a'.repeat(64), { id: 'a'.repeat(64), callback: null }],
    ['id=1&callback=' + 'c'.repeat(128), { id: '1', callback: 'c'.repeat(128) }]
  ])('%s', (query, expected) => {
    expect(parse(query)).toEqual(expected)
  })
})

describe('rejected', () => {
  test.each([
    [undefined, 'MISSING_ID'],
    ['', 'MISSING_ID'],
    ['callback=cb', 'MISSING_ID'],
    ['ids=1', 'MISSING_ID'],
    ['id', 'BAD_ID'],
    ['id=', 'BAD_ID'],
    ['id=a+b', 'BAD_ID'], // + is a space
    ['id=a%20b', 'BAD_ID'],
    ['id=a.b', 'BAD_ID'],
    ['id=%3Cscript%3E', 'BAD_ID'],
    ['id=' + 'a'.repeat(65), 'BAD_ID'],
    ['id=' + '%61'.repeat(65), 'BAD_ID'],
    ['id=%C3%A9', 'BAD_ID'], // é: ASCII only
    ['id=%E0%A4%A', 'BAD_QUERY'], // truncated escape
    ['id=%C3%28', 'BAD_QUERY'], // invalid UTF-8
    ['id=%zz', 'BAD_QUERY'],
    ['id=1&callback=%E0%A4%A', 'BAD_QUERY'],
    ['id=1&id=2', 'DUPLICATE_PARAM'],
    ['id=1&id=1', 'DUPLICATE_PARAM'],
    ['id=1&callback=a&callback=b', 'DUPLICATE_PARAM'],
    ['id=1&%69d=2', 'DUPLICATE_PARAM'],
    ['callback=a&id=1&%63allback=b', 'DUPLICATE_PARAM'],
    ['id=1&callback=', 'BAD_CALLBACK'],
    ['id=1&callback', 'BAD_CALLBACK'],
    ['id=1&callback=a..b', 'BAD_CALLBACK'],
    ['id=1&callback=.a', 'BAD_CALLBACK'],
    ['id=1&callback=a.', 'BAD_CALLBACK'],
    ['id=1&callback=.', 'BAD_CALLBACK'],
    ['id=1&callback=1abc', 'BAD_CALLBACK'],
    ['id=1&callback=a.1b', 'BAD_CALLBACK'],
    ['id=1&callback=a+b', 'BAD_CALLBACK'],
    ['id=1&callback=a-b', 'BAD_CALLBACK'],
    ['id=1&callback=a[0]', 'BAD_CALLBACK'],
    ['id=1&callback=a%5B0%5D', 'BAD_CALLBACK'],
    ['id=1&callback=alert(1)//', 'BAD_CALLBACK'],
    ['id=1&callback=alert%281%29%2F%2F', 'BAD_CALLBACK'],
    ['id=1&callback=%3C%2Fscript%3E', 'BAD_CALLBACK'],
    ['id=1&callback=a%E2%80%A8b', 'BAD_CALLBACK'], // U+2028
    ['id=1&callback=%C3%A9t%C3%A9', 'BAD_CALLBACK'], // unicode letters: ASCII only is the rule
    ['id=1&callback=%D0%B0', 'BAD_CALLBACK'], // Cyrillic а, looks like a
    ['id=1&callback=a%5Cu0062', 'BAD_CALLBACK'], // a\u0062
    ['id=1&callback=function', 'BAD_CALLBACK'],
    ['id=1&callback=new.x', 'BAD_CALLBACK'],
    ['id=1&callback=a.this', 'BAD_CALLBACK'],
    ['id=1&callback=EXAMPLE.class.cb', 'BAD_CALLBACK'],
    ['id=1&callback=undefined.x', 'BAD_CALLBACK'],
    ['id=1&callback=' + 'c'.repeat(129), 'BAD_CALLBACK'],
    ['id=1&callback=' + 'c'.repeat(10 * 1024), 'BAD_CALLBACK'],
    ['id=1&callback=' + '%'.repeat(10 * 1024), 'BAD_CALLBACK'] // too long to be worth decoding
  ])('%s', (query, code) => {
    const { id, callback, error } = parseBeaconQuery(query, LIMITS)
    expect(error).toBeInstanceOf(ERRORS[code])
    expect(error).toMatchObject({ code, statusCode: 400 })
    expect(id).toBeNull()
    expect(callback).toBeNull()
  })

  test('every reserved word is refused as any segment', () => {
    for (const word of RESERVED_WORDS) {
      expect(parse(`id=1&callback=${word}`)).toBe('BAD_CALLBACK')
      expect(parse(`id=1&callback=a.${word}.b`)).toBe('BAD_CALLBACK')
      expect(parse(`id=1&callback=a.${word}x`)).toEqual({ id: '1', callback: `a.${word}x` })
    }
  })
})

describe('limits', () => {
  test('come from the settings', () => {
    const tight = { maxIdLength: 3, maxCallbackLength: 5 }
    expect(parse('id=abc&callback=a.b.c', tight)).toEqual({ id: 'abc', callback: 'a.b.c' })
    expect(parse('id=abcd', tight)).toBe('BAD_ID')
    expect(parse('id=%61%62%63', tight)).toEqual({ id: 'abc', callback: null })
    expect(parse('id=%61%62%63%64', tight)).toBe('BAD_ID')
    expect(parse('id=a&callback=abcdef', tight)).toBe('BAD_CALLBACK')
  })

  test('a 10 KB value is refused quickly, without being decoded', () => {
    const huge = 'id=1&callback=' + '%41'.repeat(3500) // 10.5 KB that would decode to valid letters
    const started = process.cpuUsage()
    for (let i = 0; i < 1000; i++) expect(parseBeaconQuery(huge, LIMITS).error.code).toBe('BAD_CALLBACK')
    expect(cpuMs(started) / 1000).toBeLessThan(1) // per call
  })

  test('many params without "=" parse in linear time', () => {
    const query = 'a&'.repeat(5000) + 'id=1'
    const started = process.cpuUsage()
    for (let i = 0; i < 100; i++) expect(parse(query)).toEqual({ id: '1', callback: null })
    expect(cpuMs(started) / 100).toBeLessThan(5) // per call
  })
})

test('errors are shared, frozen and carry no client input', () => {
  const a = parseBeaconQuery('id=<x>', LIMITS).error
  const b = parseBeaconQuery('id=<y>', LIMITS).error
  expect(a).toBe(b)
  expect(Object.isFrozen(a)).toBe(true)
  expect(a.message).toBe(ERRORS.BAD_ID.message)
})

test('isCallbackPath', () => {
  expect(isCallbackPath('EXAMPLE.process')).toBe(true)
  expect(isCallbackPath('a..b')).toBe(false)
  expect(isCallbackPath(undefined)).toBe(false)
  expect(isCallbackPath({ toString: () => 'a' })).toBe(false)
})
