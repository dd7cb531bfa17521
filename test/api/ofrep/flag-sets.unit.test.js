'use strict'

// The reason of each case, and an endpoint's answers per config version (ConfigEntry), mapped
// and rendered once per version.

const { configEntry, contentVersion } = require('../../../lib/toggles/entry')
const { createFlagSets } = require('../../../api/public/ofrep/flag-sets')
const { reasonOf, REASONS } = require('../../../api/public/ofrep/evaluate')

const DEFAULT_CONFIG = { features: {}, variant: 'A' }
const own = (value, version = 'v1') => configEntry(value, version, true)
const fallback = configEntry(DEFAULT_CONFIG, contentVersion('d', DEFAULT_CONFIG), false)

describe('reasons', () => {
  test.each([
    ['an id with its own config', 'hbase', true, 'TARGETING_MATCH'],
    ['an unknown id, given the defaultConfig', 'hbase', false, 'STATIC'],
    ['a fixed config', 'fixed', true, 'STATIC'],
    ['a fixed config, whatever the entry says', 'fixed', false, 'STATIC']
  ])('%s: %s', (name, source, found, reason) => {
    expect(reasonOf(source, found)).toBe(reason)
  })

  test('an unknown id that a rollout gave a variant: SPLIT, the variant beside each value', () => {
    expect(reasonOf('hbase', false, 'B')).toBe('SPLIT')
    const sets = createFlagSets({ name: 'sample5', source: 'hbase', disabledConfig: DEFAULT_CONFIG })
    const variantB = configEntry({ variant: 'B' }, 'r1-B', false, 'B')
    expect(sets.flag(variantB, 'variant')).toEqual({ key: 'variant', value: 'B', reason: 'SPLIT', variant: 'B' })
  })

  test('beacon never sends CACHED (the web provider sets it itself)', () => {
    expect(Object.values(REASONS)).toEqual(['TARGETING_MATCH', 'SPLIT', 'STATIC', 'DISABLED'])
  })
})

describe('createFlagSets', () => {
  const sets = createFlagSets({ name: 'sample5', source: 'hbase', disabledConfig: DEFAULT_CONFIG })

  test('bulk: the id\'s flags with TARGETING_MATCH and the entry\'s version; STATIC for the fallback', () => {
    const entry = own({ features: { search: true } }, '1732600000000')
    expect(JSON.parse(sets.bulk(entry).body)).toEqual({
      flags: [
        { key: 'features', value: { search: true }, reason: 'TARGETING_MATCH' },
        { key: 'features.search', value: true, reason: 'TARGETING_MATCH' }
      ],
      metadata: { endpoint: 'sample5', version: '1732600000000' }
    })
    const body = JSON.parse(sets.bulk(fallback).body)
    expect(body.flags).toEqual([{ key: 'features', value: {}, reason: 'STATIC' }, { key: 'variant', value: 'A', reason: 'STATIC' }])
    expect(body.metadata.version).toBe(fallback.version)
  })

  test('rendered once per entry: the same entry gives the same frozen object; a new version a new one', () => {
    const entry = own({ a: 1 })
    const first = sets.bulk(entry)
    expect(sets.bulk(entry)).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    const next = sets.bulk(own({ a: 2 }, 'v2'))
    expect(next).not.toBe(first)
    expect(next.etag).not.toBe(first.etag)
    // Same config and version in another entry object (an uncached endpoint): same bytes, same tag.
    expect(sets.bulk(own({ a: 1 })).etag).toBe(first.etag)
  })

  test('flag: one item, or null for an unknown key', () => {
    const entry = own({ features: { ui: { theme: 'dark' } }, off: null })
    expect(sets.flag(entry, 'features.ui.theme')).toEqual({ key: 'features.ui.theme', value: 'dark', reason: 'TARGETING_MATCH' })
    expect(sets.flag(entry, 'off')).toEqual({ key: 'off', reason: 'TARGETING_MATCH' })
    expect(sets.flag(entry, 'features.ui.size')).toBeNull()
    expect(sets.flag(fallback, 'variant')).toEqual({ key: 'variant', value: 'A', reason: 'STATIC' })
  })

  test('a fixed endpoint answers STATIC', () => {
    const fixed = createFlagSets({ name: 'sample1', source: 'fixed', disabledConfig: { variant: 'F' } })
    const entry = configEntry({ variant: 'F' }, contentVersion('f', { variant: 'F' }), true)
    expect(fixed.flag(entry, 'variant')).toEqual({ key: 'variant', value: 'F', reason: 'STATIC' })
    expect(JSON.parse(fixed.bulk(entry).body).flags[0].reason).toBe('STATIC')
  })

  test('disabled: DISABLED without values, for the keys of disabledConfig (bulk) or the key asked for', () => {
    const bulk = sets.disabledBulk()
    expect(JSON.parse(bulk.body)).toEqual({
      flags: [{ key: 'features', reason: 'DISABLED' }, { key: 'variant', reason: 'DISABLED' }],
      metadata: { endpoint: 'sample5' }
    })
    expect(sets.disabledBulk()).toBe(bulk)
    expect(sets.disabledFlag('not.in.any.config')).toEqual({ key: 'not.in.any.config', reason: 'DISABLED' })
  })

  test('limits reach the mapping', () => {
    const capped = createFlagSets({ name: 'e', source: 'hbase', disabledConfig: {}, limits: { maxFlags: 1 } })
    expect(JSON.parse(capped.bulk(own({ a: 1, b: 2 })).body).flags).toEqual([{ key: 'a', value: 1, reason: 'TARGETING_MATCH' }])
  })

  test('a "__proto__" member of a stored config is neither a flag nor inside an object flag\'s value', () => {
    const entry = own(JSON.parse('{"__proto__":{"x":1},"o":{"__proto__":{"y":2},"z":3}}'))
    expect(JSON.parse(sets.bulk(entry).body).flags).toEqual([
      { key: 'o', value: { z: 3 }, reason: 'TARGETING_MATCH' },
      { key: 'o.z', value: 3, reason: 'TARGETING_MATCH' }
    ])
  })
})
