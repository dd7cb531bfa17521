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

  test('column prefixes keep only the cells whose qualifier starts with one of them', async () => {
    const wide = await table({ families: ['f'] })
    const qualifiers = ['["a","1","2xx"]', '["a","1","2xx","bot"]', '["a","10","2xx"]', '["a","2","4xx"]', '["b","1","2xx"]']
    await client.put(wide, 'w', { f: Object.fromEntries(qualifiers.map((q, i) => [q, String(i)])) })
    const cells = async (prefixes) => {
      const out = []
      for await (const row of client.scan(wide, { filter: F.columnPrefixes(prefixes) })) {
        for (const cell of row.cells) out.push(cell.qualifier)
      }
      return out
    }
    // Given out of order: the builder sorts them as HBase requires. Cells come in byte order.
    expect(await cells(['["b","1",', '["a","1",'])).toEqual([qualifiers[1], qualifiers[0], qualifiers[4]])
    expect(await cells(['["a","2",'])).toEqual([qualifiers[3]])
    expect(await cells(['["c",'])).toEqual([])
    expect(() => F.columnPrefixes([])).toThrow(/at least one/)
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
// lanes) needs; 150 ms of a 300 ms call was overrun there. The scan must last several timeouts
// for the test to mean anything, and how long it lasts depends on the machine: the table grows
// until a scan with a long timeout takes three of them.
const RPC_TIMEOUT_MS = 1200
const CHUNK_ROWS = 10000
const MAX_CHUNKS = 90

test('a filter that keeps almost nothing answers in heartbeats within a short RPC timeout, never timing out', async () => {
  const t = await table({ families: ['f'] })
  const padding = 'p'.repeat(80)
  let chunks = 0
  const grow = async (n) => {
    for (const end = Math.min(MAX_CHUNKS, chunks + n); chunks < end; chunks++) {
      const puts = Array.from({ length: CHUNK_ROWS }, (_, i) => ({
        row: String(chunks * CHUNK_ROWS + i).padStart(6, '0'),
        cells: { f: { v: `{"id":"${chunks * CHUNK_ROWS + i}","pad":"${padding}"}` } }
      }))
      expect((await client.multiPut(t, puts)).filter(Boolean)).toEqual([])
    }
  }
  // A slow regex (`.*` backtracks over each value): the one region takes seconds to scan, and
  // one row (the first) matches.
  const slow = F.valueFilter('EQUAL', F.regex('.*"id":"0"'))
  const scan = async (c) => {
    const kept = []
    const started = Date.now()
    for await (const row of c.scan(t, { filter: slow })) kept.push(row.row.toString())
    expect(kept).toEqual(['000000'])
    return Date.now() - started
  }
  await grow(12)
  for (let round = 0; round < 5; round++) {
    const took = await scan(client)
    if (took >= 3 * RPC_TIMEOUT_MS || chunks >= MAX_CHUNKS) break
    await grow(Math.ceil(chunks * (3.5 * RPC_TIMEOUT_MS / took - 1)))
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
    expect(await scan(short)).toBeGreaterThan(RPC_TIMEOUT_MS) // one call without heartbeats would time out
    // The server answered at half the call's timeout each time, within it. (Without heartbeats
    // each call times out, is retried from the start, and the scan fails HBASE_TIMEOUT.)
    expect(failed).toEqual([])
    expect(rpcs).toBeGreaterThan(1)
  } finally {
    await short.close()
  }
})
