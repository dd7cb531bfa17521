'use strict'

// The bytes the filter builders produce, decoded back with the same message definitions
// (field numbers are HBase's Filter.proto / Comparator.proto): what the RegionServer will read.
// That HBase runs them as intended is test/filters.test.js, against the real thing.

const F = require('../lib/filters')
const { types } = require('../lib/protocol')

const PKG = 'org.apache.hadoop.hbase.filter.'
const decode = (type, bytes) => types[type].toObject(types[type].decode(bytes), { longs: Number, bytes: String, defaults: false })

test('comparators: substring, regex with its Java flags, binary and binary prefix', () => {
  const sub = F.substring('"id":"4"')
  expect(sub.name).toBe(PKG + 'SubstringComparator')
  expect(decode('SubstringComparator', sub.serializedComparator)).toEqual({ substr: '"id":"4"' })

  const re = F.regex('"status":200(?![0-9])', { caseInsensitive: true, dotAll: true })
  expect(re.name).toBe(PKG + 'RegexStringComparator')
  expect(decode('RegexStringComparator', re.serializedComparator)).toEqual({
    pattern: '"status":200(?![0-9])',
    patternFlags: 0x22,
    charset: 'UTF-8',
    engine: 'JAVA'
  })
  expect(decode('RegexStringComparator', F.regex('x').serializedComparator).patternFlags).toBe(0)

  const bin = F.binary(Buffer.from([0, 255]))
  expect(bin.name).toBe(PKG + 'BinaryComparator')
  expect(types.BinaryComparator.decode(bin.serializedComparator).comparable.value).toEqual(Buffer.from([0, 255]))
  expect(types.BinaryPrefixComparator.decode(F.binaryPrefix('ab').serializedComparator).comparable.value).toEqual(Buffer.from('ab'))
})

test('value and single-column value filters carry the op and the comparator', () => {
  const cmp = F.substring('x')
  const vf = F.valueFilter('NOT_EQUAL', cmp)
  expect(vf.name).toBe(PKG + 'ValueFilter')
  const v = types.ValueFilter.decode(vf.serializedFilter)
  expect(v.compareFilter.compareOp).toBe(F.COMPARE_OPS.NOT_EQUAL)
  expect(v.compareFilter.comparator.name).toBe(cmp.name)
  expect(Buffer.from(v.compareFilter.comparator.serializedComparator)).toEqual(cmp.serializedComparator)

  const scvf = types.SingleColumnValueFilter.decode(F.singleColumnValueFilter('l:e', 'EQUAL', cmp).serializedFilter)
  expect(Buffer.from(scvf.columnFamily).toString()).toBe('l')
  expect(Buffer.from(scvf.columnQualifier).toString()).toBe('e')
  expect(scvf.compareOp).toBe(F.COMPARE_OPS.EQUAL)
  expect(scvf.filterIfMissing).toBe(true)
  expect(scvf.latestVersionOnly).toBe(true)
  expect(
    types.SingleColumnValueFilter.decode(F.singleColumnValueFilter('l:e', 'EQUAL', cmp, { filterIfMissing: false }).serializedFilter)
      .filterIfMissing
  ).toBe(false)
})

test('filter lists nest their filters, AND and OR', () => {
  const a = F.valueFilter('EQUAL', F.substring('a'))
  const b = F.firstKeyOnly()
  const all = types.FilterList.decode(F.allOf(a, b).serializedFilter)
  expect(all.operator).toBe(1)
  expect(all.filters.map((f) => f.name)).toEqual([PKG + 'ValueFilter', PKG + 'FirstKeyOnlyFilter'])
  expect(types.FilterList.decode(F.anyOf(a).serializedFilter).operator).toBe(2)
  expect(types.KeyOnlyFilter.decode(F.keyOnly().serializedFilter).lenAsVal).toBe(false)
})

test.each([
  ['an unknown compare op', () => F.valueFilter(/** @type {any} */ ('LIKE'), F.substring('a'))],
  ['a comparator from elsewhere', () => F.valueFilter('EQUAL', /** @type {any} */ ({ name: 'x' }))],
  ['an empty substring', () => F.substring('')],
  ['an empty pattern', () => F.regex('')],
  ['a column without a family', () => F.singleColumnValueFilter('e', 'EQUAL', F.substring('a'))],
  ['an empty list', () => F.allOf()],
  ['a list member that is not a filter', () => F.anyOf(/** @type {any} */ ({ name: 'x', serializedFilter: 'no' }))],
  ['a binary value of another type', () => F.binary(/** @type {any} */ ({}))]
])('bad arguments are HBASE_BAD_ARGUMENT before anything is sent: %s', (name, build) => {
  expect(build).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
})

test('filters are frozen: one built filter can serve many scans', () => {
  const f = F.valueFilter('EQUAL', F.substring('a'))
  expect(Object.isFrozen(f)).toBe(true)
})
