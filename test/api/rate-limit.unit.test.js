'use strict'

// Per-client limits (api/public/rate-limit.js), on a fake clock: the token bucket's refill and
// Retry-After, its bounded table, who the client of a request is (IPv4, IPv6 /64, a trusted
// proxy's X-Forwarded-For), and the settings and env that make them. The limits over real
// sockets from two loopback addresses are in test/api/rate-limit.test.js.

const { createRateLimiter, createRateLimits, clientOf, clientKey } = require('../../api/public/rate-limit')
const { createProxyTrust } = require('../../api/public/trusted-proxies')
const { loadSettings } = require('../../config')

test('a bucket of burst tokens, refilled at perSecond; refused with the whole seconds until the next token', () => {
  let t = 0
  const limiter = createRateLimiter({ perSecond: 2, burst: 3, now: () => t })
  expect([1, 2, 3].map(() => limiter.take('a'))).toEqual([0, 0, 0])
  expect(limiter.take('a')).toBe(1) // half a second to the next token, rounded up
  expect(limiter.take('b')).toBe(0) // another client has a bucket of its own
  t += 500
  expect(limiter.take('a')).toBe(0)
  expect(limiter.take('a')).toBe(1)
  t += 10000 // idle: full again, never more than burst
  expect([1, 2, 3, 4].map(() => limiter.take('a'))).toEqual([0, 0, 0, 1])
  const slow = createRateLimiter({ perSecond: 0.1, burst: 1, now: () => t })
  expect(slow.take('a')).toBe(0)
  expect(slow.take('a')).toBe(10)
})

test('burst defaults to twice perSecond', () => {
  const limiter = createRateLimiter({ perSecond: 5, now: () => 0 })
  const answers = Array.from({ length: 11 }, () => limiter.take('a'))
  expect(answers.filter((w) => w === 0)).toHaveLength(10)
})

test('the table is bounded: idle clients go first, then the oldest', () => {
  let t = 0
  const limiter = createRateLimiter({ perSecond: 1, burst: 1, maxClients: 100, now: () => t })
  for (let i = 0; i < 50; i++) limiter.take(`idle-${i}`)
  t += 5000 // their buckets are full again: the same as none
  for (let i = 0; i < 50; i++) limiter.take(`busy-${i}`)
  expect(limiter.size()).toBe(100)
  expect(limiter.take('newcomer')).toBe(0)
  expect(limiter.size()).toBe(51) // the 50 idle ones went; the busy ones kept their state
  expect(limiter.take('busy-7')).toBe(1)
  for (let i = 0; i < 1000; i++) limiter.take(`flood-${i}`)
  expect(limiter.size()).toBeLessThanOrEqual(100)
})

test('the client: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64', () => {
  expect(clientKey('127.0.0.2')).toBe('127.0.0.2')
  expect(clientKey('::ffff:10.1.2.3')).toBe('10.1.2.3')
  expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
  expect(clientKey('2001:db8:1:2::9')).toBe(clientKey('2001:db8:1:2:ffff::1'))
  expect(clientKey('::1')).toBe('0:0:0:0::/64')
})

test('X-Forwarded-For counts only from a trusted proxy, and then its rightmost untrusted address', () => {
  const req = (peer, xff) => ({ socket: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })
  const trusted = createProxyTrust(['127.0.0.1', '10.0.0.5'])
  expect(clientOf(req('127.0.0.9', '1.2.3.4'), trusted)).toBe('127.0.0.9') // not a proxy: its header is the client's word
  expect(clientOf(req('127.0.0.1', '1.2.3.4'), trusted)).toBe('1.2.3.4')
  expect(clientOf(req('127.0.0.1', 'forged, 1.2.3.4, 10.0.0.5'), trusted)).toBe('1.2.3.4')
  expect(clientOf(req('127.0.0.1', 'not-an-address'), trusted)).toBe('127.0.0.1')
  expect(clientOf(req('127.0.0.1'), trusted)).toBe('127.0.0.1')
  expect(clientOf(req('127.0.0.1', '2001:db8:1:2::7'), trusted)).toBe('2001:db8:1:2::/64')
})

test('trusted proxies: addresses, CIDR blocks, loopback and private; anything else is refused by name', () => {
  const trust = createProxyTrust(['loopback', 'private', '203.0.113.0/24', '2001:db8::7'])
  const yes = ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '10.1.2.3', '172.31.0.1', '192.168.1.1', 'fd00::5',
    'fe80::1', '203.0.113.200', '2001:db8::7']
  const no = ['8.8.8.8', '172.32.0.1', '203.0.114.1', '2001:db8::8', '2001:4860::1', '', 'garbage']
  expect(yes.filter((a) => !trust(a))).toEqual([])
  expect(no.filter((a) => trust(a))).toEqual([])
  expect(yes.filter((a) => !trust(a))).toEqual([]) // the remembered answers are the same
  expect(createProxyTrust([])('127.0.0.1')).toBe(false)
  for (const bad of ['10.0.0.0/33', '::1/129', 'example.com', '10.0.0.0/x']) {
    expect(() => createProxyTrust([bad])).toThrow(new RegExp(`trustedProxies: "${bad.replace(/[.]/g, '\\.')}"`))
  }
})

test('settings: on by default; BEACON_RATE_LIMIT=<per second>[:<burst>], 0 off; an endpoint\'s own limit wins', () => {
  const load = (env, overrides) => loadSettings({ env: { BEACON_HBASE_BOOTSTRAP: '127.0.0.1:16020', ...env }, overrides })
  expect(load({}).rateLimit).toEqual({ perSecond: 100, burst: 0, maxClients: 100000, trustedProxies: ['loopback', 'private'] })
  expect(createRateLimits(load({})).describe.sample5).toEqual({ perSecond: 100, burst: 200 })
  expect(createRateLimits(load({ BEACON_RATE_LIMIT: '0' })).limiters.size).toBe(0)
  expect(load({ BEACON_TRUSTED_PROXIES: '10.0.0.0/8,fd00::/8,loopback' }).rateLimit.trustedProxies)
    .toEqual(['10.0.0.0/8', 'fd00::/8', 'loopback'])
  expect(() => load({ BEACON_TRUSTED_PROXIES: 'example.com' })).toThrow(/trustedProxies/)
  expect(load({ BEACON_RATE_LIMIT: '50:200' }).rateLimit).toMatchObject({ perSecond: 50, burst: 200 })
  expect(load({ BEACON_RATE_LIMIT: '50', BEACON_TRUSTED_PROXIES: '127.0.0.1,::1' }).rateLimit)
    .toMatchObject({ perSecond: 50, burst: 0, trustedProxies: ['127.0.0.1', '::1'] })
  expect(() => load({ BEACON_RATE_LIMIT: 'fast' })).toThrow(/rateLimit/)
  const endpoints = { sample1: { rateLimit: { perSecond: 0 } }, sample3: { rateLimit: { perSecond: 5 } } }
  const limits = createRateLimits(load({ BEACON_RATE_LIMIT: '50' }, { endpoints }))
  expect(limits.describe.sample1).toBeUndefined()
  expect(limits.describe.sample3).toEqual({ perSecond: 5, burst: 10 })
  expect(limits.describe.sample5).toEqual({ perSecond: 50, burst: 100 })
})
