'use strict'

// How a config becomes flags: every member a flag, objects expanded under dotted keys, in
// config order with parents first; collisions, caps and odd JSON handled without throwing.

const fc = require('fast-check')
const { flagsOf, findFlag } = require('../../../api/public/ofrep/flags')

const keys = (flags) => flags.map((f) => f.key)
const asObject = (flags) => Object.fromEntries(flags.map((f) => [f.key, f.value]))

describe('mapping', () => {
  test('top-level members, object flags and their dotted leaves, parent before its leaves', () => {
    const config = { variant: 'B', features: { search: true, ui: { theme: 'dark', size: 12 } }, limit: 5, ratio: 0.25 }
    const flags = flagsOf(config)
    expect(keys(flags)).toEqual([
      'variant', 'features', 'features.search', 'features.ui', 'features.ui.theme', 'features.ui.size', 'limit', 'ratio'
    ])
    expect(asObject(flags)).toEqual({
      variant: 'B',
      features: { search: true, ui: { theme: 'dark', size: 12 } },
      'features.search': true,
      'features.ui': { theme: 'dark', size: 12 },
      'features.ui.theme': 'dark',
      'features.ui.size': 12,
      limit: 5,
      ratio: 0.25
    })
    expect(Object.isFrozen(flags)).toBe(true)
    expect(Object.isFrozen(flags[0])).toBe(true)
  })

  test('arrays are values (not expanded); null is a flag without a value (the code default)', () => {
    const flags = flagsOf({ list: [1, { a: 2 }], off: null, nested: { gone: null } })
    expect(keys(flags)).toEqual(['list', 'off', 'nested', 'nested.gone'])
    expect(flags[0].value).toEqual([1, { a: 2 }])
    expect(flags[1]).toEqual({ key: 'off', value: undefined })
    expect(flags[3].value).toBeUndefined()
    expect(flags[2].value).toEqual({ gone: null }) // the object flag keeps its null member
  })

  test('an empty object is an object flag with no leaves', () => {
    expect(flagsOf({ features: {} })).toEqual([{ key: 'features', value: {} }])
  })

  test.each([
    ['an array', [1, 2]], ['a string', 'x'], ['a number', 3], ['true', true], ['null', null], ['undefined', undefined]
  ])('a config that is %s has no flags', (name, config) => {
    expect(flagsOf(config)).toEqual([])
  })

  test('members named "" or "__proto__" are not flags (nothing could ask for them / JSONP never serves them)', () => {
    const config = JSON.parse('{"":1,"__proto__":{"polluted":true},"a":{"":2,"b":3}}')
    expect(keys(flagsOf(config))).toEqual(['a', 'a.b'])
    expect(({}).polluted).toBeUndefined()
  })

  test('integer-like names come first, as JavaScript orders members', () => {
    expect(keys(flagsOf(JSON.parse('{"b":1,"10":2,"a":3,"2":4}')))).toEqual(['2', '10', 'b', 'a'])
  })
})

describe('collisions', () => {
  test('a literal key beats the derived one, wherever it stands, and the shadowed object is not expanded', () => {
    for (const config of [
      { 'features.search': 'literal', features: { search: 'derived', other: 1 } },
      { features: { search: 'derived', other: 1 }, 'features.search': 'literal' }
    ]) {
      const flags = flagsOf(config)
      expect(findFlag(flags, 'features.search').value).toBe('literal')
      expect(keys(flags).filter((k) => k === 'features.search')).toHaveLength(1)
      expect(findFlag(flags, 'features.other').value).toBe(1)
    }
    const shadowed = flagsOf({ 'a.b': 1, a: { b: { c: 2 } } })
    expect(keys(shadowed)).toEqual(['a.b', 'a'])
  })

  test('the shorter path wins; at equal length the first in config order', () => {
    expect(asObject(flagsOf({ a: { 'b.c': 'first', b: { c: 'deeper' } } }))['a.b.c']).toBe('first')
    expect(asObject(flagsOf({ a: { b: { c: 'deeper' } }, x: { 'a.b.c': 'no' }, 'a.b': { c: 'level 2' } }))['a.b.c']).toBe('level 2')
    expect(asObject(flagsOf({ a: { 'b.c': 'first' }, 'a.b': { c: 'second' } }))['a.b.c']).toBe('first')
  })
})

describe('bounds', () => {
  const deep = (n) => {
    let value = 'leaf'
    for (let i = n; i >= 1; i--) value = { ['k' + i]: value }
    return value
  }

  test('keys have at most maxDepth segments; deeper members stay inside their ancestors\' values', () => {
    const flags = flagsOf(deep(12))
    expect(flags).toHaveLength(8)
    expect(flags.at(-1).key).toBe('k1.k2.k3.k4.k5.k6.k7.k8')
    expect(flags.at(-1).value).toEqual(deep(12).k1.k2.k3.k4.k5.k6.k7.k8)
    expect(keys(flagsOf(deep(5), { maxDepth: 2 }))).toEqual(['k1', 'k1.k2'])
  })

  test('at most maxFlags flags, the ones nearest the top kept, still in config order', () => {
    const config = {}
    for (let i = 0; i < 1500; i++) config['f' + i] = i
    expect(flagsOf(config)).toHaveLength(1000)
    const nested = { a: { x: 1, y: 2, z: 3 }, b: 1, c: { d: 1 } }
    expect(keys(flagsOf(nested, { maxFlags: 4 }))).toEqual(['a', 'a.x', 'b', 'c'])
  })

  test('keys over maxKeyLength are not flags, nor what is below them', () => {
    const long = 'x'.repeat(250)
    expect(keys(flagsOf({ [long]: { abcdefgh: { c: 1 } }, ok: 1 }))).toEqual([long, 'ok'])
    expect(keys(flagsOf({ ['y'.repeat(257)]: 1, ok: 1 }))).toEqual(['ok'])
    expect(keys(flagsOf({ abc: { de: 1 } }, { maxKeyLength: 5 }))).toEqual(['abc'])
  })

  test('a very deep or very wide config is walked without recursion and without throwing', () => {
    const veryDeep = JSON.parse('{"a":'.repeat(100000) + '1' + '}'.repeat(100000))
    expect(flagsOf(veryDeep)).toHaveLength(8)
    const wide = { w: Object.fromEntries(Array.from({ length: 100000 }, (_, i) => ['m' + i, i])) }
    expect(flagsOf(wide)).toHaveLength(1000)
  })

  test('any JSON value: no throw, unique keys, at most maxFlags', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      const flags = flagsOf(value, { maxFlags: 50, maxDepth: 4 })
      return flags.length <= 50 && new Set(keys(flags)).size === flags.length
    }), { numRuns: 500 })
  })
})

describe('against a plain recursive walk (names without dots, so no collisions)', () => {
  /** The rule written the obvious way: depth first, a member's key, then its members'. */
  function reference (value, prefix = '', depth = 1, out = []) {
    for (const [name, member] of Object.entries(value)) {
      if (name === '' || name === '__proto__') continue
      out.push({ key: prefix + name, value: member === null ? undefined : member })
      const nested = member !== null && typeof member === 'object' && !Array.isArray(member)
      if (nested && depth < 4) reference(member, prefix + name + '.', depth + 1, out)
    }
    return out
  }
  const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', '_', 'é') })
  const leaf = fc.oneof(fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }))
  const { config } = fc.letrec((tie) => ({
    config: fc.dictionary(name, fc.oneof({ depthSize: 'small' }, leaf, tie('config')), { maxKeys: 5 })
  }))

  test('same keys, values and order', () => {
    fc.assert(fc.property(config, (value) => {
      expect(flagsOf(value, { maxDepth: 4, maxFlags: 1e6 })).toEqual(reference(value))
    }), { numRuns: 500 })
  })
})

test('findFlag: the flag of a key, or undefined', () => {
  const flags = flagsOf({ a: { b: false } })
  expect(findFlag(flags, 'a.b')).toEqual({ key: 'a.b', value: false })
  expect(findFlag(flags, 'a.c')).toBeUndefined()
  expect(findFlag(flags, 'constructor')).toBeUndefined()
  expect(findFlag(flags, '__proto__')).toBeUndefined()
})
