'use strict'

const { seedConfigRows, sampleConfig } = require('../lib/config-seed')

/** A client that keeps what it is sent; `failAt` fails the put of that row. */
function fakeClient ({ failAt = null, onBatch = () => {} } = {}) {
  const rows = new Map()
  return {
    rows,
    async multiPut (table, puts) {
      await new Promise((resolve) => setImmediate(resolve))
      onBatch()
      return puts.map((p) => {
        if (p.row === failAt) return Object.assign(new Error('no'), { code: 'BOOM' })
        rows.set(p.row, p.cells.c.json)
        return null
      })
    }
  }
}

test('every id 1..n once, in the store\'s format, in batches', async () => {
  const client = fakeClient()
  const r = await seedConfigRows({ client, table: 't', ids: 1001, batch: 100, parallel: 3 })
  expect(r.seeded).toBe(1001)
  expect(client.rows.size).toBe(1001)
  expect(JSON.parse(client.rows.get('7'))).toEqual(sampleConfig(7))
})

test('a deadline stops it between batches, with 1..seeded all written', async () => {
  let batches = 0
  let deadline = Date.now() + 3600000
  const client = fakeClient({ onBatch: () => { if (++batches === 5) deadline = Date.now() - 1 } })
  const r = await seedConfigRows({ client, table: 't', ids: 100000, batch: 10, parallel: 2, deadline: { valueOf: () => deadline } })
  expect(r.seeded).toBeLessThan(100000)
  expect(client.rows.size).toBe(r.seeded)
  for (let id = 1; id <= r.seeded; id++) expect(client.rows.has(String(id))).toBe(true)
})

test('a failed put fails the seed', async () => {
  await expect(seedConfigRows({ client: fakeClient({ failAt: '5' }), table: 't', ids: 10, batch: 4 })).rejects.toThrow(/BOOM/)
})
