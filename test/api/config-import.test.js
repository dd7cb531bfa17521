'use strict'

// Bulk load and export over real sockets and HBase: `beacon config import` (checked first, batched
// multi-puts, resumable, one audit record) and `beacon config export`.

const fs = require('node:fs')
const path = require('node:path')
const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { main: cli } = require('../../bin/beacon')

const TOKEN = 'import-token-0123456789abcdef0123'
const CONFIG_TABLE = uniqueTable('cfg')
const COUNT = 3000
let app
let env

const line = (i, step = 1) => JSON.stringify({ id: `imp-${i}`, config: { step, n: i } })

function admin (urlPath) {
  return fetch(`${app.adminUrl}${urlPath}`, { headers: { Authorization: `Bearer ${TOKEN}` } }).then((res) => res.json())
}

beforeAll(async () => {
  const client = testClient()
  await client.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await client.close()
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { hbase: { configTable: CONFIG_TABLE } } })
  env = { ...process.env }
  process.env.BEACON_ADMIN_URL = app.adminUrl
  process.env.BEACON_ADMIN_TOKEN = TOKEN
})

afterAll(async () => {
  process.env = env
  if (app) await app.close()
  const client = testClient()
  await client.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await client.close()
})

test('a file with bad lines writes nothing and names them; --dry-run checks every line and writes nothing', async () => {
  const file = path.join(app.stateDir, 'bad.ndjson')
  fs.writeFileSync(file, [line(1), '{"id":"a b","config":{}}', line(2), '{"id":"x","config":[]}', 'nope'].join('\n') + '\n')
  await expect(cli(['config', 'import', file])).rejects.toThrow(
    /3 bad line\(s\), nothing written:\n {2}line 2: id must be .*\n {2}line 4: config must be a JSON object\n {2}line 5: not JSON/)
  const good = path.join(app.stateDir, 'good.ndjson')
  fs.writeFileSync(good, line(1) + '\n\n' + line(2) + '\n')
  expect(await cli(['config', 'import', good, '--dry-run'])).toEqual({ file: good, lines: 2, valid: 2, dryRun: true })
  expect((await request(`${app.url}/api/sample3.js?id=imp-1`)).body).toContain('"default":true')
})

test(`${COUNT} ids in batches, served at once, kept in the history, one audit record; export gives them back`, async () => {
  const file = path.join(app.stateDir, 'configs.ndjson')
  fs.writeFileSync(file, Array.from({ length: COUNT }, (_, i) => line(i + 1)).join('\n') + '\n')
  const from = Date.now()
  const result = await cli(['config', 'import', file, '--batch', '1000'])
  expect(result).toMatchObject({ file, lines: COUNT, written: COUNT, ms: expect.any(Number) })
  expect(fs.existsSync(`${file}.import-progress`)).toBe(false)
  expect(JSON.parse((await request(`${app.url}/api/sample3.js?id=imp-2999`)).body))
    .toEqual({ id: 'imp-2999', default: false, config: { step: 1, n: 2999 } })
  const history = (await admin('/admin/config/imp-7/history')).history
  expect(history.map((c) => [c.action, c.actor, c.value, c.previous])).toEqual([['config.import', 'default', { step: 1, n: 7 }, null]])
  const audit = (await admin(`/admin/audit?from=${from}`)).records
  expect(audit.map((r) => [r.action, r.target, r.change.lines, r.change.written])).toEqual([['config.import', '*', COUNT, COUNT]])

  const out = []
  const write = process.stdout.write
  process.stdout.write = (chunk) => { out.push(Buffer.from(chunk).toString()); return true }
  try {
    await cli(['config', 'export'])
  } finally {
    process.stdout.write = write
  }
  const exported = out.join('').trim().split('\n').map((l) => JSON.parse(l))
  expect(exported).toHaveLength(COUNT)
  expect(new Set(exported.map((e) => JSON.stringify(e)))).toEqual(new Set(fs.readFileSync(file, 'utf8').trim().split('\n')))
})

test('--resume goes on after the last batch written, and only sends the rest', async () => {
  const file = path.join(app.stateDir, 'again.ndjson')
  fs.writeFileSync(file, Array.from({ length: COUNT }, (_, i) => line(i + 1, 2)).join('\n') + '\n')
  const stat = fs.statSync(file)
  // As an import interrupted after its second batch leaves it.
  fs.writeFileSync(`${file}.import-progress`, JSON.stringify({ size: stat.size, mtimeMs: stat.mtimeMs, done: 2000 }))
  const result = await cli(['config', 'import', file, '--resume', '--batch', '1000'])
  expect(result).toMatchObject({ lines: COUNT, written: 1000 })
  const at = async (i) => JSON.parse((await request(`${app.url}/api/sample3.js?id=imp-${i}`)).body).config.step
  expect([await at(1), await at(2000), await at(2001), await at(COUNT)]).toEqual([1, 1, 2, 2])
})
