'use strict'

// What each sink stores of the client (logging/privacy.js): every ip mode on every address form,
// the user agent, opt-out by each header, daily keys across a UTC midnight (the day comes from
// the entry's ts, so the test moves the clock by giving ts), and the fan-out that copies an
// entry once per distinct policy and never touches the shared one.

const { accessEntry, eventEntry, serializeEntry } = require('../../logging/access-entry')
const {
  createPrivacyPolicy, createSinkPolicies, needsHashKeys, groupSinks, writeEntry, optedOut, createHashKeys
} = require('../../logging/privacy')
const { hashAddress } = require('../../logging/ip-address')

const DAY = 24 * 60 * 60 * 1000
const MIDNIGHT = Date.UTC(2026, 10, 25) // 2026-11-25T00:00:00Z
const SECRET = Buffer.alloc(32, 1)
const UA = 'Mozilla/5.0 (test)'
const settings = (ip, userAgent = 'full', honorOptOut = false) => ({ ip, userAgent, honorOptOut })

function keys (secret = SECRET) {
  const k = createHashKeys()
  k.setSecret(secret)
  return k
}

function entry (ip, ts = MIDNIGHT + 1000) {
  return accessEntry({ ts, endpoint: 'sample5', id: '7', status: 200, ms: 1, ip, ua: UA, ref: 'https://shop.example/' })
}

const ADDRESSES = {
  IPv4: '203.0.113.77',
  'IPv6 compressed': '2001:db8:85a3::8a2e:370:7334',
  'IPv6 full': '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
  'IPv4-mapped IPv6': '::ffff:203.0.113.77',
  missing: null
}

describe('ip modes on each address form', () => {
  const hashKeys = keys()
  const policies = {
    truncate: createPrivacyPolicy(settings('truncate')),
    hash: createPrivacyPolicy(settings('hash'), { hashKeys }),
    none: createPrivacyPolicy(settings('none'))
  }
  const expected = {
    truncate: {
      IPv4: '203.0.113.0',
      'IPv6 compressed': '2001:db8:85a3::',
      'IPv6 full': '2001:db8:85a3::',
      'IPv4-mapped IPv6': '203.0.113.0',
      missing: null
    },
    hash: {
      IPv4: hashAddress('203.0.113.77', hashKeys.keyFor(MIDNIGHT)),
      'IPv6 compressed': hashAddress('2001:db8:85a3::8a2e:370:7334', hashKeys.keyFor(MIDNIGHT)),
      'IPv6 full': hashAddress('2001:db8:85a3::8a2e:370:7334', hashKeys.keyFor(MIDNIGHT)),
      'IPv4-mapped IPv6': hashAddress('203.0.113.77', hashKeys.keyFor(MIDNIGHT)),
      missing: null
    }
  }
  const cases = Object.keys(policies).flatMap((mode) => Object.keys(ADDRESSES).map((form) => [mode, form]))

  test.each(cases)('%s, %s', (mode, form) => {
    const stored = policies[mode].apply(entry(ADDRESSES[form]), false)
    expect(stored.ip).toBe(mode === 'none' ? null : expected[mode][form])
    expect(stored.ua).toBe(UA)
    if (stored.ip !== null) expect(stored.ip).not.toContain('77')
  })

  test('hashes are 16 hex characters; compressed, full and mapped forms of one address agree', () => {
    expect(expected.hash.IPv4).toMatch(/^[0-9a-f]{16}$/)
    expect(expected.hash['IPv6 full']).toBe(expected.hash['IPv6 compressed'])
    expect(expected.hash['IPv4-mapped IPv6']).toBe(expected.hash.IPv4)
  })

  test('garbage in ip is stored as null by truncate and hash, never thrown', () => {
    for (const policy of [policies.truncate, policies.hash]) {
      for (const ip of ['not an ip', '', 42, '1.2.3.4.5']) {
        expect(policy.apply(/** @type {any} */ ({ ...entry(null), ip }), false).ip).toBeNull()
      }
    }
  })
})

describe('the stored copy', () => {
  test('full everywhere is no policy at all: nothing to apply', () => {
    expect(createPrivacyPolicy(settings('full'))).toBeNull()
    expect(createPrivacyPolicy(undefined)).toBeNull()
  })

  test('a copy with the same keys in the same order; the shared entry is untouched', () => {
    const original = entry('203.0.113.77')
    const before = { ...original }
    const stored = createPrivacyPolicy(settings('truncate', 'none')).apply(original, false)
    expect(stored).not.toBe(original)
    expect(original).toEqual(before)
    expect(Object.keys(stored)).toEqual(Object.keys(original))
    expect(stored).toEqual({ ...original, ip: '203.0.113.0', ua: null })
    // Still the access entry's shape, so the serializer keeps its fast path.
    expect(serializeEntry(stored)).toBe(JSON.stringify(stored))
  })

  test('event entries keep their own keys', () => {
    const ev = eventEntry({ ts: MIDNIGHT, endpoint: 'sample5', id: '7', event: 'exposure', variant: 'B', ip: '2001:db8::1', ua: UA })
    const stored = createPrivacyPolicy(settings('truncate')).apply(ev, false)
    expect(Object.keys(stored)).toEqual(Object.keys(ev))
    expect(stored).toMatchObject({ event: 'exposure', variant: 'B', ip: '2001:db8:0::', ua: UA })
  })

  test('userAgent none drops the user agent and keeps the address as its ip mode says', () => {
    const stored = createPrivacyPolicy(settings('full', 'none')).apply(entry('203.0.113.77'), false)
    expect(stored).toMatchObject({ ip: '203.0.113.77', ua: null, ref: 'https://shop.example/' })
  })

  test('the pure form: ip(ip, ts, optOut) and ua(ua, optOut), for callers that encode first', () => {
    const policy = createPrivacyPolicy(settings('truncate', 'full', true))
    expect(policy.ip('198.51.100.9', MIDNIGHT, false)).toBe('198.51.100.0')
    expect(policy.ip('198.51.100.9', MIDNIGHT, true)).toBeNull()
    expect(policy.ua(UA, false)).toBe(UA)
    expect(policy.ua(UA, true)).toBeNull()
  })
})

describe('honorOptOut', () => {
  test.each([
    ['Sec-GPC: 1', { 'sec-gpc': '1' }, true],
    ['DNT: 1', { dnt: '1' }, true],
    ['both', { 'sec-gpc': '1', dnt: '1' }, true],
    ['Sec-GPC: 0', { 'sec-gpc': '0' }, false],
    ['DNT: 0', { dnt: '0' }, false],
    ['neither', {}, false],
    ['another value', { 'sec-gpc': 'yes', dnt: 'true' }, false]
  ])('%s', (_, headers, out) => {
    expect(optedOut(headers)).toBe(out)
    const sink = { lines: [], write (e) { this.lines.push(e) } }
    const honoring = createPrivacyPolicy(settings('full', 'full', true))
    writeEntry([sink], groupSinks([sink], [honoring]), entry('203.0.113.77'), headers)
    expect(sink.lines).toHaveLength(1) // the row is written either way: counts stay exact
    expect(sink.lines[0]).toMatchObject(out ? { ip: null, ua: null, id: '7', status: 200 } : { ip: '203.0.113.77', ua: UA })
  })

  test('off (the default), an opted-out request is stored by the ip and userAgent modes alone', () => {
    const policy = createPrivacyPolicy(settings('truncate'))
    expect(policy.apply(entry('203.0.113.77'), true)).toMatchObject({ ip: '203.0.113.0', ua: UA })
  })
})

describe('daily keys', () => {
  test('one key within a UTC day, another after midnight; the same on every host with the secret', () => {
    const a = keys()
    const b = keys(Buffer.from(SECRET))
    const policy = createPrivacyPolicy(settings('hash'), { hashKeys: a })
    const at = (ts) => policy.ip('198.51.100.9', ts, false)
    expect(at(MIDNIGHT)).toBe(at(MIDNIGHT + DAY - 1))
    expect(at(MIDNIGHT + DAY)).not.toBe(at(MIDNIGHT + DAY - 1))
    expect(at(MIDNIGHT - 1)).not.toBe(at(MIDNIGHT))
    expect(b.keyFor(MIDNIGHT + 5)).toEqual(a.keyFor(MIDNIGHT + 7))
    // Back across midnight and forth again: each day's hash is the same every time.
    expect(at(MIDNIGHT - 1)).toBe(at(MIDNIGHT - DAY))
    expect(at(MIDNIGHT + DAY)).toBe(at(MIDNIGHT + 2 * DAY - 1))
  })

  test('another secret, other keys', () => {
    expect(keys(Buffer.alloc(32, 2)).keyFor(MIDNIGHT)).not.toEqual(keys().keyFor(MIDNIGHT))
  })

  test('before the secret is read a hashed address is null, never the address', () => {
    const hashKeys = createHashKeys()
    const policy = createPrivacyPolicy(settings('hash'), { hashKeys })
    expect(policy.ip('198.51.100.9', MIDNIGHT, false)).toBeNull()
    hashKeys.setSecret(SECRET)
    expect(policy.ip('198.51.100.9', MIDNIGHT, false)).toMatch(/^[0-9a-f]{16}$/)
  })

  test('a ts with no day (NaN, out of range) gives no key; a bad secret is refused', () => {
    for (const ts of [NaN, Infinity, 9e15, -9e15]) expect(keys().keyFor(ts)).toBeNull()
    expect(keys().keyFor(8.64e15)).not.toBeNull()
    expect(() => createHashKeys().setSecret(/** @type {any} */ ('secret'))).toThrow(/INVALID_OPTION|at least 16 bytes/)
    expect(() => createHashKeys().setSecret(Buffer.alloc(8))).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }))
    expect(() => createPrivacyPolicy(settings('hash'))).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }))
  })
})

describe('sinks grouped by policy', () => {
  const recorder = (name) => ({ name, got: [], write (e) { this.got.push(e) } })

  test('every sink full: no groups, the entry itself goes to every sink', () => {
    const sinks = [recorder('a'), recorder('b')]
    const policies = createSinkPolicies({ a: { privacy: settings('full') }, b: {} })
    expect(groupSinks(sinks, [policies.get('a'), policies.get('b')])).toBeNull()
    const e = entry('203.0.113.77')
    writeEntry(sinks, null, e, {})
    expect(sinks.map((s) => s.got[0])).toEqual([e, e])
    expect(sinks[0].got[0]).toBe(e)
  })

  test('one copy per distinct policy: sinks with the same settings share it, a full sink gets the original', () => {
    const sinks = [recorder('file'), recorder('hbase'), recorder('raw'), recorder('anon')]
    const policies = createSinkPolicies({
      file: { privacy: settings('truncate') },
      hbase: { privacy: settings('truncate') },
      raw: { privacy: settings('full') },
      anon: { privacy: settings('none', 'none') }
    }, { hashKeys: keys() })
    expect(policies.get('file')).toBe(policies.get('hbase'))
    const groups = groupSinks(sinks, sinks.map((s) => policies.get(s.name)))
    expect(groups.map((g) => g.sinks.map((s) => s.name))).toEqual([['file', 'hbase'], ['raw'], ['anon']])
    const e = entry('203.0.113.77')
    writeEntry(sinks, groups, e, {})
    expect(sinks[0].got[0]).toBe(sinks[1].got[0])
    expect(sinks[0].got[0]).toMatchObject({ ip: '203.0.113.0', ua: UA })
    expect(sinks[2].got[0]).toBe(e)
    expect(sinks[3].got[0]).toMatchObject({ ip: null, ua: null })
    expect(e.ip).toBe('203.0.113.77')
  })

  test('needsHashKeys: only when a sink hashes', () => {
    expect(needsHashKeys({ a: { privacy: settings('truncate') }, b: {} })).toBe(false)
    expect(needsHashKeys({ a: { privacy: settings('hash') } })).toBe(true)
  })
})
