'use strict'

// client.checkAndPut against the real HBase: the RegionServer decides atomically, so of many
// writers racing for an absent cell exactly one wins, and a put conditioned on a value applies
// only when the cell holds it.

const { testClient, uniqueTable } = require('./support/hbase')
const { findCell } = require('../lib')

let client
let table

beforeAll(async () => {
  client = testClient()
  table = uniqueTable('cas')
  await client.admin.createTable(table, { families: ['f'] })
})

afterAll(async () => {
  await client.admin.deleteTable(table).catch(() => {})
  await client.close()
})

const valueOf = async (row) => {
  const cell = findCell(await client.get(table, row), 'f', 'q')
  return cell ? cell.value.toString() : null
}

test('if absent: the first put applies, a later one does not and leaves the cell as it was', async () => {
  expect(await client.checkAndPut(table, 'once', { column: 'f:q', value: null }, { f: { q: 'first' } })).toBe(true)
  expect(await client.checkAndPut(table, 'once', { column: 'f:q', value: null }, { f: { q: 'second' } })).toBe(false)
  expect(await valueOf('once')).toBe('first')
})

test('another column of the row does not count as the cell being there', async () => {
  await client.put(table, 'other', { f: { z: 'unrelated' } })
  expect(await client.checkAndPut(table, 'other', { column: 'f:q', value: null }, { f: { q: 'mine' } })).toBe(true)
  expect(await valueOf('other')).toBe('mine')
})

test('many writers racing for an absent cell: exactly one wins, and everyone reads its value', async () => {
  const clients = [client, testClient(), testClient(), testClient()]
  try {
    const results = await Promise.all(clients.flatMap((c, i) => [0, 1, 2].map((j) =>
      c.checkAndPut(table, 'race', { column: 'f:q', value: null }, { f: { q: `w${i}-${j}` } }))))
    expect(results.filter(Boolean)).toHaveLength(1)
    const winner = `w${Math.floor(results.indexOf(true) / 3)}-${results.indexOf(true) % 3}`
    expect(await valueOf('race')).toBe(winner)
  } finally {
    await Promise.all(clients.slice(1).map((c) => c.close()))
  }
})

test('if equal: applies only when the cell holds exactly that value (compare-and-swap)', async () => {
  await client.put(table, 'swap', { f: { q: 'v1' } })
  expect(await client.checkAndPut(table, 'swap', { column: 'f:q', value: 'v0' }, { f: { q: 'v2' } })).toBe(false)
  expect(await client.checkAndPut(table, 'swap', { column: 'f:q', value: 'v1' }, { f: { q: 'v2' } })).toBe(true)
  expect(await valueOf('swap')).toBe('v2')
  expect(await client.checkAndPut(table, 'swap', { column: 'f:q', value: Buffer.from('v2') }, { f: { q: Buffer.from([0, 1]) } })).toBe(true)
})

test('bad arguments are refused before anything is sent', async () => {
  await expect(client.checkAndPut(table, 'x', { column: 'noColon', value: null }, { f: { q: 'v' } })).rejects.toMatchObject({
    code: 'HBASE_BAD_ARGUMENT'
  })
  const noCheck = /** @type {any} */ (null)
  await expect(client.checkAndPut(table, 'x', noCheck, { f: { q: 'v' } })).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  await expect(client.checkAndPut(table, 'x', { column: 'f:q', value: null }, {})).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  expect(await client.get(table, 'x')).toBeNull()
})
