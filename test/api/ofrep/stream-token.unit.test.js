'use strict'

// The stream token of a keyed endpoint, and the eventStreams member that hands it out.

const { streamToken, checkStreamToken } = require('../../../api/public/ofrep/stream-token')
const { eventStreamsJson } = require('../../../api/public/ofrep/stream-link')
const { ofrepValidators } = require('../../support/ofrep-schema')

const KEYS = Object.freeze(['old-key-0123456789abcdef', 'new-key-0123456789abcdef'])

test('a token is for one id of one endpoint, signed with any configured key; it reveals no key', () => {
  const token = streamToken(KEYS[1], 'sample3', '7')
  expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/)
  expect(token).toBe(streamToken(KEYS[1], 'sample3', '7'))
  expect(checkStreamToken(token, KEYS, 'sample3', '7')).toBe(true)
  expect(checkStreamToken(streamToken(KEYS[0], 'sample3', '7'), KEYS, 'sample3', '7')).toBe(true)
  expect(checkStreamToken(token, KEYS, 'sample3', '8')).toBe(false)
  expect(checkStreamToken(token, KEYS, 'sample5', '7')).toBe(false)
  // Rotated out: the key's tokens stop working with it.
  expect(checkStreamToken(streamToken(KEYS[0], 'sample3', '7'), [KEYS[1]], 'sample3', '7')).toBe(false)
  // The separator keeps (endpoint, id) pairs apart.
  expect(streamToken(KEYS[0], 'a', 'bc')).not.toBe(streamToken(KEYS[0], 'ab', 'c'))
  for (const key of KEYS) expect(token).not.toContain(key.slice(0, 8))
})

test('anything but a token of the right shape is refused without a comparison that could throw', () => {
  for (const bad of ['', 'x', 'A'.repeat(31), 'A'.repeat(33), 'A'.repeat(31) + '=', 'é'.repeat(32), KEYS[0]]) {
    expect(checkStreamToken(bad, KEYS, 'sample3', '7')).toBe(false)
  }
})

test('eventStreams: OFREP\'s endpoint form with the id, and the token on a keyed endpoint; none without a stream', () => {
  const schema = ofrepValidators()
  const route = { name: 'sample3', stream: { path: '/api/sample3/changes', inactivityDelaySec: 120 } }
  const plain = JSON.parse(eventStreamsJson(route, '7', null))
  expect(plain).toEqual([{ type: 'sse', endpoint: { requestUri: '/api/sample3/changes?id=7' }, inactivityDelaySec: 120 }])
  const keyed = JSON.parse(eventStreamsJson(route, 'a_B-9', KEYS[1]))
  expect(keyed[0].endpoint.requestUri).toBe(`/api/sample3/changes?id=a_B-9&token=${streamToken(KEYS[1], 'sample3', 'a_B-9')}`)
  for (const stream of [...plain, ...keyed]) expect(schema.eventStream(stream)).toBeNull()
  expect(eventStreamsJson({ name: 'sample3', stream: null }, '7', null)).toBeNull()
  expect(() => eventStreamsJson(route, '7"}]', null)).toThrow(TypeError)
})
