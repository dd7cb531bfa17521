'use strict'

const { createBloomFilter, hashPair } = require('../../../lib/toggles/bloom')

const ids = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

test('never says no to a string it holds, and yes to others near its false-positive rate', () => {
  const filter = createBloomFilter({ capacity: 20000, falsePositiveRate: 0.01 })
  const members = ids('visitor-', 20000)
  for (const id of members) filter.add(id)
  expect(members.filter((id) => !filter.has(id))).toEqual([])
  const others = ids('bot-', 100000)
  const rate = others.filter((id) => filter.has(id)).length / others.length
  // Sized for 1 % at capacity: a power-of-two table makes it no worse, and chance keeps it near.
  expect(rate).toBeLessThan(0.015)
  expect(rate).toBeGreaterThan(0)
  // A string it seemed to hold already is not counted again: size() is a count from below.
  expect(filter.size()).toBeLessThanOrEqual(20000)
  expect(filter.size()).toBeGreaterThan(0.98 * 20000)
})

test('grows past its capacity without a wrong no, its false positives still bounded', () => {
  const filter = createBloomFilter({ capacity: 1000, falsePositiveRate: 0.01 })
  const members = ids('id', 50000)
  for (const id of members) filter.add(id)
  expect(members.filter((id) => !filter.has(id))).toEqual([])
  // Layers of 1,000, 4,000, 16,000 and 64,000: at most one false positive rate per layer.
  const others = ids('other', 100000)
  expect(others.filter((id) => filter.has(id)).length / others.length).toBeLessThan(0.04)
  expect(filter.bytes()).toBeGreaterThan(0)
})

test('a repeated string is held once', () => {
  const filter = createBloomFilter({ capacity: 10, falsePositiveRate: 0.01 })
  for (let i = 0; i < 100; i++) filter.add('same')
  expect(filter.size()).toBe(1)
  expect(filter.has('same')).toBe(true)
})

test('refuses a capacity or rate it cannot size for', () => {
  expect(() => createBloomFilter({ capacity: 0, falsePositiveRate: 0.01 })).toThrow(RangeError)
  expect(() => createBloomFilter({ capacity: 10, falsePositiveRate: 1 })).toThrow(RangeError)
})

test('hashes are 32-bit, the second odd, and differ between near strings', () => {
  const [a, b] = hashPair('abc')
  expect(a >>> 0).toBe(a)
  expect(b % 2).toBe(1)
  expect(hashPair('abd')).not.toEqual(hashPair('abc'))
})
