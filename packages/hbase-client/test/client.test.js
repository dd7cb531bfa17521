'use strict'

const net = require('node:net')
const { setTimeout: sleep } = require('node:timers/promises')
const { testClient, uniqueTable, bootstrap } = require('./support/hbase')
const { createHBaseClient, HBaseError, findCell } = require('../lib')

let client
const created = []

async function createTable (prefix, spec) {
  const name = typeof prefix === 'string' && prefix.startsWith('t_') ? prefix : uniqueTable(prefix)
  await client.admin.createTable(name, spec)
  created.push(name)
  return name
}

// A server that accepts connections and never answers: calls to it stay in flight.
async function blackHole () {
  const sockets = new Set()
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}) })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${server.address().port}`,
    sockets,
    close () {
      for (const s of sockets) s.destroy()
      server.close()
    }
  }
}

beforeAll(() => {
  client = testClient()
})

afterAll(async () => {
  for (const table of created) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
})

describe('single-row operations', () => {
  let table
  beforeAll(async () => {
    table = await createTable('ops', { families: ['f', 'g'] })
  })

  test('put, get, get of selected columns, delete', async () => {
    await client.put(table, 'row1', { f: { a: 'alpha', b: Buffer.from([0, 1, 2]) }, g: { c: '3' } })
    const row = await client.get(table, 'row1')
    expect(row.row.toString()).toBe('row1')
    expect(findCell(row, 'f', 'a').value.toString()).toBe('alpha')
    expect(findCell(row, 'f', 'b').value).toEqual(Buffer.from([0, 1, 2]))
    expect(findCell(row, 'g', 'c').value.toString()).toBe('3')
    expect(findCell(row, 'f', 'a').timestamp).toBeGreaterThan(Date.now() - 60000)

    const onlyG = await client.get(table, 'row1', { families: ['g'] })
    expect(onlyG.cells.map((c) => `${c.family}:${c.qualifier}`)).toEqual(['g:c'])
    const oneColumn = await client.get(table, 'row1', { columns: ['f:b'] })
    expect(oneColumn.cells.map((c) => `${c.family}:${c.qualifier}`)).toEqual(['f:b'])

    await client.delete(table, 'row1', { columns: ['f:a'] })
    expect(findCell(await client.get(table, 'row1'), 'f', 'a')).toBeUndefined()
    await client.delete(table, 'row1')
    expect(await client.get(table, 'row1')).toBeNull()
  })

  test('an absent row reads as null', async () => {
    expect(await client.get(table, 'never-written')).toBeNull()
  })

  test('keys and values with odd bytes round-trip exactly', async () => {
    const keys = [
      'ключ/日本語 ✓', 'a/b/c', 'a+b', 'with space', '%2F%00', '',
      Buffer.from([0x00]), Buffer.from([0xff, 0xfe, 0x00, 0x2c, 0x2c]), Buffer.from(',99999999999999')
    ].filter((k) => k.length > 0)
    for (const [i, key] of keys.entries()) {
      await client.put(table, key, { f: { q: Buffer.from([i, 0, 255]) } })
    }
    for (const [i, key] of keys.entries()) {
      const row = await client.get(table, key)
      expect(row).not.toBeNull()
      expect(row.row).toEqual(Buffer.isBuffer(key) ? key : Buffer.from(key))
      expect(findCell(row, 'f', 'q').value).toEqual(Buffer.from([i, 0, 255]))
    }
    const many = await client.multiGet(table, keys)
    expect(many.every((r) => r && !(r instanceof Error))).toBe(true)
  })
})

describe('batched operations across regions', () => {
  let table
  const splits = ['2', '4', '6', '8']
  const rows = Array.from({ length: 200 }, (_, i) => `${i % 10}-${String(i).padStart(4, '0')}`)

  beforeAll(async () => {
    table = await createTable('multi', { families: ['f'], splits })
  })

  test('the table has one region per split range', async () => {
    const regions = await client.regions(table)
    expect(regions.map((r) => r.startKey.toString())).toEqual(['', ...splits])
    expect(regions.every((r) => r.server)).toBe(true)
  })

  test('multiPut writes every row, multiGet reads them back in order, absent ids are null', async () => {
    const results = await client.multiPut(table, rows.map((row) => ({ row, cells: { f: { v: `value of ${row}` } } })))
    expect(results).toEqual(rows.map(() => null))
    const wanted = [...rows.slice(0, 50), 'absent-1', ...rows.slice(150), '9-absent']
    const got = await client.multiGet(table, wanted)
    expect(got).toHaveLength(wanted.length)
    got.forEach((row, i) => {
      if (wanted[i].includes('absent')) expect(row).toBeNull()
      else expect(findCell(row, 'f', 'v').value.toString()).toBe(`value of ${wanted[i]}`)
    })
  })

  test('a failing action is reported alone; the rest of the batch is written', async () => {
    const results = await client.multiPut(table, [
      { row: '1-ok', cells: { f: { v: 'x' } } },
      { row: '5-bad', cells: { nofamily: { v: 'x' } } },
      { row: '7-ok', cells: { f: { v: 'y' } } }
    ])
    expect(results[0]).toBeNull()
    expect(results[1]).toBeInstanceOf(HBaseError)
    expect(results[1].code).toBe('HBASE_NO_SUCH_FAMILY')
    expect(results[2]).toBeNull()
    expect(findCell(await client.get(table, '7-ok'), 'f', 'v').value.toString()).toBe('y')
  })

  test('scan pages through all regions in key order, honours start/stop/limit, and count agrees', async () => {
    const seen = []
    for await (const row of client.scan(table, { caching: 7 })) seen.push(row.row.toString())
    const sorted = [...seen].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect(seen).toEqual(sorted)
    expect(seen).toEqual(expect.arrayContaining(rows))
    expect(await client.count(table)).toBe(seen.length)

    const ranged = []
    for await (const row of client.scan(table, { startRow: '3', stopRow: '5', caching: 4 })) ranged.push(row.row.toString())
    expect(ranged).toEqual(sorted.filter((k) => k >= '3' && k < '5'))

    const limited = []
    for await (const row of client.scan(table, { startRow: '1', limit: 25, caching: 10 })) limited.push(row.row.toString())
    expect(limited).toEqual(sorted.filter((k) => k >= '1').slice(0, 25))

    // The same rows an RPC's worth at a time: arrays of at most `caching`, never empty, the limit kept.
    const batches = []
    const scan = client.scanBatches(table, { startRow: '1', limit: 25, caching: 10 })
    for await (const batch of scan) batches.push(batch.map((r) => r.row.toString()))
    expect(batches.flat()).toEqual(limited)
    expect(batches.every((b) => b.length > 0 && b.length <= 10)).toBe(true)
  })

  test('breaking out of a scan closes it and the client stays usable', async () => {
    let n = 0
    for await (const row of client.scan(table, { caching: 3 })) {
      expect(row).toBeTruthy()
      if (++n === 5) break
    }
    expect(n).toBe(5)
    expect(await client.count(table, { startRow: '9', stopRow: '9~' })).toBeGreaterThan(0)
  })
})

describe('region changes under a live client', () => {
  test('after a split, reads and writes reach the daughter regions', async () => {
    const table = await createTable('split', { families: ['f'] })
    const keys = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, '0')}`)
    await client.multiPut(table, keys.map((row) => ({ row, cells: { f: { v: row } } })))
    expect((await client.get(table, 'k080')).row.toString()).toBe('k080') // caches the single region
    await client.admin.splitRegion(table, 'k050')
    const regions = await client.regions(table)
    expect(regions.map((r) => r.startKey.toString())).toEqual(['', 'k050'])
    // The cached parent region is gone: the client must relocate by itself.
    expect(findCell(await client.get(table, 'k080'), 'f', 'v').value.toString()).toBe('k080')
    await client.put(table, 'k099', { f: { v: 'after split' } })
    expect(findCell(await client.get(table, 'k099'), 'f', 'v').value.toString()).toBe('after split')
    const all = await client.multiGet(table, keys)
    expect(all.filter((r) => !r || r instanceof Error)).toHaveLength(0)
    expect(await client.count(table)).toBe(100)
  })

  test('after two regions are merged, reads and writes reach the merged region', async () => {
    const table = await createTable('merge', { families: ['f'], splits: ['m'] })
    const keys = ['a1', 'k1', 'm1', 'z1']
    await client.multiPut(table, keys.map((row) => ({ row, cells: { f: { v: row } } })))
    expect(await client.multiGet(table, keys)).toHaveLength(4) // caches both regions
    await client.admin.mergeRegions((await client.regions(table)).map((r) => r.name))
    expect((await client.regions(table)).map((r) => r.startKey.toString())).toEqual([''])
    // Both cached regions are gone: the client must relocate by itself.
    const rows = await client.multiGet(table, keys)
    expect(rows.map((r) => findCell(r, 'f', 'v').value.toString())).toEqual(keys)
    await client.put(table, 'q1', { f: { v: 'after merge' } })
    expect(findCell(await client.get(table, 'q1'), 'f', 'v').value.toString()).toBe('after merge')
    await expect(client.admin.mergeRegions([(await client.regions(table))[0].name])).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  })

  test('after a region is moved (closed and reopened), the client relocates it', async () => {
    const table = await createTable('move', { families: ['f'] })
    await client.put(table, 'x', { f: { v: '1' } })
    expect(await client.get(table, 'x')).not.toBeNull()
    const [region] = await client.regions(table)
    await client.admin.moveRegion(region.name)
    for (let i = 0; i < 20; i++) {
      await client.put(table, `y${i}`, { f: { v: String(i) } })
      expect(findCell(await client.get(table, `y${i}`), 'f', 'v').value.toString()).toBe(String(i))
    }
  })
})

describe('table names and errors', () => {
  test('a table whose name prefixes another never sees the other table\'s rows', async () => {
    const base = uniqueTable('pre')
    const short = await createTable(base, { families: ['f'] })
    const long = await createTable(`${base}_rest`, { families: ['f'] })
    await client.put(long, 'zzz', { f: { v: 'long' } })
    await client.put(short, 'aaa', { f: { v: 'short' } })
    // A row key beyond the short table's rows must still resolve to the short table's region.
    expect(await client.get(short, 'zzz')).toBeNull()
    expect(findCell(await client.get(short, 'aaa'), 'f', 'v').value.toString()).toBe('short')
    expect(findCell(await client.get(long, 'zzz'), 'f', 'v').value.toString()).toBe('long')
    expect(await client.count(short)).toBe(1)
    await expect(client.get(`${base}_r`, 'zzz')).rejects.toMatchObject({ code: 'HBASE_TABLE_NOT_FOUND' })
  })

  test('a missing table or family gives a clear, typed, non-retried error', async () => {
    const started = Date.now()
    await expect(client.get(uniqueTable('missing'), 'a')).rejects.toMatchObject({
      code: 'HBASE_TABLE_NOT_FOUND',
      message: expect.stringContaining('does not exist')
    })
    const table = await createTable('fam', { families: ['f'] })
    await expect(client.put(table, 'a', { nope: { q: 'v' } })).rejects.toMatchObject({ code: 'HBASE_NO_SUCH_FAMILY' })
    expect(Date.now() - started).toBeLessThan(client.options.operationTimeout)
  })

  test('creating a table twice is HBASE_TABLE_EXISTS; tableExists reports both states', async () => {
    const table = await createTable('twice', { families: ['f'] })
    expect(await client.admin.tableExists(table)).toBe(true)
    await expect(client.admin.createTable(table, { families: ['f'] })).rejects.toMatchObject({ code: 'HBASE_TABLE_EXISTS' })
    expect(await client.admin.tableExists(uniqueTable('absent'))).toBe(false)
  })

  test('bad arguments are rejected before anything is sent', async () => {
    expect(() => createHBaseClient({ bootstrap: [] })).toThrow(/bootstrap/)
    expect(() => createHBaseClient({ bootstrap: 'nohostport' })).toThrow(/host:port/)
    expect(() => createHBaseClient({ bootstrap: bootstrap(), rpcTimeot: 5 })).toThrow(/rpcTimeot/)
    await expect(client.put('t', 'r', {})).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
    await expect(client.get('t', { not: 'bytes' })).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  })
})

describe('bootstrap, timeouts and close', () => {
  test('a dead address first in the bootstrap list is skipped', async () => {
    const c = createHBaseClient({ bootstrap: ['127.0.0.1:1', ...bootstrap()] })
    try {
      await c.ping()
      const table = await createTable('boot', { families: ['f'] })
      await c.put(table, 'r', { f: { q: 'v' } })
      expect(await c.get(table, 'r')).not.toBeNull()
    } finally {
      await c.close()
    }
  })

  test('a server that never answers makes calls fail within the deadline, typed', async () => {
    const hole = await blackHole()
    const c = createHBaseClient({ bootstrap: [hole.address], rpcTimeout: 150, operationTimeout: 700 })
    try {
      const started = Date.now()
      const err = await c.get('any', 'row').catch((e) => e)
      const took = Date.now() - started
      expect(err).toBeInstanceOf(HBaseError)
      expect(err.code).toBe('HBASE_TIMEOUT')
      expect(err.cause.code).toBe('HBASE_META_UNAVAILABLE')
      expect(took).toBeGreaterThanOrEqual(300)
      expect(took).toBeLessThan(2500)
    } finally {
      await c.close()
      hole.close()
    }
  })

  test('close() is idempotent and later calls fail with HBASE_CLIENT_CLOSED', async () => {
    const c = testClient()
    await c.ping()
    const first = c.close()
    expect(c.close()).toBe(first)
    await first
    await expect(c.get('any', 'row')).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
  })

  test('the RPC observer sees each call with its latency', async () => {
    const events = []
    const c = testClient({ onRpc: (e) => events.push(e) })
    try {
      const table = await createTable('obs', { families: ['f'] })
      await c.put(table, 'r', { f: { q: 'v' } })
      await c.get(table, 'r')
      const methods = events.map((e) => e.method)
      expect(methods).toEqual(expect.arrayContaining(['GetMetaRegionLocations', 'Scan', 'Mutate', 'Get']))
      expect(events.every((e) => e.ms >= 0 && typeof e.server === 'string')).toBe(true)
    } finally {
      await c.close()
    }
  })
})

describe('close() lets in-flight operations finish; destroy() aborts them', () => {
  let table
  const puts = Array.from({ length: 60 }, (_, i) => ({
    row: `${i % 2 ? 'r' : 'c'}${String(i).padStart(2, '0')}`,
    cells: { f: { v: String(i) } }
  }))

  beforeAll(async () => {
    table = await createTable('close', { families: ['f'], splits: ['m'] })
    await client.put(table, 'a', { f: { v: 'before' } })
  })

  test('close() lets an in-flight get and multiPut resolve; calls after it reject HBASE_CLIENT_CLOSED', async () => {
    // A cold client: its in-flight calls still have to find meta and the regions after close().
    const c = testClient()
    const get = c.get(table, 'a')
    const written = c.multiPut(table, puts)
    const closing = c.close()
    expect(c.closed).toBe(true)
    expect(c.close()).toBe(closing)
    await expect(c.get(table, 'a')).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    await expect(c.multiPut(table, puts)).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    await expect(c.admin.tableExists(table)).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    await expect(c.scan(table).next()).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    expect(findCell(await get, 'f', 'v').value.toString()).toBe('before')
    expect(await written).toEqual(puts.map(() => null))
    await closing
    await expect(c.ping()).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    expect(await client.count(table)).toBe(puts.length + 1)
  })

  test('a scan started before close() runs to its end, and close() resolves after the loop', async () => {
    await client.multiPut(table, puts)
    const c = testClient()
    const scan = c.scan(table, { caching: 4 })
    const first = await scan.next()
    expect(first.done).toBe(false)
    let closed = false
    const closing = c.close().then(() => { closed = true })
    await sleep(50)
    expect(closed).toBe(false)
    let n = 1
    for await (const row of scan) n += row ? 1 : 0
    expect(n).toBe(puts.length + 1)
    await closing
    expect(closed).toBe(true)
  })

  test('close() waits for an in-flight call that fails by its own deadline, which keeps its own error', async () => {
    const hole = await blackHole()
    const c = createHBaseClient({ bootstrap: [hole.address], rpcTimeout: 150, operationTimeout: 600 })
    try {
      const started = Date.now()
      const get = c.get('any', 'row').catch((e) => e)
      await c.close()
      expect(Date.now() - started).toBeGreaterThanOrEqual(300)
      const err = await get
      expect(err.code).toBe('HBASE_TIMEOUT')
    } finally {
      await c.destroy()
      hole.close()
    }
  })

  test('destroy() rejects in-flight calls with HBASE_CLIENT_CLOSED at once and a waiting close() resolves', async () => {
    const hole = await blackHole()
    const c = createHBaseClient({ bootstrap: [hole.address], rpcTimeout: 10000, operationTimeout: 30000 })
    try {
      const get = c.get('any', 'row').catch((e) => e)
      const written = c.multiPut('any', puts.slice(0, 3)).catch((e) => e)
      for (let i = 0; i < 100 && hole.sockets.size === 0; i++) await sleep(10)
      expect(hole.sockets.size).toBeGreaterThan(0) // the calls are out, and nobody will answer
      let closed = false
      const closing = c.close().then(() => { closed = true })
      await sleep(100)
      expect(closed).toBe(false) // close() waits for the in-flight calls
      const started = Date.now()
      const destroyed = c.destroy()
      expect(c.destroy()).toBeInstanceOf(Promise)
      await destroyed
      const [getErr, results] = await Promise.all([get, written])
      await closing
      expect(Date.now() - started).toBeLessThan(500)
      expect(getErr).toBeInstanceOf(HBaseError)
      expect(getErr.code).toBe('HBASE_CLIENT_CLOSED')
      expect(results).toEqual([0, 1, 2].map(() => expect.objectContaining({ code: 'HBASE_CLIENT_CLOSED' })))
      await expect(c.get('any', 'row')).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    } finally {
      hole.close()
    }
  })

  test('destroy() while a client waits out a backoff ends the operation at once', async () => {
    const c = createHBaseClient({ bootstrap: ['127.0.0.1:1'], pause: 2000, maxPause: 5000, operationTimeout: 30000 })
    const get = c.get('any', 'row').catch((e) => e)
    await sleep(200) // connection refused at once, then a 2 s backoff
    const started = Date.now()
    await c.destroy()
    const err = await get
    expect(Date.now() - started).toBeLessThan(200)
    expect(err.code).toBe('HBASE_CLIENT_CLOSED')
    await c.close()
  })
})
