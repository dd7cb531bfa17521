'use strict'

// The LRU layer over the real HBase source, with a fake clock and counted HBase reads.

const { testClient, uniqueTable } = require('../../support/hbase')
const { createHBaseSource } = require('../../../lib/toggles/hbase-source')
const { createToggleStore } = require('../../../lib/toggles/store')
const { createConfigCache } = require('../../../lib/toggles/cache')

let admin
let table

beforeAll(async () => {
  admin = testClient()
  table = uniqueTable('cache')
  await admin.admin.createTable(table, { families: ['c'] })
  await admin.put(table, 'a', { c: { json: JSON.stringify({ v: 1 }) } })
  await admin.put(table, 'broken', { c: { json: 'not json' } })
})

afterAll(async () => {
  await admin.admin.deleteTable(table).catch(() => {})
  await admin.close()
})

function setup (cacheOptions = {}) {
  const reads = []
  const client = testClient({ onRpc: (e) => { if (e.method === 'Get' || e.method === 'Multi') reads.push(e) } })
  const invalid = []
  const source = createHBaseSource({
    store: createToggleStore({ client, table, family: 'c', qualifier: 'json' }),
    defaultConfig: { d: true },
    onInvalid: (id, reason) => invalid.push(id)
  })
  const clock = { t: 1000 }
  const outcomes = []
  const cache = createConfigCache({
    source,
    max: 100,
    ttlMs: 1000,
    staleWhileRevalidateMs: 5000,
    maxStaleMs: 60000,
    negativeTtlMs: 500,
    now: () => clock.t,
    onOutcome: (o) => outcomes.push(o),
    ...cacheOptions
  })
  return { client, cache, clock, reads, outcomes, invalid }
}

const isPromise = (x) => x && typeof x.then === 'function'

test('fresh hits are synchronous; stale entries are served while one refresh runs', async () => {
  const { client, cache, clock, reads } = setup()
  try {
    const first = await cache.lookup('a')
    expect(first.found).toBe(true)
    expect(JSON.parse(first.json)).toEqual({ v: 1 })
    expect(reads).toHaveLength(1)

    clock.t += 999
    const hit = cache.lookup('a')
    expect(isPromise(hit)).toBe(false)
    expect(hit).toBe(first)
    expect(reads).toHaveLength(1)

    await admin.put(table, 'a', { c: { json: JSON.stringify({ v: 2 }) } })
    clock.t += 2 // now stale (age 1001 ms)
    const stale = cache.lookup('a')
    expect(isPromise(stale)).toBe(false)
    expect(JSON.parse(stale.json)).toEqual({ v: 1 })
    cache.lookup('a') // a second stale read does not start a second refresh
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(reads).toHaveLength(2)
    const refreshed = cache.lookup('a')
    expect(isPromise(refreshed)).toBe(false)
    expect(JSON.parse(refreshed.json)).toEqual({ v: 2 })
    expect(refreshed.etag).not.toBe(first.etag)

    clock.t += 10000 // past ttl + stale-while-revalidate: the lookup waits for the store
    const expired = cache.lookup('a')
    expect(isPromise(expired)).toBe(true)
    expect(JSON.parse((await expired).json)).toEqual({ v: 2 })
    expect(reads).toHaveLength(3)
    expect(cache.stats().miss).toBe(2) // the expired lookup counts as a miss: one outcome per lookup
  } finally {
    await client.close()
  }
})

test('absent ids are negatively cached with their own TTL; non-object cells serve the default', async () => {
  const { client, cache, clock, reads, outcomes, invalid } = setup()
  try {
    const absent = await cache.lookup('nobody')
    expect(absent.found).toBe(false)
    expect(JSON.parse(absent.json)).toEqual({ d: true })
    expect(cache.lookup('nobody')).toBe(absent)
    expect(outcomes).toEqual(['miss', 'negative_hit'])
    clock.t += 501
    expect(cache.lookup('nobody')).toBe(absent) // stale negative entry, refreshed in background
    expect(outcomes[2]).toBe('stale')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(reads).toHaveLength(2)

    const broken = await cache.lookup('broken')
    expect(broken.found).toBe(false)
    expect(invalid).toEqual(['broken'])
  } finally {
    await client.close()
  }
})

test('1,000 concurrent misses on one id make one HBase read', async () => {
  const { client, cache, reads } = setup()
  try {
    const all = await Promise.all(Array.from({ length: 1000 }, () => cache.lookup('a')))
    expect(new Set(all).size).toBe(1)
    expect(reads).toHaveLength(1)
  } finally {
    await client.close()
  }
})

test('store unreachable: stale data serves up to maxStale, then the error surfaces', async () => {
  const { client, cache, clock, outcomes } = setup()
  const entry = await cache.lookup('a')
  await client.close() // every store read now fails with HBASE_CLIENT_CLOSED, as in an outage
  clock.t += 30000 // expired, but younger than maxStale (60 s)
  expect(await cache.lookup('a')).toBe(entry)
  expect(outcomes).toContain('stale_on_error')
  clock.t += 31000 // older than maxStale
  await expect(cache.lookup('a')).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
})

test('lookups in one tick share multi-get RPCs; absent and present ids both resolve', async () => {
  const { client, reads } = setup()
  const source = createHBaseSource({ store: createToggleStore({ client, table, family: 'c', qualifier: 'json' }), defaultConfig: {} })
  try {
    reads.length = 0
    const ids = ['a', 'x1', 'x2', 'a', 'x3']
    const entries = await Promise.all(ids.map((id) => source.lookup(id)))
    expect(entries.map((e) => e.found)).toEqual([true, false, false, true, false])
    expect(reads).toHaveLength(1)
    expect(reads[0].method).toBe('Multi')
  } finally {
    await client.close()
  }
})

test('a flood of unknown ids read from HBase leaves the known id cached: no HBase read for it after 5,000 of them', async () => {
  const { client, cache, reads } = setup({ max: 50, maxNegative: 5 })
  try {
    expect((await cache.lookup('a')).found).toBe(true)
    for (let from = 0; from < 5000; from += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, i) => cache.lookup(`flood-${from + i}`)))
    }
    const readsBefore = reads.length
    const a = cache.lookup('a')
    expect(isPromise(a)).toBe(false) // a synchronous hit: still cached
    expect(a.found).toBe(true)
    expect(reads.length).toBe(readsBefore)
    expect(cache.stats()).toMatchObject({ size: 6, negativeSize: 5 })
  } finally {
    await client.close()
  }
})
