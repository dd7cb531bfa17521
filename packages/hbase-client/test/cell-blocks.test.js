'use strict'

// Cells in KeyValueCodec cell blocks (client option cellBlocks) against the real HBase: what one
// client writes through cell blocks the other reads inline and back, so both encodings hold the
// same data; per-action errors, deletes, scans with partial rows; and the server really answers
// in cell blocks once the codec is named.

const { testClient, uniqueTable } = require('./support/hbase')
const { HBaseError, findCell } = require('../lib')
const { ConnectionPool } = require('../lib/pool')

const SPLITS = ['3', '6']
let blocks // cellBlocks: true
let inline // cellBlocks: false
let table

beforeAll(async () => {
  // A small maxBatchActions makes one multiPut many Multi RPCs to the one RegionServer.
  blocks = testClient({ cellBlocks: true, maxBatchActions: 150 })
  inline = testClient({ cellBlocks: false })
  table = uniqueTable('cellblocks')
  await inline.admin.createTable(table, { families: ['f', 'g'], splits: SPLITS, maxVersions: 3 })
})

afterAll(async () => {
  await inline.admin.deleteTable(table).catch(() => {})
  await Promise.all([blocks.close(), inline.close()])
})

/** Row → `family:qualifier=value` strings, sorted, for comparing reads. */
const shape = (row) => row && row.cells.map((c) => `${c.family}:${c.qualifier}=${c.value.toString('base64')}`).sort()

const LARGE = Buffer.alloc(3 * 2 ** 20, 0xab) // 3 MiB

function puts (prefix, n) {
  return Array.from({ length: n }, (_, i) => {
    const row = `${i % 9}-${prefix}-${i}`
    if (i % 50 === 7) return { row, cells: { f: { a: `a${i}`, b: '' }, g: { c: Buffer.from([0, 255, i % 256]) } } }
    return { row, cells: { f: { e: JSON.stringify({ i, ua: 'x'.repeat(180) }) } } }
  })
}

test('multiPut of 700 rows over three regions through cell blocks reads back the same inline and through cell blocks', async () => {
  const written = puts('mp', 700)
  written.push({ row: '5-large', cells: { f: { big: LARGE, empty: '' } } })
  expect(await blocks.multiPut(table, written)).toEqual(written.map(() => null))
  const keys = [...written.map((p) => p.row), '4-absent']
  const viaInline = await inline.multiGet(table, keys)
  const viaBlocks = await blocks.multiGet(table, keys)
  expect(viaBlocks.map(shape)).toEqual(viaInline.map(shape))
  expect(viaInline[keys.length - 1]).toBeNull()
  expect(viaBlocks[keys.length - 1]).toBeNull()
  written.forEach((p, i) => {
    for (const [family, columns] of Object.entries(p.cells)) {
      for (const [qualifier, value] of Object.entries(columns)) {
        expect(findCell(viaInline[i], family, qualifier).value.equals(Buffer.from(value))).toBe(true)
      }
    }
  })
  const large = viaBlocks[written.length - 1]
  expect(findCell(large, 'f', 'big').value.equals(LARGE)).toBe(true)
  expect(findCell(large, 'f', 'empty').value.length).toBe(0)
  // The RegionServer stamped the LATEST_TIMESTAMP the block carried with its clock.
  expect(findCell(large, 'f', 'big').timestamp).toBeGreaterThan(Date.now() - 60000)
  expect(findCell(large, 'f', 'big').timestamp).toBeLessThanOrEqual(Date.now() + 1000)
})

test('what is written inline reads back the same through cell blocks', async () => {
  const written = puts('in', 300)
  expect(await inline.multiPut(table, written)).toEqual(written.map(() => null))
  const keys = written.map((p) => p.row)
  expect((await blocks.multiGet(table, keys)).map(shape)).toEqual((await inline.multiGet(table, keys)).map(shape))
})

test('a put to a missing family fails alone, the rest of the cell block is written', async () => {
  const results = await blocks.multiPut(table, [
    { row: '1-err-ok', cells: { f: { v: 'x' } } },
    { row: '2-err-bad', cells: { nofamily: { v: 'x' } } },
    { row: '2-err-ok', cells: { f: { v: 'y' }, g: { w: 'z' } } },
    { row: '7-err-bad', cells: { f: { v: 'x' }, nofamily: { v: 'x' } } },
    { row: '8-err-ok', cells: { g: { v: 'q' } } }
  ])
  expect(results[0]).toBeNull()
  expect(results[1]).toBeInstanceOf(HBaseError)
  expect(results[1].code).toBe('HBASE_NO_SUCH_FAMILY')
  expect(results[2]).toBeNull()
  expect(results[3]).toMatchObject({ code: 'HBASE_NO_SUCH_FAMILY' })
  expect(results[4]).toBeNull()
  const back = await inline.multiGet(table, ['1-err-ok', '2-err-bad', '2-err-ok', '7-err-bad', '8-err-ok'])
  expect(back.map(shape)).toEqual([
    [`f:v=${Buffer.from('x').toString('base64')}`],
    null,
    [`f:v=${Buffer.from('y').toString('base64')}`, `g:w=${Buffer.from('z').toString('base64')}`],
    null,
    [`g:v=${Buffer.from('q').toString('base64')}`]
  ])
})

test('single put and get, explicit timestamps and versions, selected columns', async () => {
  await blocks.put(table, '3-single', [
    { family: 'f', qualifier: 'v', value: 'old', timestamp: 1000 },
    { family: 'f', qualifier: 'v', value: 'new', timestamp: 2000 },
    { family: 'g', qualifier: 'w', value: '' }
  ])
  const all = await blocks.get(table, '3-single', { maxVersions: 3 })
  expect(all.cells.filter((c) => c.qualifier === 'v').map((c) => [c.value.toString(), c.timestamp])).toEqual([['new', 2000], ['old', 1000]])
  expect(shape(await inline.get(table, '3-single', { maxVersions: 3 }))).toEqual(shape(all))
  const one = await blocks.get(table, '3-single', { columns: ['g:w'] })
  expect(one.cells.map((c) => [c.family, c.qualifier, c.value.length])).toEqual([['g', 'w', 0]])
  expect(await blocks.get(table, '3-nothing')).toBeNull()
})

test('deletes of a column, a family and a whole row through cell blocks', async () => {
  const row = '6-del'
  const full = { f: { a: '1', b: '2' }, g: { c: '3' } }
  await inline.put(table, row, full)
  await blocks.delete(table, row, { columns: ['f:a'] })
  expect(shape(await inline.get(table, row))).toEqual(['f:b=Mg==', 'g:c=Mw=='])
  await blocks.delete(table, row, { families: ['g'] })
  expect(shape(await inline.get(table, row))).toEqual(['f:b=Mg=='])
  await blocks.delete(table, row)
  expect(await inline.get(table, row)).toBeNull()
})

test('scans through cell blocks: every row in order, rows split into partial results joined again', async () => {
  const prefix = '9-scan-'
  const big = Buffer.alloc(150000, 1)
  const written = Array.from({ length: 40 }, (_, i) => ({
    row: `${prefix}${String(i).padStart(2, '0')}`,
    cells: { f: { a: big, b: big, c: String(i) } }
  }))
  expect(await blocks.multiPut(table, written)).toEqual(written.map(() => null))
  const scanned = []
  // 100 KB per scan RPC: each 300 KB row comes back in partial results.
  for await (const row of blocks.scan(table, { startRow: prefix, stopRow: '9-scan.', maxResultSize: 100000, caching: 5 })) scanned.push(row)
  expect(scanned.map((r) => r.row.toString())).toEqual(written.map((p) => p.row))
  scanned.forEach((row, i) => {
    expect(shape(row)).toEqual(
      shape({ cells: Object.entries(written[i].cells.f).map(([qualifier, v]) => ({ family: 'f', qualifier, value: Buffer.from(v) })) })
    )
  })
  // Keys only, a row cut by the size limit is followed by the next row's first key: still 40.
  for (const client of [blocks, inline]) {
    for (const maxResultSize of [undefined, 100000]) {
      expect(await client.count(table, { startRow: prefix, stopRow: '9-scan.', maxResultSize })).toBe(40)
    }
  }
})

test('with the codec named the server answers Gets and Multis in cell blocks; without, inline', async () => {
  await inline.put(table, '4-wire', { f: { a: 'x', b: 'y' } })
  const [region] = (await inline.regions(table)).filter((r) => r.startKey.toString() === '3')
  const spec = { type: 1, value: Buffer.from(region.name) }
  const get = { region: spec, get: { row: Buffer.from('4-wire') } }
  const multi = { regionAction: [{ region: spec, action: [{ index: 0, get: get.get }] }] }
  for (const cellBlocks of [true, false]) {
    const pool = new ConnectionPool({ user: 'test', connectTimeout: 2000, cellBlocks })
    try {
      const res = await pool.call(region.server, 'ClientService', 'Get', get, 5000)
      const roe = (await pool.call(region.server, 'ClientService', 'Multi', multi, 5000)).regionActionResult[0].resultOrException[0]
      for (const result of [res.result, roe.result]) {
        expect(result.associatedCellCount).toBe(cellBlocks ? 2 : 0)
        expect(result.cell.map((c) => `${c.qualifier}=${c.value}`)).toEqual(['a=x', 'b=y'])
      }
    } finally {
      pool.destroy()
    }
  }
})
