'use strict'

const fc = require('fast-check')
const { accessEntry, serializeEntry, MAX_HEADER_CHARS } = require('../../logging/access-entry')

test('builds the compact entry: fixed keys, 3-decimal latency, clipped headers, nulls for absent values', () => {
  const entry = accessEntry({
    ts: 1700000000123,
    endpoint: 'sample4',
    id: undefined,
    status: 200,
    ms: 1.23456789,
    ip: '::1',
    ua: 'u'.repeat(600),
    ref: undefined
  })
  expect(Object.keys(entry)).toEqual(['ts', 'endpoint', 'id', 'bot', 'variant', 'status', 'version', 'ms', 'ip', 'ua', 'ref'])
  expect(entry).toEqual({
    ts: 1700000000123,
    endpoint: 'sample4',
    id: null,
    bot: true, // 'uuu…' is no browser's agent (logging/bot-agent.js)
    variant: null,
    status: 200,
    version: null,
    ms: 1.235,
    ip: '::1',
    ua: 'u'.repeat(MAX_HEADER_CHARS),
    ref: null
  })
  expect(Object.getPrototypeOf(entry)).toBe(Object.prototype)
})

test('serializeEntry is one JSON line that parses back to the entry', () => {
  const entry = accessEntry({
    ts: 1,
    endpoint: 'e',
    id: '42',
    variant: 'B',
    status: 304,
    version: 'hmx53n6d1-B',
    ms: 0.0004,
    ip: '10.0.0.1',
    ua: 'quote " backslash \\ tab \t nl \n',
    ref: 'https://x.test/?a=1&b=é😀'
  })
  const line = serializeEntry(entry)
  expect(line).not.toMatch(/\n/)
  expect(JSON.parse(line)).toEqual(entry)
  expect(line).toBe(JSON.stringify(entry))
})

test('serializeEntry matches JSON.stringify for any entry, and for objects of another shape', () => {
  // Any UTF-16 code units: control chars, quotes, lone surrogates included.
  const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units))
  const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), codeUnits, fc.constant(undefined), fc.constant(null))
  fc.assert(fc.property(
    fc.record({
      ts: fc.oneof(fc.integer({ min: 0, max: 9999999999999 }), fc.double()),
      endpoint: fc.string(),
      id: text,
      variant: text,
      status: fc.integer({ min: 100, max: 599 }),
      version: text,
      ms: fc.double(),
      ip: text,
      ua: text,
      ref: text
    }),
    (fields) => {
      const entry = accessEntry(fields)
      expect(serializeEntry(entry)).toBe(JSON.stringify(entry))
    }
  ), { numRuns: 2000 })
  // An entry's shape with a bot that is not a boolean (never built by accessEntry): still JSON's.
  for (const bot of [null, 'yes', 1]) {
    const odd = { ts: 1, endpoint: 'e', id: null, bot, variant: null, status: 200, version: null, ms: 1, ip: null, ua: null, ref: null }
    expect(serializeEntry(odd)).toBe(JSON.stringify(odd))
  }
  const other = { ts: 1, endpoint: 'e', extra: { nested: [1, 2] } }
  expect(serializeEntry(other)).toBe(JSON.stringify(other))
  const reordered = { endpoint: 'e', ts: 1, id: null, status: 200, ms: 1, ip: null, ua: null, ref: null }
  expect(serializeEntry(reordered)).toBe(JSON.stringify(reordered))
})
