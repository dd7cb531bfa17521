'use strict'

// The bounded count of a minute's groups (logging/rollup/group-counter.js): whatever the number
// of distinct ids, no part it hands out holds more than its bound, every group is in exactly
// one part of the partition its id hashes to, and the counts equal a plain count in memory.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const fc = require('fast-check')
const { createGroupCounter, clearSpillLeftovers } = require('../../logging/rollup/group-counter')
const { groupKeyOfValue, groupsOfKeys } = require('../../logging/rollup/group-keys')
const { PARTITIONS, partitionOfId, parseGroup, groupsKey } = require('../../logging/rollup/layout')
const { serializeEntry } = require('../../logging/access-entry')

let spillDir
beforeEach(() => { spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-counter-')) })
afterEach(() => fs.rmSync(spillDir, { recursive: true, force: true }))

/** An access entry's row value, as the sink writes it. */
function value (endpoint, id, status) {
  return Buffer.from(serializeEntry({ ts: 1700000000000, endpoint, id, status, ip: '127.0.0.1', ua: 'jest', ref: null }))
}

/** Feeds the keys of these values; returns the parts and the totals. */
async function count (values, maxGroups) {
  const counter = createGroupCounter({ maxGroups, spillDir })
  for (const v of values) {
    const spilling = counter.add(groupKeyOfValue(v))
    if (spilling) await spilling
  }
  const parts = []
  for await (const part of counter.partitions()) parts.push(part)
  const result = { parts, totals: counter.totals(), spills: counter.spills(), files: fs.readdirSync(spillDir).length }
  await counter.close()
  return result
}

/** Checks the parts against a plain count of the same keys. */
function expectExact ({ parts, totals }, values, maxGroups) {
  const keys = new Map()
  for (const v of values) {
    const key = groupKeyOfValue(v)
    keys.set(key, (keys.get(key) || 0) + 1)
  }
  const plain = groupsOfKeys(keys)
  const seen = new Map()
  let last = -1
  for (const { partition, groups } of parts) {
    expect(groups.size).toBeLessThanOrEqual(maxGroups)
    expect(partition).toBeGreaterThanOrEqual(last) // ascending: a reader can close a partition
    last = partition
    for (const [group, n] of groups) {
      expect(seen.has(group)).toBe(false) // one part only
      expect(partitionOfId(parseGroup(group).id)).toBe(partition)
      seen.set(group, n)
    }
  }
  expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(plain.groups))
  expect(Object.fromEntries(totals)).toEqual(Object.fromEntries(plain.totals))
}

test('a minute that fits is counted in memory: no spill, no file', async () => {
  const values = Array.from({ length: 3000 }, (_, i) => value('sample5', String(i % 400), i % 5 ? 200 : 404))
  const result = await count(values, 1000)
  expect(result.spills).toBe(0)
  expect(result.files).toBe(0)
  expectExact(result, values, 1000)
})

test('30,000 distinct ids under a bound of 300 groups: spilled, split again, exact, every file removed', async () => {
  const values = []
  for (let i = 0; i < 30000; i++) values.push(value(i % 3 ? 'sample5' : 'sample4', `visitor-${i}-${'x'.repeat(30)}`, 200))
  for (let i = 0; i < 2000; i++) values.push(value('sample5', `visitor-${i * 7}-${'x'.repeat(30)}`, 200)) // repeat visitors
  const result = await count(values, 300)
  expect(result.spills).toBeGreaterThan(90)
  // ~470 groups a partition, over the bound: each such file is split again by a hash of its groups.
  expect(result.parts.length).toBeGreaterThan(PARTITIONS)
  expectExact(result, values, 300)
  expect(fs.readdirSync(spillDir)).toEqual([])
})

test('any mix of ids, endpoints, statuses and unreadable rows: exact under any bound', async () => {
  const row = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(fc.constantFrom('sample4', 'sample5'), fc.integer({ min: 0, max: 300 }), fc.constantFrom(200, 204, 404, 99, 5000))
    },
    { weight: 1, arbitrary: fc.constant(null) }
  )
  await fc.assert(fc.asyncProperty(fc.array(row, { maxLength: 800 }), fc.integer({ min: 2, max: 60 }), async (rows, maxGroups) => {
    const values = rows.map((r) => (r ? value(r[0], r[1] === 0 ? null : String(r[1]), r[2]) : Buffer.from('not json')))
    expectExact(await count(values, maxGroups), values, maxGroups)
  }), { numRuns: 40 })
})

test('partitionOfId is part of the stored layout: the same partitions as when the rows were written', () => {
  // Pinned: a change of the hash would leave every stored minute's ids in the wrong rows.
  expect(['', '1', '42', 'visitor-123'].map(partitionOfId)).toEqual(['', '1', '42', 'visitor-123'].map(fnv1a))
  expect(new Set(Array.from({ length: 6400 }, (_, i) => partitionOfId(String(i)))).size).toBe(PARTITIONS)
  expect(groupsKey('beacon_access_log', 10, 60000)).toBe('g/beacon_access_log/0a/0000000060000')
})

/** FNV-1a 32 of UTF-16 code units, written out independently, masked to the partitions. */
function fnv1a (text) {
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) {
    hash = (hash ^ text.charCodeAt(i)) >>> 0
    hash = Number((BigInt(hash) * 16777619n) % 4294967296n)
  }
  return hash % PARTITIONS
}

test('spill folders of processes that ended are removed; a live one is kept', () => {
  const dead = path.join(spillDir, '999999999-abc')
  const live = path.join(spillDir, `${process.pid}-def`)
  fs.mkdirSync(dead)
  fs.mkdirSync(live)
  clearSpillLeftovers(spillDir)
  expect(fs.readdirSync(spillDir)).toEqual([path.basename(live)])
})
