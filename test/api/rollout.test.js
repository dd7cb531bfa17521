'use strict'

// Percentage rollouts end to end: set through the admin API of one beacon, served by it, by a
// second beacon on the same HBase (another worker or host: it reads the stored rollout) and by a
// restarted one, over real sockets; JSONP, JSON and OFREP answers, and the released Node provider.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { until } = require('../support/until')
const { main: cli } = require('../../bin/beacon')
const { OpenFeature } = require('@openfeature/server-sdk')
const { OFREPProvider } = require('@openfeature/ofrep-provider')

const TOKEN = 'test-token-rollout-0123456789-0123'
// Its own config table: the rollout row must never reach the shared table other tests read.
const CONFIG_TABLE = uniqueTable('cfg')
const start = (pollMs) => startBeacon({
  env: { BEACON_ADMIN_TOKEN: TOKEN },
  overrides: { hbase: { configTable: CONFIG_TABLE, controlPollMs: pollMs } }
})
const rollout = (a, b) => ({
  salt: 'checkout-2026',
  variants: [{ name: 'A', weight: a, config: { checkout: 'old' } }, { name: 'B', weight: b, config: { checkout: 'new' } }]
})
const IDS = Array.from({ length: 100000 }, (_, i) => `visitor-${i + 1}`)

let first
let second

function admin (app, path, { method = 'GET', body } = {}) {
  return fetch(`${app.adminUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, text: await res.text() }))
}

/**
 * The variant each id gets from `app` (sample3, JSON answers), over kept-alive connections.
 * @returns {Promise<Map<string, string|null>>}
 */
async function variantsFrom (app, ids) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
  const out = new Map()
  let next = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < ids.length) {
      const id = ids[next++]
      const res = await request(`${app.url}/api/sample3.js?id=${id}`, { agent })
      if (res.status !== 200) throw new Error(`${id}: ${res.status} ${res.body}`)
      out.set(id, JSON.parse(res.body).variant ?? null)
    }
  }))
  agent.destroy()
  return out
}

const named = (variants, name) => [...variants].filter(([, v]) => v === name).map(([id]) => id)

beforeAll(async () => {
  const client = testClient()
  await client.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await client.close()
  // The first applies its own changes at once; the second learns of them from HBase, as another host does.
  first = await start(0)
  second = await start(100)
})

afterAll(async () => {
  for (const app of [first, second]) if (app) await app.close()
  const client = testClient()
  await client.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await client.close()
})

test('a rollout that is not valid, or on a fixed or unknown endpoint, is refused with the reason', async () => {
  const bad = await admin(first, '/admin/endpoints/sample3/rollout', { method: 'PUT', body: rollout(90, 20) })
  expect(bad.status).toBe(400)
  expect(JSON.parse(bad.text).error).toMatchObject({
    code: 'BAD_ROLLOUT',
    message: 'the rollout is not valid: the variants\' weights add up to 110, not 100'
  })
  const fixed = await admin(first, '/admin/endpoints/sample1/rollout', { method: 'PUT', body: rollout(90, 10) })
  expect([fixed.status, JSON.parse(fixed.text).error.code]).toEqual([409, 'FIXED_CONFIG'])
  const none = await admin(first, '/admin/endpoints/nosuch/rollout')
  expect(none.status).toBe(404)
  expect((await admin(first, '/admin/endpoints/sample3/rollout')).status).toBe(404)
})

test('90/10 over 100,000 ids without rows: B 9,700-10,300 times, the same on another beacon and after a restart; ' +
  'at 20% every earlier B id is still B', async () => {
  const set = await admin(first, '/admin/endpoints/sample3/rollout', { method: 'PUT', body: rollout(90, 10) })
  expect(set.status).toBe(200)
  expect(JSON.parse(set.text)).toMatchObject({ endpoint: 'sample3', version: expect.any(Number), rollout: rollout(90, 10) })

  const at10 = await variantsFrom(first, IDS)
  const inB = named(at10, 'B')
  expect(inB.length).toBeGreaterThanOrEqual(9700)
  expect(inB.length).toBeLessThanOrEqual(10300)
  expect(named(at10, 'A').length + inB.length).toBe(IDS.length)

  // The second beacon polls the stored rollout; then it answers every id as the first did.
  const sample = IDS.slice(0, 5000)
  await until('the second beacon has the rollout', async () => (await variantsFrom(second, ['visitor-1'])).get('visitor-1') !== null, 10000)
  const fromSecond = await variantsFrom(second, sample)
  expect(sample.filter((id) => fromSecond.get(id) !== at10.get(id))).toEqual([])

  await first.close()
  first = await start(0) // no polling: its one read of the stored rollouts is at start
  const afterRestart = await variantsFrom(first, sample)
  expect(sample.filter((id) => afterRestart.get(id) !== at10.get(id))).toEqual([])
  expect(JSON.parse((await admin(first, '/admin/endpoints/sample3/rollout')).text).rollout).toEqual(rollout(90, 10))

  expect((await admin(first, '/admin/endpoints/sample3/rollout', { method: 'PUT', body: rollout(80, 20) })).status).toBe(200)
  const earlierB = await variantsFrom(first, inB)
  expect(inB.filter((id) => earlierB.get(id) !== 'B')).toEqual([])
  const at20 = named(await variantsFrom(first, sample), 'B').length
  expect(at20).toBeGreaterThanOrEqual(900) // 20% of 5,000, ±2% (3.5 standard deviations)
  expect(at20).toBeLessThanOrEqual(1100)
}, 240000)

test('answers: the variant beside id and config; OFREP SPLIT with the variant, TARGETING_MATCH for a row, ' +
  'STATIC once the rollout is gone', async () => {
  expect((await admin(first, '/admin/endpoints/sample3/rollout', { method: 'PUT', body: rollout(0, 100) })).status).toBe(200)
  const script = await request(`${first.url}/api/sample3.js?id=visitor-7&callback=EXAMPLE.process`)
  expect(script.body).toContain('({"id":"visitor-7","default":true,"variant":"B","config":{"checkout":"new"}});')
  expect(script.headers.etag).toMatch(/^"r[0-9a-z]+-B"$/)

  const ofrep = (id) => fetch(`${first.url}/api/sample3/ofrep/v1/evaluate/flags/checkout`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ context: { targetingKey: id } })
  }).then((res) => res.json())
  expect(await ofrep('visitor-7')).toEqual({ key: 'checkout', value: 'new', reason: 'SPLIT', variant: 'B' })

  expect((await admin(first, '/admin/config/visitor-8', { method: 'PUT', body: { checkout: 'own' } })).status).toBe(200)
  expect(await ofrep('visitor-8')).toEqual({ key: 'checkout', value: 'own', reason: 'TARGETING_MATCH' })
  const own = JSON.parse((await request(`${first.url}/api/sample3.js?id=visitor-8`)).body)
  expect(own).toEqual({ id: 'visitor-8', default: false, config: { checkout: 'own' } })

  expect((await admin(first, '/admin/endpoints/sample3/rollout', { method: 'DELETE' })).status).toBe(204)
  expect((await admin(first, '/admin/endpoints/sample3/rollout')).status).toBe(404)
  const gone = JSON.parse((await request(`${first.url}/api/sample3.js?id=visitor-7`)).body)
  expect(gone).toEqual({ id: 'visitor-7', default: true, config: { features: {} } })
  const ofrepGone = await fetch(`${first.url}/api/sample3/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ context: { targetingKey: 'visitor-7' } })
  }).then((res) => res.json())
  expect(ofrepGone.flags).toEqual([{ key: 'features', value: {}, reason: 'STATIC' }])
})

test('the CLI: rollout set (inline or @file), get, delete; a malformed file is a usage error', async () => {
  const env = { ...process.env }
  process.env.BEACON_ADMIN_URL = first.adminUrl
  process.env.BEACON_ADMIN_TOKEN = TOKEN
  const file = path.join(first.stateDir, 'rollout.json')
  try {
    fs.writeFileSync(file, JSON.stringify(rollout(50, 50)))
    expect(await cli(['rollout', 'set', 'sample3', `@${file}`])).toMatchObject({ endpoint: 'sample3', rollout: rollout(50, 50) })
    expect(await cli(['rollout', 'get', 'sample3'])).toMatchObject({ rollout: rollout(50, 50), version: expect.any(Number) })
    expect(await cli(['rollout', 'delete', 'sample3'])).toEqual({ endpoint: 'sample3', deleted: true })
    await expect(cli(['rollout', 'get', 'sample3'])).rejects.toThrow(/404/)
    fs.writeFileSync(file, '{"salt":')
    await expect(cli(['rollout', 'set', 'sample3', `@${file}`])).rejects.toThrow(/the rollout is not valid JSON/)
  } finally {
    process.env = env
  }
})

test('the released Node OFREP provider reads the rollout\'s answer: reason SPLIT and the variant', async () => {
  expect((await admin(first, '/admin/endpoints/sample3/rollout', { method: 'PUT', body: rollout(0, 100) })).status).toBe(200)
  await OpenFeature.setProviderAndWait('rollout', new OFREPProvider({ baseUrl: `${first.url}/api/sample3` }))
  try {
    const details = await OpenFeature.getClient('rollout').getStringDetails('checkout', 'code-default', { targetingKey: 'visitor-9' })
    expect(details).toMatchObject({ value: 'new', reason: 'SPLIT', variant: 'B' })
    expect(details.errorCode).toBeUndefined()
  } finally {
    await OpenFeature.close()
  }
})
