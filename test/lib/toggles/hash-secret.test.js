'use strict'

// The hash secret in a real config table: hosts that start together on an empty table (each its
// own HBase client, as separate machines would be) all end with one secret, written once; a
// host that starts later reads it; it is not an id.

const { testClient, uniqueTable } = require('../../support/hbase')
const { createToggleStore, HASH_SECRET_ROW } = require('../../../lib/toggles/store')
const { createHashSecretSource } = require('../../../lib/toggles/hash-secret')

let admin
let table
const clients = []

function host () {
  const client = testClient()
  clients.push(client)
  const store = createToggleStore({ client, table, family: 'c', qualifier: 'json', timeoutMs: 5000 })
  return { store, source: createHashSecretSource({ store }) }
}

beforeAll(async () => {
  admin = testClient()
  table = uniqueTable('cfg_secret')
  // Ten versions kept, so a second write would show as a second cell.
  await admin.admin.createTable(table, { families: ['c'], maxVersions: 10 })
})

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await admin.admin.deleteTable(table).catch(() => {})
  await admin.close()
})

test('hosts starting together on an empty table agree on one secret, stored once', async () => {
  const hosts = Array.from({ length: 6 }, host)
  const secrets = await Promise.all(hosts.map((h) => h.source.read()))
  expect(secrets[0]).toHaveLength(32)
  for (const s of secrets) expect(s.equals(secrets[0])).toBe(true)
  const row = await admin.get(table, HASH_SECRET_ROW, { maxVersions: 10 })
  expect(row.cells).toHaveLength(1) // one write won; the others changed nothing
  expect(row.cells[0].value.equals(secrets[0])).toBe(true)
})

test('a host that starts later reads the same secret and writes nothing', async () => {
  const before = await admin.get(table, HASH_SECRET_ROW)
  const later = host()
  expect((await later.source.read()).equals(before.cells[0].value)).toBe(true)
  const after = await admin.get(table, HASH_SECRET_ROW, { maxVersions: 10 })
  expect(after.cells.map((c) => c.timestamp)).toEqual([before.cells[0].timestamp])
})

test('the secret\'s row is not an id', async () => {
  await host().store.write('42', { variant: 'A' })
  expect(await host().store.listIds({ limit: 100 })).toEqual(['42'])
})
