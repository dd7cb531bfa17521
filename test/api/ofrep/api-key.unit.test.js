'use strict'

// The optional API key of the OFREP paths: X-API-Key or Authorization: Bearer, compared in
// constant time; 'missing' → 401, 'wrong' → 403.

const crypto = require('node:crypto')
const { checkApiKey } = require('../../../api/public/ofrep/api-key')

const KEYS = Object.freeze(['k-one', 'k-two-longer'])

test.each([
  ['X-API-Key', { 'x-api-key': 'k-one' }],
  ['X-API-Key, the second key', { 'x-api-key': 'k-two-longer' }],
  ['X-API-Key with spaces around', { 'x-api-key': '  k-one ' }],
  ['Bearer', { authorization: 'Bearer k-two-longer' }],
  ['bearer, any case, more spaces', { authorization: 'bEaReR   k-one ' }],
  ['both, the key right', { 'x-api-key': 'k-one', authorization: 'Bearer proxy-token' }],
  ['both, the bearer right', { 'x-api-key': 'nope', authorization: 'Bearer k-one' }]
])('%s: ok', (name, headers) => {
  expect(checkApiKey(headers, KEYS)).toBe('ok')
})

test.each([
  ['no header', {}],
  ['an empty X-API-Key', { 'x-api-key': '' }],
  ['a blank X-API-Key', { 'x-api-key': '   ' }],
  ['another scheme', { authorization: 'Basic ay1vbmU6' }],
  ['Bearer without a token', { authorization: 'Bearer ' }],
  ['Bearer with two tokens', { authorization: 'Bearer k-one k-two' }],
  ['the key without a scheme', { authorization: 'k-one' }]
])('%s: missing', (name, headers) => {
  expect(checkApiKey(headers, KEYS)).toBe('missing')
})

test.each([
  ['a wrong key', { 'x-api-key': 'k-on' }],
  ['a longer wrong key', { 'x-api-key': 'k-one-and-more' }],
  ['a key of another case', { 'x-api-key': 'K-ONE' }],
  ['a wrong bearer', { authorization: 'Bearer k-three' }],
  ['two wrong keys', { 'x-api-key': 'a', authorization: 'Bearer b' }],
  ['a unicode key', { 'x-api-key': 'k-oné' }]
])('%s: wrong', (name, headers) => {
  expect(checkApiKey(headers, KEYS)).toBe('wrong')
})

test('no configured key: nothing matches (fail closed)', () => {
  expect(checkApiKey({ 'x-api-key': 'anything' }, [])).toBe('wrong')
  expect(checkApiKey({}, [])).toBe('missing')
})

test('every configured key is compared, in constant time, on equal-length digests', () => {
  const spy = jest.spyOn(crypto, 'timingSafeEqual')
  try {
    expect(checkApiKey({ 'x-api-key': 'k-one' }, KEYS)).toBe('ok')
    expect(spy).toHaveBeenCalledTimes(2) // the match is the first key, the second is compared too
    for (const [a, b] of spy.mock.calls) expect([a.length, b.length]).toEqual([32, 32])
  } finally {
    spy.mockRestore()
  }
})

test('keys with any characters work', () => {
  const keys = Object.freeze(['päss wörd', 'a'.repeat(500)])
  expect(checkApiKey({ 'x-api-key': 'päss wörd' }, keys)).toBe('ok')
  expect(checkApiKey({ authorization: 'Bearer ' + 'a'.repeat(500) }, keys)).toBe('ok')
})
