'use strict'

// multiPut with puts that name their own table (lib/client.js): one MultiRequest carries a
// RegionAction per region whatever its table, so the rows of several tables on one server are one
// RPC (how the access log's batches carry their rollup marks: logging/hbase-sink/batcher.js).

const { testClient, uniqueTable } = require('./support/hbase')
const { findCell } = require('../lib')

let client
const created = []

beforeAll(() => {
  client = testClient()
})

afterAll(async () => {
  for (const table of created) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
})

async function createTable (prefix, spec) {
  const name = uniqueTable(prefix)
  await client.admin.createTable(name, spec)
  created.push(name)
  return name
}

test('a multiPut whose puts name another table writes each to its own, one Multi RPC per server; a missing one fails alone', async () => {
  const table = await createTable('multimain', { families: ['f'], splits: ['4'] })
  const other = await createTable('multiother', { families: ['g'] })
  const view = client.withKind('two-tables')
  const results = await view.multiPut(table, [
    { row: '3-two', cells: { f: { v: 'in t' } } },
    { row: '7-two', cells: { f: { v: 'in t too' } } },
    { row: 'x', cells: { g: { v: 'in other' } }, table: other },
    { row: 'y', cells: { g: { v: 'nowhere' } }, table: uniqueTable('missing') }
  ], { coalesce: true })
  expect(results.slice(0, 3)).toEqual([null, null, null])
  expect(results[3]).toMatchObject({ code: 'HBASE_TABLE_NOT_FOUND' })
  expect(findCell(await client.get(table, '3-two'), 'f', 'v').value.toString()).toBe('in t')
  expect(findCell(await client.get(table, '7-two'), 'f', 'v').value.toString()).toBe('in t too')
  expect(findCell(await client.get(other, 'x'), 'g', 'v').value.toString()).toBe('in other')
  expect(await client.get(table, 'x')).toBeNull()
  // The standalone test HBase has one RegionServer: three regions of two tables, one RPC.
  expect(client.trafficStats().kinds['two-tables'].calls).toEqual({ Multi: 1 })
  await expect(client.multiPut(table, [{ row: 'z', cells: { f: { v: '' } }, table: 5 }]))
    .rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
})
