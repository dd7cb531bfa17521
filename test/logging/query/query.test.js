'use strict'

// The access log's read side (logging/query/) against the real HBase: known rows written with
// the real client into a table of our own, laid out as the sink lays them out (16 salt buckets
// over 8 regions, one bucket split once more so its rows live in two regions), read back.

const { testClient, uniqueTable } = require('../../support/hbase')
const { createLogQuery } = require('../../../logging/query')
const { accessLogRowKey, accessLogSplitKeys } = require('../../../logging/access-log-layout')
const { accessEntry, eventEntry, serializeEntry } = require('../../../logging/access-entry')

const BUCKETS = 16
const FROM = Date.UTC(2025, 0, 15, 10, 0, 0)
const TO = FROM + 60 * 60 * 1000
const IDS = ['4', '42', 'A4', 'ab', 'AB', '7']
const STATUSES = [200, 200, 200, 304, 404, 500]

let client
let table
let query
/** @type {Array<{ ts: number, key: string, entry: object|null }>} what was written inside [FROM, TO) */
const written = []

/** The entry of a cell as the read side defines it: a JSON object, else none (unreadable). */
function entryOf (value) {
  try {
    const parsed = JSON.parse(value)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null
  } catch {
    return null
  }
}

const inOrder = (a, b) => a.ts - b.ts || (a.key < b.key ? -1 : 1)

function expected (predicate = () => true) {
  return written.filter((r) => predicate(r.entry)).sort(inOrder)
}

async function scanAll (q) {
  const out = []
  for await (const record of query.scan({ from: FROM, to: TO, ...q })) out.push(record)
  return out
}

beforeAll(async () => {
  client = testClient()
  table = uniqueTable('logq')
  // Bucket 03 splits at the half hour: its rows of the range are in two regions.
  const splits = [...accessLogSplitKeys(BUCKETS, 8), `03${FROM + 30 * 60 * 1000}`].sort()
  await client.admin.createTable(table, { families: ['l'], splits })
  const puts = []
  const put = (bucket, ts, suffix, value, inRange = true) => {
    const key = accessLogRowKey(bucket, ts, suffix)
    puts.push({ row: key, cells: { l: { e: value } } })
    if (inRange) written.push({ ts, key, entry: entryOf(value) })
  }
  for (let i = 0; i < 2400; i++) {
    // Times repeat across buckets (i and i + 1 share one every 3 rows): ties break by row key.
    const ts = FROM + Math.floor(i / 3) * 4000 + (i % 3 === 2 ? 1 : 0)
    const entry = accessEntry({
      ts,
      endpoint: i % 5 === 0 ? 'sample4' : 'sample5',
      id: IDS[i % IDS.length],
      status: STATUSES[i % STATUSES.length],
      ms: 0.5,
      ip: '127.0.0.1',
      ua: `ua ${i}, "quoted"`,
      ref: null
    })
    put((i * 7) % BUCKETS, ts, `w1-${i}`, serializeEntry(entry))
  }
  for (let i = 0; i < 30; i++) {
    put(
      i % BUCKETS,
      FROM + i * 100000 + 17,
      `ev-${i}`,
      serializeEntry(
        eventEntry({
          ts: FROM + i * 100000 + 17,
          endpoint: 'sample5',
          id: IDS[i % IDS.length],
          event: 'exposure',
          variant: null,
          ip: null,
          ua: null,
          ref: null
        })
      )
    )
  }
  put(5, FROM + 1234, 'bad-1', 'not json')
  put(9, FROM + 99999, 'bad-2', '[1,2]')
  // Just outside the range, in every bucket: at TO (excluded) and 1 ms before FROM.
  for (let b = 0; b < BUCKETS; b++) {
    put(b, TO, `out-${b}`, serializeEntry(accessEntry({ ts: TO, endpoint: 'sample5', id: '4', status: 200, ms: 1 })), false)
    put(b, FROM - 1, `before-${b}`, serializeEntry(accessEntry({ ts: FROM - 1, endpoint: 'sample5', id: '4', status: 200, ms: 1 })), false)
  }
  expect((await client.multiPut(table, puts)).filter(Boolean)).toEqual([])
  query = createLogQuery({ client, table, buckets: BUCKETS, maxIdLength: 64, scanCaching: 100, countCaching: 300 })
})

afterAll(async () => {
  await client.admin.deleteTable(table).catch(() => {})
  await client.close()
})

test('the table is pre-split: the range lives in more regions than there are region ranges of buckets', async () => {
  const regions = await client.regions(table)
  expect(regions).toHaveLength(9)
  const [lo, hi] = [`03${FROM}`, `03${TO}`]
  const holding03 = regions.filter((r) => r.startKey.toString() < hi && (r.endKey.length === 0 || r.endKey.toString() > lo))
  expect(holding03).toHaveLength(2)
})

describe('scan', () => {
  test('every row of [from, to), in time order across all buckets and regions, ties by row key', async () => {
    const rows = await scanAll({})
    expect(rows.map((r) => r.key)).toEqual(expected().map((r) => r.key))
    expect(rows.length).toBe(2400 + 30 + 2)
    expect(new Set(rows.map((r) => r.key.slice(0, 2))).size).toBe(BUCKETS)
    expect(rows.filter((r) => r.key.startsWith('03')).length).toBeGreaterThan(100)
    // Unreadable cells come back as rows without an entry.
    expect(rows.filter((r) => r.entry === null).map((r) => r.key.slice(15))).toEqual(['bad-1', 'bad-2'])
    expect(query.stats().openScans).toBe(0)
  })

  test.each([
    ['id 4: not 42, A4', { id: '4' }, (e) => e.id === '4'],
    ['id ab: not AB (the server-side substring ignores case; Node does not)', { id: 'ab' }, (e) => e.id === 'ab'],
    ['id AB', { id: 'AB' }, (e) => e.id === 'AB'],
    ['endpoint sample4', { endpoint: 'sample4' }, (e) => e.endpoint === 'sample4'],
    ['status 404', { status: 404 }, (e) => e.status === 404],
    [
      'status 200 and id 42 on sample5',
      { status: 200, id: '42', endpoint: 'sample5' },
      (e) => e.status === 200 && e.id === '42' && e.endpoint === 'sample5'
    ],
    ['an id nobody has', { id: 'nobody' }, () => false]
  ])('filter: %s', async (name, filters, predicate) => {
    const rows = await scanAll(filters)
    const want = expected((e) => e !== null && predicate(e))
    expect(rows.map((r) => r.key)).toEqual(want.map((r) => r.key))
    if (name !== 'an id nobody has') expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect(row.entry).toEqual(written.find((w) => w.key === row.key).entry)
  })

  test('limit, and pages continued with `after` (the key of the last row) add up to the whole scan', async () => {
    const all = await scanAll({ id: '7' })
    expect((await scanAll({ id: '7', limit: 5 })).map((r) => r.key)).toEqual(all.slice(0, 5).map((r) => r.key))
    const paged = []
    let after
    for (;;) {
      const page = await scanAll({ id: '7', limit: 37, ...(after ? { after } : {}) })
      paged.push(...page)
      if (page.length < 37) break
      after = page[page.length - 1].key
    }
    expect(paged.map((r) => r.key)).toEqual(all.map((r) => r.key))
  })

  test('a cursor on a time shared by rows of several buckets continues with the next of them', async () => {
    const all = await scanAll({})
    const i = all.findIndex((r, j) => j > 0 && r.ts === all[j - 1].ts)
    expect(i).toBeGreaterThan(0)
    const rest = await scanAll({ after: all[i - 1].key, limit: 3 })
    expect(rest.map((r) => r.key)).toEqual(all.slice(i, i + 3).map((r) => r.key))
    // The last row's key: nothing after it; a key past the range: nothing either.
    expect(await scanAll({ after: all[all.length - 1].key })).toEqual([])
    expect(await scanAll({ after: accessLogRowKey(0, TO + 5, 'x') })).toEqual([])
  })

  test('stopping early closes every bucket\'s scan: none is left open once the loop has ended', async () => {
    let started = 0
    let ended = 0
    const observed = {
      scan (t, opts) {
        started++
        const rows = client.scan(t, opts)
        return (async function * () {
          try {
            yield * rows
          } finally {
            ended++
          }
        })()
      }
    }
    const q = createLogQuery({ client: observed, table, buckets: BUCKETS, maxIdLength: 64, scanCaching: 50 })
    let n = 0
    for await (const row of q.scan({ from: FROM, to: TO })) {
      expect(row.ts).toBeGreaterThanOrEqual(FROM)
      if (++n === 10) break
    }
    expect({ started, ended, open: q.stats().openScans }).toEqual({ started: BUCKETS, ended: BUCKETS, open: 0 })
  })

  test('the range is exact at both ends, to the millisecond', async () => {
    const rows = []
    for await (const r of query.scan({ from: FROM - 1, to: FROM + 1 })) rows.push(r)
    expect(rows.map((r) => r.key.slice(15)).sort()).toEqual(
      [...Array.from({ length: BUCKETS }, (_, b) => `before-${b}`), 'w1-0', 'w1-1'].sort()
    )
    const none = []
    for await (const r of query.scan({ from: TO - 1, to: TO })) none.push(r)
    expect(none).toEqual([])
  })
})

describe('count', () => {
  test('the total equals the rows written in the range, with and without filters', async () => {
    expect(await query.count({ from: FROM, to: TO })).toEqual({ total: 2432, scanned: 2432 })
    const id4 = await query.count({ from: FROM, to: TO, id: '4' })
    expect(id4.total).toBe(expected((e) => e && e.id === '4').length)
    // The server-side filter narrowed the rows before Node checked them.
    expect(id4.scanned).toBeLessThan(2432 / 2)
    expect((await query.count({ from: FROM, to: TO, id: 'ab' })).total).toBe(expected((e) => e && e.id === 'ab').length)
    expect((await query.count({ from: FROM, to: TO, status: 500, endpoint: 'sample5' })).total).toBe(
      expected((e) => e && e.status === 500 && e.endpoint === 'sample5').length
    )
  })

  test.each(['endpoint', 'id', 'status', 'minute'])('--by %s: the groups add up to the rows, each exact', async (by) => {
    const result = await query.count({ from: FROM, to: TO, by })
    const want = new Map()
    for (const r of expected()) {
      const key = by === 'minute'
        ? new Date(r.ts - (r.ts % 60000)).toISOString()
        : r.entry === null ? '(unreadable)' : r.entry[by] === undefined || r.entry[by] === null ? '(none)' : String(r.entry[by])
      want.set(key, (want.get(key) || 0) + 1)
    }
    expect(result.total).toBe(2432)
    expect(Object.fromEntries(result.groups.map((g) => [g.key, g.count]))).toEqual(Object.fromEntries(want))
    if (by === 'minute') {
      expect(result.groups.map((g) => g.key)).toEqual([...want.keys()].sort())
    } else {
      const counts = result.groups.map((g) => g.count)
      expect(counts).toEqual([...counts].sort((a, b) => b - a))
    }
  })

  test('by status with a filter: events have no status, unreadable rows never match a filter', async () => {
    const result = await query.count({ from: FROM, to: TO, id: '4', by: 'status' })
    const events = expected((e) => e && e.id === '4' && e.event).length
    expect(events).toBeGreaterThan(0)
    expect(result.groups.find((g) => g.key === '(none)').count).toBe(events)
    expect(result.groups.find((g) => g.key === '(unreadable)')).toBeUndefined()
  })

  test('an aborted count stops its scans and rejects with the reason', async () => {
    const controller = new AbortController()
    const reason = new Error('client went away')
    let rows = 0
    let scans = 0
    // The real client; the abort comes with the 100th row read.
    const observed = {
      async * scan (t, opts) {
        scans++
        for await (const row of client.scan(t, opts)) {
          if (++rows === 100) controller.abort(reason)
          yield row
        }
      }
    }
    const q = createLogQuery({ client: observed, table, buckets: BUCKETS, maxIdLength: 64, countCaching: 20, countConcurrency: 2 })
    await expect(q.count({ from: FROM, to: TO, by: 'id' }, { signal: controller.signal })).rejects.toBe(reason)
    expect(q.stats().openScans).toBe(0)
    // The two buckets being read stopped at once; no other bucket was started.
    expect(scans).toBe(2)
    expect(rows).toBeLessThan(100 + 2 * 20)
  })

  test('a table that does not exist fails typed (HBASE_TABLE_NOT_FOUND), for scan and count, with no scan left open', async () => {
    const missing = createLogQuery({ client, table: uniqueTable('nope'), buckets: 4, maxIdLength: 64 })
    await expect(missing.count({ from: FROM, to: TO })).rejects.toMatchObject({ code: 'HBASE_TABLE_NOT_FOUND' })
    await expect(
      (async () => {
        for await (const r of missing.scan({ from: FROM, to: TO })) expect(r).toBeUndefined()
      })()
    ).rejects.toMatchObject({ code: 'HBASE_TABLE_NOT_FOUND' })
    expect(missing.stats().openScans).toBe(0)
  })
})
