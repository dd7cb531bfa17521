'use strict'

// Addresses as the access log may store them (logging/ip-address.js): cut to /24 or /48, or a
// keyed hash. Every text form node's socket gives is covered: IPv4, IPv6 compressed and full,
// IPv4-mapped IPv6 (a dual-stack socket), a zone, a missing address and garbage.

const crypto = require('node:crypto')
const net = require('node:net')
const fc = require('fast-check')
const { parseAddress, truncateAddress, hashAddress, HASH_HEX_CHARS } = require('../../logging/ip-address')

const KEY = Buffer.alloc(32, 7)
const GARBAGE = [
  undefined, null, '', ' ', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', ' 1.2.3.4', '1.2.3.4 ', '1.2.3.4%eth0',
  ':::', '1::2::3', '2001:db8::g', '12345::', 42, {}, [], Buffer.from('1.2.3.4'), 'x'.repeat(100000), '\u0000', '::ffff:1.2.3'
]

describe('truncateAddress', () => {
  test.each([
    ['IPv4', '203.0.113.77', '203.0.113.0'],
    ['IPv4 .0 already', '10.1.2.0', '10.1.2.0'],
    ['IPv4 broadcast', '255.255.255.255', '255.255.255.0'],
    ['loopback IPv4', '127.0.0.1', '127.0.0.0'],
    ['IPv6 compressed', '2001:db8:85a3::8a2e:370:7334', '2001:db8:85a3::'],
    ['IPv6 full form', '2001:0db8:85a3:0000:0000:8a2e:0370:7334', '2001:db8:85a3::'],
    ['IPv6 upper case', '2001:DB8:ABCD:12::1', '2001:db8:abcd::'],
    ['IPv6 zero third hextet', '2001:db8::1', '2001:db8:0::'],
    ['IPv6 loopback', '::1', '0:0:0::'],
    ['IPv6 unspecified', '::', '0:0:0::'],
    ['IPv6 trailing ::', 'fe80::', 'fe80:0:0::'],
    ['IPv6 with a zone', 'fe80::1:2:3:4%eth0', 'fe80:0:0::'],
    ['IPv6 with an embedded IPv4 (NAT64)', '64:ff9b::192.0.2.33', '64:ff9b:0::'],
    ['IPv4-mapped', '::ffff:198.51.100.23', '198.51.100.0'],
    ['IPv4-mapped, hex form', '::ffff:c633:6417', '198.51.100.0'],
    ['IPv4-mapped, full form', '0:0:0:0:0:ffff:198.51.100.23', '198.51.100.0'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1', '127.0.0.0']
  ])('%s: %s → %s', (_, ip, expected) => {
    expect(truncateAddress(ip)).toBe(expected)
    expect(net.isIP(expected)).not.toBe(0)
  })

  test('a missing address stays null; garbage is null and never throws', () => {
    for (const ip of GARBAGE) expect(truncateAddress(ip)).toBeNull()
  })

  test('every IPv6 address truncates to its own first 48 bits (any text form)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (h) => {
      fc.pre(!(h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff)) // mapped IPv4 is checked above
      const full = h.map((x) => x.toString(16).padStart(4, '0')).join(':')
      const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1) // node's canonical form
      const expected = h.slice(0, 3).map((x) => x.toString(16)).join(':') + '::'
      expect(truncateAddress(full)).toBe(expected)
      expect(truncateAddress(compressed)).toBe(expected)
      expect(parseAddress(compressed)).toEqual({ v6: h })
    }))
  })

  test('every IPv4 address keeps its /24, plain or mapped', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => {
      const expected = ip.split('.').slice(0, 3).join('.') + '.0'
      expect(truncateAddress(ip)).toBe(expected)
      expect(truncateAddress('::ffff:' + ip)).toBe(expected)
    }))
  })
})

describe('hashAddress', () => {
  const hmac = (bytes) => crypto.createHmac('sha256', KEY).update(Buffer.from(bytes)).digest('hex').slice(0, 16)

  test('IPv4: HMAC-SHA256 of the 4 address bytes, first 16 hex characters', () => {
    expect(HASH_HEX_CHARS).toBe(16)
    const h = hashAddress('203.0.113.77', KEY)
    expect(h).toMatch(/^[0-9a-f]{16}$/)
    expect(h).toBe(hmac([203, 0, 113, 77]))
    expect(net.isIP(h)).toBe(0)
  })

  test('IPv6: the 16 address bytes, so compressed and full forms hash alike', () => {
    const bytes = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    expect(hashAddress('2001:db8::1', KEY)).toBe(hmac(bytes))
    expect(hashAddress('2001:0DB8:0000:0000:0000:0000:0000:0001', KEY)).toBe(hmac(bytes))
    expect(hashAddress('::1', KEY)).toBe(hmac([...new Array(15).fill(0), 1]))
  })

  test('IPv4-mapped IPv6 hashes as the IPv4 address it carries', () => {
    expect(hashAddress('::ffff:127.0.0.1', KEY)).toBe(hashAddress('127.0.0.1', KEY))
    expect(hashAddress('::ffff:7f00:1', KEY)).toBe(hashAddress('127.0.0.1', KEY))
  })

  test('another key, another hash; one key, one hash per address', () => {
    const other = Buffer.alloc(32, 8)
    expect(hashAddress('198.51.100.1', KEY)).not.toBe(hashAddress('198.51.100.1', other))
    expect(hashAddress('198.51.100.1', KEY)).toBe(hashAddress('198.51.100.1', KEY))
    expect(hashAddress('198.51.100.1', KEY)).not.toBe(hashAddress('198.51.100.2', KEY))
  })

  test('missing address, garbage or no key: null, never a throw', () => {
    for (const ip of GARBAGE) expect(hashAddress(ip, KEY)).toBeNull()
    expect(hashAddress('198.51.100.1', null)).toBeNull()
  })
})
