'use strict'

// The audit trail over real sockets and HBase: named admin tokens, each admin write one record
// with its actor (the token's name), read back through GET /admin/audit and `beacon audit`.

const { startBeacon } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { main: cli } = require('../../bin/beacon')
const { auditLines } = require('../../bin/audit')
const { createCredentials } = require('../../api/admin/credentials')

const DEFAULT_TOKEN = 'audit-default-token-0123456789abcdef'
const ALICE_TOKEN = 'audit-alice-token-0123456789abcdef'
const CI_TOKEN = 'audit-ci-token-0123456789abcdef0123'
const CONFIG_TABLE = uniqueTable('cfg')
const ID = `aud${process.pid}`
let app

function admin (path, { method = 'GET', token = DEFAULT_TOKEN, body } = {}) {
  return fetch(`${app.adminUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, json: await res.json().catch(() => null) }))
}

beforeAll(async () => {
  const client = testClient()
  await client.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await client.close()
  app = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: DEFAULT_TOKEN, BEACON_ADMIN_TOKENS: `alice:${ALICE_TOKEN}, ci:${CI_TOKEN}` },
    overrides: { hbase: { configTable: CONFIG_TABLE } }
  })
})

afterAll(async () => {
  if (app) await app.close()
  const client = testClient()
  await client.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await client.close()
})

test('every named token works; each write is one record naming its token; the audit reads them back', async () => {
  const from = Date.now()
  expect((await admin(`/admin/config/${ID}`, { method: 'PUT', token: ALICE_TOKEN, body: { a: 1 } })).status).toBe(200)
  expect((await admin(`/admin/config/${ID}`, { method: 'PUT', token: CI_TOKEN, body: { a: 2 } })).status).toBe(200)
  expect((await admin('/admin/endpoints/sample2', { method: 'PUT', body: { enabled: false } })).status).toBe(200)
  expect((await admin('/admin/endpoints/sample2', { method: 'PUT', token: ALICE_TOKEN, body: { enabled: true } })).status).toBe(200)
  expect((await admin(`/admin/config/${ID}`, { method: 'DELETE', token: CI_TOKEN })).status).toBe(204)
  expect((await admin('/admin/config/x', { token: 'not-a-token' })).status).toBe(401)

  const all = await admin(`/admin/audit?from=${from}`)
  expect(all.status).toBe(200)
  expect(all.json.records.map((r) => [r.actor, r.action, r.target])).toEqual([
    ['alice', 'config.set', ID],
    ['ci', 'config.set', ID],
    ['default', 'endpoint.disable', 'sample2'],
    ['alice', 'endpoint.enable', 'sample2'],
    ['ci', 'config.delete', ID]
  ])
  expect(all.json.records[1]).toMatchObject({ change: { config: { a: 2 } }, at: expect.any(Number), ip: expect.any(String) })
  const byCi = await admin(`/admin/audit?from=${from}&actor=ci&target=${ID}`)
  expect(byCi.json.records.map((r) => r.action)).toEqual(['config.set', 'config.delete'])
  expect((await admin(`/admin/audit?from=${from}&actor=a.b`)).status).toBe(400)
  expect((await admin('/admin/audit')).json.error.code).toBe('BAD_TIME')
})

test('beacon audit: the same records as lines, --actor filters, --json the answer', async () => {
  const env = { ...process.env }
  process.env.BEACON_ADMIN_URL = app.adminUrl
  process.env.BEACON_ADMIN_TOKEN = ALICE_TOKEN
  try {
    await cli(['rollout', 'set', 'sample3', JSON.stringify({ salt: 's', variants: [{ name: 'A', weight: 100, config: {} }] })])
    // main() answers the value; the text is what `auditLines` makes of it
    const text = auditLines(await cli(['audit', '--from', '-10m', '--actor', 'alice', '--target', 'sample3']))
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}alice {2}rollout\.set {2}sample3 {2}\{"version":\d+,"rollout":\{"salt":"s"/)
    const json = await cli(['audit', '--from', '-10m', '--actor', 'alice', '--json'])
    expect(json.records.at(-1)).toMatchObject({ actor: 'alice', action: 'rollout.set', target: 'sample3' })
    await expect(cli(['audit'])).rejects.toThrow(/--from is required/)
  } finally {
    process.env = env
  }
})

describe('createCredentials', () => {
  test('the single token is default; named ones by their names; malformed lists are refused at start', () => {
    const [t0, t1, t2, t3] = [0, 1, 2, 3].map((n) => `token-${n}-0123456789abcdefghijklmnopqrstuvwxyz`)
    const c = createCredentials({ token: t0, named: `alice:${t1},ci:${t2}` })
    expect(c.names).toEqual(['default', 'alice', 'ci'])
    expect([`Bearer ${t0}`, `Bearer ${t1}`, `Bearer ${t2}`, `Bearer ${t3}`, t1, undefined].map(c.actorOf))
      .toEqual(['default', 'alice', 'ci', null, null, null])
    expect(() => createCredentials({ token: null, named: 'alice' })).toThrow(/name:token pairs/)
    expect(() => createCredentials({ token: t0, named: `default:${t1}` })).toThrow(/names default twice/)
    expect(createCredentials({ token: null, named: null }).any).toBe(false)
  })
})

test('history -> rollback -> history for an id and for a rollout, each step audited with its actor', async () => {
  const from = Date.now()
  const id = `${ID}h`
  const put = (body, token) => admin(`/admin/config/${id}`, { method: 'PUT', token, body })
  expect((await put({ step: 1 }, ALICE_TOKEN)).status).toBe(200)
  expect((await put({ step: 2 }, CI_TOKEN)).status).toBe(200)
  const history = (await admin(`/admin/config/${id}/history`)).json.history
  expect(history.map((c) => [c.actor, c.action, c.value, c.previous])).toEqual([
    ['ci', 'config.set', { step: 2 }, { step: 1 }],
    ['alice', 'config.set', { step: 1 }, null]
  ])
  // Undo the newest change: step 1 again; the rollback is itself a change.
  const undo = await admin(`/admin/config/${id}/rollback`, { method: 'POST', token: ALICE_TOKEN })
  expect(undo.json).toEqual({ id, config: { step: 1 }, rolledBackTo: history[0].version, undone: true })
  expect((await admin(`/admin/config/${id}`)).json.config).toEqual({ step: 1 })
  // Back to the version of step 2, named by its version.
  const redo = await admin(`/admin/config/${id}/rollback?to=${history[0].version}`, { method: 'POST' })
  expect(redo.json).toMatchObject({ config: { step: 2 }, undone: false })
  const after = (await admin(`/admin/config/${id}/history`)).json.history
  expect(after.map((c) => [c.actor, c.action, c.value])).toEqual([
    ['default', 'config.rollback', { step: 2 }],
    ['alice', 'config.rollback', { step: 1 }],
    ['ci', 'config.set', { step: 2 }],
    ['alice', 'config.set', { step: 1 }]
  ])
  // To a time before the first change: the id had no config then, so its row is deleted.
  const gone = await admin(`/admin/config/${id}/rollback?to=${history[1].version - 1}`, { method: 'POST', token: CI_TOKEN })
  expect(gone.json).toEqual({ id, config: null, rolledBackTo: history[1].version, undone: true })
  expect((await admin(`/admin/config/${id}`)).status).toBe(404)
  expect((await admin('/admin/config/never-changed/rollback', { method: 'POST' })).json.error.code).toBe('NO_HISTORY')

  const rollout = (b) => ({ salt: 'h', variants: [{ name: 'A', weight: 100 - b, config: {} }, { name: 'B', weight: b, config: {} }] })
  const setRollout = (b, token) => admin('/admin/endpoints/sample3/rollout', { method: 'PUT', token, body: rollout(b) })
  expect((await setRollout(10, ALICE_TOKEN)).status).toBe(200)
  expect((await setRollout(20, CI_TOKEN)).status).toBe(200)
  expect((await admin('/admin/endpoints/sample3/rollout/rollback', { method: 'POST', token: ALICE_TOKEN })).json)
    .toMatchObject({ endpoint: 'sample3', rollout: rollout(10), undone: true })
  expect((await admin('/admin/endpoints/sample3/rollout')).json.rollout).toEqual(rollout(10))
  const rolloutHistory = (await admin('/admin/endpoints/sample3/rollout/history')).json.history
  expect(rolloutHistory.slice(0, 3).map((c) => [c.actor, c.action])).toEqual([
    ['alice', 'rollout.rollback'], ['ci', 'rollout.set'], ['alice', 'rollout.set']
  ])

  const audited = (await admin(`/admin/audit?from=${from}`)).json.records.map((r) => [r.actor, r.action, r.target])
  expect(audited).toEqual([
    ['alice', 'config.set', id], ['ci', 'config.set', id], ['alice', 'config.rollback', id], ['default', 'config.rollback', id],
    ['ci', 'config.rollback', id],
    ['alice', 'rollout.set', 'sample3'], ['ci', 'rollout.set', 'sample3'], ['alice', 'rollout.rollback', 'sample3']
  ])
})
