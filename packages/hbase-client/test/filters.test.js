'use strict'

// Server-side filters (lib/filters.js) on the real HBase: what each keeps, that the
// RegionServer (not the client) drops the rest, heartbeats while a filter finds nothing, and
// rows that arrive in parts.

const { testClient, uniqueTable } = require('./support/hbase')
const { filters: F } = require('../lib')

let client
let scanRpcs = 0
const tables = []

async function table (spec) {
  const name = uniqueTable('filt')
  await client.admin.createTable(name, spec)
  tables.push(name)
  return name
}

async function rows (name, opts) {
  const out = []
  for await (const row of client.scan(name, opts)) out.push(row.row.toString())
  return out
}

beforeAll(() => {
  client = testClient({ onRpc: (e) => { if (e.method === 'Scan') scanRpcs++ } })
})

afterAll(async () => {
  for (const name of tables) await client.admin.deleteTable(name).catch(() => {})
  await client.close()
})

describe('what each filter keeps', () => {
  let t
  const value = (i) => JSON.stringify({ id: String(i), status: i % 4 === 0 ? 404 : 200, name: i % 3 === 0 ? 'ABC' : 'abc' })
  const key = (i) => `r${String(i).padStart(3, '0')}`
  const ids = (predicate) => Array.from({ length: 60 }, (_, i) => i).filter(predicate).map(key)

  beforeAll(async () => {
    t = await table({ families: ['f', 'g'], splits: ['r030'] })
    await client.multiPut(t, Array.from({ length: 60 }, (_, i) => ({ row: key(i), cells: { f: { v: value(i) } } })))
    // A row without f:v, and one where f:v sits beside another column.
    await client.put(t, 'r999', { g: { other: '"id":"4"' } })
    await client.put(t, 'r045', { g: { other: 'x' } })
  })

  test('a substring ignores case; a regex does not (unless asked)', async () => {
    expect(await rows(t, { filter: F.valueFilter('EQUAL', F.substring('"name":"abc"')) })).toEqual([...ids(() => true)])
    expect(await rows(t, { filter: F.valueFilter('EQUAL', F.regex('"name":"ABC"')) })).toEqual(ids((i) => i % 3 === 0))
    expect(await rows(t, { filter: F.valueFilter('EQUAL', F.regex('"name":"abc"', { caseInsensitive: true })) })).toEqual(ids(() => true))
  })

  test('"id":"4" with its closing quote keeps id 4 and not 40-49; a regex with a digit boundary keeps 404 and not 4040', async () => {
    expect(await rows(t, { columns: ['f:v'], filter: F.valueFilter('EQUAL', F.substring('"id":"4"')) })).toEqual([key(4)])
    expect(await rows(t, { filter: F.singleColumnValueFilter('f:v', 'EQUAL', F.regex('"status":404(?![0-9])')) })).toEqual(
      ids((i) => i % 4 === 0)
    )
  })

  test('a value filter tests every cell; a single-column value filter tests one column and keeps or drops the whole row', async () => {
    // ValueFilter: g:other of r999 holds the text too.
    expect(await rows(t, { filter: F.valueFilter('EQUAL', F.substring('"id":"4"')) })).toEqual([key(4), 'r999'])
    const scvf = F.singleColumnValueFilter('f:v', 'EQUAL', F.substring('"id":"45"'))
    const kept = []
    for await (const row of client.scan(t, { filter: scvf })) kept.push(row)
    expect(kept.map((r) => r.row.toString())).toEqual(['r045'])
    expect(kept[0].cells.map((c) => `${c.family}:${c.qualifier}`)).toEqual(['f:v', 'g:other'])
    // A row without the column: dropped by default, kept when filterIfMissing is false.
    const missingKept = F.singleColumnValueFilter('f:v', 'EQUAL', F.substring('"id":"45"'), { filterIfMissing: false })
    expect(await rows(t, { filter: missingKept })).toEqual(['r045', 'r999'])
  })

  test('compare ops and binary comparators', async () => {
    expect(await rows(t, { filter: F.valueFilter('EQUAL', F.binaryPrefix('{"id":"5')) })).toEqual([
      key(5),
      ...ids((i) => i >= 50 && i < 60)
    ])
    expect(await rows(t, { columns: ['f:v'], filter: F.valueFilter('NOT_EQUAL', F.substring('"status":200')) })).toEqual(
      ids((i) => i % 4 === 0)
    )
    expect(await rows(t, { columns: ['f:v'], filter: F.valueFilter('EQUAL', F.binary(value(7))) })).toEqual([key(7)])
    expect(await rows(t, { columns: ['f:v'], filter: F.valueFilter('GREATER', F.binary('{"id":"8')) })).toEqual([key(8), key(9)])
  })

  test('allOf needs every filter, anyOf one; counts, limits and keys-only scans take a filter too', async () => {
    const is404 = F.singleColumnValueFilter('f:v', 'EQUAL', F.regex('"status":404(?![0-9])'))
    const isABC = F.singleColumnValueFilter('f:v', 'EQUAL', F.regex('"name":"ABC"'))
    expect(await rows(t, { filter: F.allOf(is404, isABC) })).toEqual(ids((i) => i % 12 === 0))
    expect(await rows(t, { filter: F.anyOf(is404, isABC) })).toEqual(ids((i) => i % 4 === 0 || i % 3 === 0))
    expect(await client.count(t, { filter: is404 })).toBe(15)
    expect(await rows(t, { filter: is404, limit: 3, caching: 2 })).toEqual(ids((i) => i % 4 === 0).slice(0, 3))
    const keysOnly = []
    for await (const row of client.scan(t, { filter: is404, keysOnly: true })) keysOnly.push(row)
    expect(keysOnly).toHaveLength(15)
    expect(keysOnly.every((r) => r.cells.length === 1 && r.cells[0].value.length === 0)).toBe(true)
  })
})

test('the RegionServer drops what a filter rejects: the same scan takes far fewer RPCs and returns only the matches', async () => {
  const t = await table({ families: ['f'], splits: ['k'] })
  await client.multiPut(
    t,
    Array.from({ length: 2000 }, (_, i) => ({
      row: `${i % 2 ? 'a' : 'z'}${String(i).padStart(5, '0')}`,
      cells: { f: { v: `{"id":"${i}"}` } }
    }))
  )
  scanRpcs = 0
  expect(await rows(t, { caching: 50 })).toHaveLength(2000)
  const unfiltered = scanRpcs
  scanRpcs = 0
  const matches = await rows(t, { caching: 50, filter: F.valueFilter('EQUAL', F.regex('"id":"1[0-9]"')) })
  const filtered = scanRpcs
  expect(matches.sort()).toEqual(
    Array.from({ length: 10 }, (_, i) => `${(10 + i) % 2 ? 'a' : 'z'}${String(10 + i).padStart(5, '0')}`).sort()
  )
  expect(unfiltered).toBeGreaterThanOrEqual(40) // 2000 rows, 50 a call
  expect(filtered).toBeLessThanOrEqual(4) // one call per region, plus at most a last empty page each
})

// HBase answers a scan that finds nothing at half the call's timeout: the other half is the
// slack for the JVM and this process to be scheduled, which a loaded machine (npm test runs two
// lanes) needs; 150 ms of a 300 ms call was overrun there. The scan lasts several timeouts.
const RPC_TIMEOUT_MS = 1200
const CHUNKS = 12

test('a filter that keeps almost nothing answers in heartbeats within a short RPC timeout, never timing out', async () => {
  const t = await table({ families: ['f'] })
  const padding = 'p'.repeat(80)
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    const puts = Array.from({ length: 10000 }, (_, i) => ({
      row: String(chunk * 10000 + i).padStart(6, '0'),
      cells: { f: { v: `{"id":"${chunk * 10000 + i}","pad":"${padding}"}` } }
    }))
    expect((await client.multiPut(t, puts)).filter(Boolean)).toEqual([])
  }
  let rpcs = 0
  const failed = []
  const short = testClient({
    rpcTimeout: RPC_TIMEOUT_MS,
    onRpc: (e) => {
      if (e.method !== 'Scan') return
      rpcs++
      if (e.error) failed.push(e.error.code)
    }
  })
  try {
    const kept = []
    // A slow regex (`.*` backtracks over each value): the one region takes seconds to scan,
    // and one row matches.
    const last = String(CHUNKS * 10000 - 1)
    const started = Date.now()
    for await (const row of short.scan(t, { filter: F.valueFilter('EQUAL', F.regex(`.*"id":"${last}"`)) })) kept.push(row.row.toString())
    expect(kept).toEqual([last.padStart(6, '0')])
    expect(Date.now() - started).toBeGreaterThan(RPC_TIMEOUT_MS) // one call without heartbeats would time out
    // The server answered at half the call's timeout each time, within it. (Without heartbeats
    // each call times out, is retried from the start, and the scan fails HBASE_TIMEOUT.)
    expect(failed).toEqual([])
    expect(rpcs).toBeGreaterThan(1)
  } finally {
    await short.close()
  }
})

test('a row larger than maxResultSize arrives in parts and is joined into one row', async () => {
  const t = await table({ families: ['f'] })
  const cells = Object.fromEntries(Array.from({ length: 20 }, (_, q) => [`q${String(q).padStart(2, '0')}`, `${'v'.repeat(500)}${q}`]))
  await client.multiPut(t, ['r1', 'r2', 'r3'].map((row) => ({ row, cells: { f: cells } })))
  scanRpcs = 0
  const got = []
  for await (const row of client.scan(t, { maxResultSize: 1200 })) got.push(row)
  expect(got.map((r) => r.row.toString())).toEqual(['r1', 'r2', 'r3'])
  for (const row of got) expect(row.cells.map((c) => [c.qualifier, c.value.toString()])).toEqual(Object.entries(cells))
  expect(scanRpcs).toBeGreaterThan(3 * 4) // about two cells a call
})
