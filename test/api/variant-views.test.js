'use strict'

// Exact views per variant end to end, over real sockets and the real HBase: under a rollout,
// every logged view (JSONP, JSON, OFREP) records the variant and config version it answered,
// pages' exposure events name theirs, the rollups count per variant to the row (as the raw
// rows do, and as `log check` holds them), and the CLI's `--by variant --unique` reads them.

const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { rollupsAgainstRaw } = require('../support/rollups')
const { runCli } = require('../support/cli')
const { MINUTE_MS, minuteOf } = require('../../logging/rollup/layout')

const TOKEN = 'test-token-variant-views-0123456789'
// Its own config table: the rollout row must never reach the shared table other tests read.
const CONFIG_TABLE = uniqueTable('cfg')
const ROLLOUT = {
  salt: 'views-2026',
  variants: [{ name: 'A', weight: 50, config: { checkout: 'old' } }, { name: 'B', weight: 50, config: { checkout: 'new' } }]
}
const IDS = Array.from({ length: 120 }, (_, i) => `visitor-${i + 1}`)
let app

function admin (path, { method = 'GET', body } = {}) {
  return fetch(`${app.adminUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, json: await res.json() }))
}

beforeAll(async () => {
  const client = testClient()
  await client.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await client.close()
  app = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: TOKEN },
    overrides: {
      hbase: { configTable: CONFIG_TABLE },
      endpoints: { sample5: { events: { names: ['exposure'], sinks: ['hbase'] } } }
    }
  })
})

afterAll(async () => {
  if (app) await app.close()
  const client = testClient()
  await client.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await client.close()
})

/** One view of `id` on sample5 by the JSONP, JSON or OFREP path: what the page got. */
async function view (id, path) {
  if (path === 'ofrep') {
    const res = await fetch(`${app.url}/api/sample5/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: id } })
    })
    const body = await res.json()
    expect(res.status).toBe(200)
    const variants = new Set(body.flags.map((f) => f.variant ?? null))
    expect(variants.size).toBe(1)
    return { variant: [...variants][0], version: body.metadata.version }
  }
  const res = await request(`${app.url}/api/sample5.js?id=${id}${path === 'jsonp' ? '&callback=EXAMPLE.process' : ''}`)
  expect(res.status).toBe(200)
  const json = path === 'jsonp' ? res.body.slice(res.body.indexOf('(') + 1, res.body.lastIndexOf(')')) : res.body
  return { variant: JSON.parse(json).variant ?? null, version: res.headers.etag.slice(1, -1) }
}

test('views and exposure events count per variant, from the rollups as from the raw rows; --unique counts the ids', async () => {
  expect((await admin('/admin/endpoints/sample5/rollout', { method: 'PUT', body: ROLLOUT })).status).toBe(200)
  expect((await admin('/admin/config/own-1', { method: 'PUT', body: { checkout: 'own' } })).status).toBe(200)
  const from = minuteOf(Date.now())
  const views = {}
  const ids = {}
  const got = new Map()
  const count = (key, id) => {
    views[key] = (views[key] || 0) + 1
    ;(ids[key] ??= new Set()).add(id)
  }
  // Each id viewed once or twice, by one of the three paths; an id with its own row has no variant.
  for (const [i, id] of [...IDS, 'own-1'].entries()) {
    for (let n = 0; n <= i % 2; n++) {
      const served = await view(id, ['jsonp', 'json', 'ofrep'][(i + n) % 3])
      got.set(id, served)
      count(served.variant ?? '(none)', id)
    }
  }
  expect(new Set([...got.values()].map((g) => g.variant))).toEqual(new Set(['A', 'B', null]))
  // A third of the pages report an exposure of what they showed.
  const exposed = IDS.filter((_, i) => i % 3 === 0)
  for (const id of exposed) {
    const res = await fetch(`${app.url}/api/sample5/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify([{ id, event: 'exposure', variant: got.get(id).variant }])
    })
    expect(res.status).toBe(204)
    count(`event:${got.get(id).variant}`, id)
  }
  await app.sinks.get('hbase').flush()

  // Every view's row says which config it answered.
  const rows = []
  for await (const row of app.client.scan(app.accessLogTable, {})) rows.push(JSON.parse(row.cells[0].value.toString()))
  const viewRows = rows.filter((r) => r.status !== undefined)
  expect(viewRows).toHaveLength(Object.entries(views).filter(([k]) => !k.startsWith('event:')).reduce((n, [, v]) => n + v, 0))
  for (const row of viewRows) expect({ variant: row.variant, version: row.version }).toEqual(got.get(row.id))
  expect(rows.filter((r) => r.event === 'exposure')).toHaveLength(exposed.length)

  // The rollups, counted, hold every group to the raw rows, variants included.
  const check = await rollupsAgainstRaw({ bootstrap: app.settings.hbase.bootstrap, logTable: app.accessLogTable, from })
  expect(check.rolled).toBeGreaterThan(0)
  expect(check.differences).toEqual([])
  expect(check.rows).toBe(rows.length)

  const to = minuteOf(Date.now()) + MINUTE_MS
  const range = `from=${from}&to=${to}&endpoint=sample5&by=variant`
  const byVariant = await admin(`/admin/log/count?${range}`)
  expect(byVariant.json.source).toEqual({ rollupMinutes: (to - from) / MINUTE_MS, scannedMinutes: 0 })
  expect(Object.fromEntries(byVariant.json.groups.map((g) => [g.key, g.count]))).toEqual(views)
  const scanned = await admin(`/admin/log/count?${range}&scan=1`)
  expect(scanned.json.groups).toEqual(byVariant.json.groups)
  const unique = await admin(`/admin/log/count?${range}&unique=1`)
  expect(unique.json).toMatchObject({ unique: true, total: IDS.length + 1 })
  expect(Object.fromEntries(unique.json.groups.map((g) => [g.key, g.count]))).toEqual(
    Object.fromEntries(Object.entries(ids).map(([k, set]) => [k, set.size])))
  expect((await admin(`/admin/log/count?${range}&unique=1&scan=1`)).json.groups).toEqual(unique.json.groups)
  expect((await admin(`/admin/log/count?${range}&unique=maybe`)).json).toMatchObject({ error: { code: 'BAD_LOG_QUERY' } })

  const cli = await runCli(['log', 'count', '--from', String(from), '--to', String(to), '--endpoint', 'sample5', '--by', 'variant',
    '--unique'], { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN })
  expect(cli).toMatchObject({ code: 0, stderr: '' })
  const lines = cli.stdout.trim().split('\n')
  expect(lines[0]).toMatch(new RegExp(`^${IDS.length + 1} ids  `))
  const escaped = (text) => text.replace(/[()]/g, '\\$&')
  for (const g of unique.json.groups) {
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^  ${escaped(g.key)} +${g.count}$`)))
  }
})
