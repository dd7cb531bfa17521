'use strict'

// HBase stopped and restarted while a client is live: the same client recovers by itself.
// Runs on its own HBase instance (own state dir and ports) so the shared test HBase is never
// disturbed; the instance is stopped and wiped afterwards.

const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { createHBaseClient, findCell } = require('@beacon/hbase-client')

jest.setTimeout(15 * 60 * 1000)

const options = hbase.resolveOptions({
  stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-faults'),
  zkPort: 2191,
  masterPort: 16200,
  rsPort: 16220,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 10
})
const TABLE = 'restart_probe'
const RECOVERY_BOUND_MS = 120000

let client
let bootstrap

/** Polls with the live client until a get works; returns how long that took. */
async function waitUntilServing (started) {
  let lastError
  while (Date.now() - started < RECOVERY_BOUND_MS) {
    try {
      const row = await client.get(TABLE, 'before')
      if (row) return Date.now() - started
    } catch (err) {
      lastError = err
      expect(err.code).toMatch(/^HBASE_/)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`client did not recover within ${RECOVERY_BOUND_MS} ms; last error: ${lastError && lastError.message}`)
}

async function expectFullService (tag) {
  await client.put(TABLE, `after-${tag}`, { f: { v: tag } })
  expect(findCell(await client.get(TABLE, `after-${tag}`), 'f', 'v').value.toString()).toBe(tag)
  const rows = await client.multiGet(TABLE, ['before', `after-${tag}`, 'absent'])
  expect(rows[0]).not.toBeNull()
  expect(rows[1]).not.toBeNull()
  expect(rows[2]).toBeNull()
  expect(await client.count(TABLE)).toBeGreaterThanOrEqual(2)
}

beforeAll(async () => {
  await hbase.wipe(options, { crash: true })
  const info = await hbase.up(options, { log: () => {} })
  bootstrap = info.bootstrap
  client = createHBaseClient({ bootstrap, rpcTimeout: 1000, operationTimeout: 3000 })
  await client.admin.createTable(TABLE, { families: ['f'], splits: ['m'] })
  await client.put(TABLE, 'before', { f: { v: 'written before the restart' } })
})

afterAll(async () => {
  if (client) await client.close()
  await hbase.wipe(options, { crash: true })
})

test('graceful stop and start: calls fail fast and typed while down, then the same client recovers', async () => {
  expect(await client.get(TABLE, 'before')).not.toBeNull()
  await hbase.down(options)

  const started = Date.now()
  const err = await client.get(TABLE, 'before').catch((e) => e)
  expect(err.code).toBe('HBASE_TIMEOUT')
  expect(err.cause.code).toMatch(/HBASE_CONNECTION|HBASE_META_UNAVAILABLE/)
  expect(Date.now() - started).toBeLessThan(client.options.operationTimeout + 1500)

  await hbase.up(options, { log: () => {} })
  const recovered = await waitUntilServing(Date.now())
  expect(recovered).toBeLessThan(RECOVERY_BOUND_MS)
  await expectFullService('graceful')
})

test('SIGKILL of the HBase JVM and restart: the same client recovers and earlier writes survive', async () => {
  await client.put(TABLE, 'zz-before-kill', { f: { v: 'x' } })
  await hbase.kill(options)
  const err = await client.get(TABLE, 'before').catch((e) => e)
  expect(err.code).toBe('HBASE_TIMEOUT')

  await hbase.up(options, { log: () => {} })
  await waitUntilServing(Date.now())
  expect(await client.get(TABLE, 'zz-before-kill')).not.toBeNull()
  await expectFullService('killed')
})
