'use strict'

// Failed admin authentications (api/admin/auth-failures.js, bearer-guard.js) and the credentials'
// token length (api/admin/credentials.js), on a fake clock: counted each, logged once per source
// per minute, slowed past the limit; a short named token refuses to start.

const { createAuthFailures } = require('../../api/admin/auth-failures')
const { createCredentials } = require('../../api/admin/credentials')

function setup (options = {}) {
  let now = 1_000_000
  const lines = []
  const counted = []
  const failures = createAuthFailures({
    logger: { warn: (fields, msg) => lines.push({ ...fields, msg }) },
    now: () => now,
    onFailure: (path) => counted.push(path),
    maxPerMinute: 3,
    delayMs: 1000,
    ...options
  })
  return { failures, lines, counted, advance: (ms) => { now += ms } }
}

test('each failure is counted; a source is logged once a minute, with its failures of the minute before', () => {
  const { failures, lines, counted, advance } = setup()
  for (let i = 0; i < 5; i++) failures.failed('10.0.0.1', '/admin/config')
  failures.failed('10.0.0.2', '/metrics')
  expect(counted).toHaveLength(6)
  expect(lines.map((l) => [l.source, l.failuresLastMinute])).toEqual([['10.0.0.1', 0], ['10.0.0.2', 0]])
  advance(59999)
  failures.failed('10.0.0.1', '/admin/config')
  expect(lines).toHaveLength(2)
  advance(1)
  failures.failed('10.0.0.1', '/admin/config')
  expect(lines).toHaveLength(3)
  expect(lines[2]).toMatchObject({ source: '10.0.0.1', path: '/admin/config', failuresLastMinute: 6 })
  expect(JSON.stringify(lines)).not.toMatch(/Bearer|token=/)
})

test('past the limit a source waits before each answer; another source does not; a new minute starts over', () => {
  const { failures, advance } = setup()
  expect([1, 2, 3].map(() => failures.failed('10.0.0.1', '/admin'))).toEqual([0, 0, 0])
  expect(failures.failed('10.0.0.1', '/admin')).toBe(1000)
  expect(failures.failed('10.0.0.1', '/admin')).toBe(1000)
  expect(failures.failed('10.0.0.9', '/admin')).toBe(0)
  advance(60000)
  expect(failures.failed('10.0.0.1', '/admin')).toBe(0)
})

test('the table of sources is bounded: the oldest are forgotten first', () => {
  const { failures, lines } = setup({ maxSources: 2 })
  failures.failed('a', '/admin')
  failures.failed('b', '/admin')
  failures.failed('c', '/admin') // forgets a
  failures.failed('b', '/admin') // still known: not logged again
  failures.failed('a', '/admin') // forgotten: logged again
  expect(lines.map((l) => l.source)).toEqual(['a', 'b', 'c', 'a'])
})

test('a named token shorter than 32 characters refuses to start, naming whose it is, never the token', () => {
  expect(() => createCredentials({ token: null, named: 'alice:short-secret' })).toThrow(
    /BEACON_ADMIN_TOKENS: the token of alice is shorter than 32 characters/)
  expect(() => createCredentials({ token: null, named: 'alice:short-secret' })).not.toThrow(/short-secret/)
  const ok = createCredentials({ token: null, named: `alice:${'a'.repeat(32)}` })
  expect(ok.actorOf(`Bearer ${'a'.repeat(32)}`)).toBe('alice')
})

describe('the guards over a real socket', () => {
  const express = require('express')
  const { adminGuard, metricsGuard } = require('../../api/admin/bearer-guard')
  const ADMIN = 'admin-token-0123456789abcdefghijklmnop'
  const METRICS = 'metrics-token-0123456789abcdefghijklmn'
  let server
  let base
  let onLoopback = true
  const waited = []
  const { failures, counted } = setup()

  beforeAll(async () => {
    const credentials = createCredentials({ token: ADMIN, named: null })
    const deps = { credentials, failures, wait: async (ms) => { waited.push(ms) } }
    const app = express()
    app.get('/metrics', metricsGuard({ ...deps, loopback: () => onLoopback, metricsToken: METRICS }), (req, res) => res.send('m'))
    app.get('/dashboard/traffic', adminGuard(deps), (req, res) => res.json({ actor: res.locals.actor }))
    await new Promise((resolve) => { server = app.listen(0, '127.0.0.1', resolve) })
    base = `http://127.0.0.1:${server.address().port}`
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  const get = (path, token) => fetch(base + path, { headers: token ? { Authorization: `Bearer ${token}` } : {} })

  test('/metrics: open on loopback; elsewhere the metrics token or an admin token', async () => {
    onLoopback = true
    expect((await get('/metrics')).status).toBe(200)
    onLoopback = false
    const refused = await get('/metrics')
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="beacon-admin"')
    expect((await get('/metrics', METRICS)).status).toBe(200)
    expect((await get('/metrics', ADMIN)).status).toBe(200)
    expect((await get('/metrics', 'wrong')).status).toBe(401)
  })

  test('the traffic page needs an admin token; wrong ones are counted, and past the limit their answers wait', async () => {
    expect(await (await get('/dashboard/traffic', ADMIN)).json()).toEqual({ actor: 'default' })
    expect((await get('/dashboard/traffic', METRICS)).status).toBe(401) // the metrics token opens /metrics only
    const before = counted.length
    for (let i = 0; i < 4; i++) expect((await get('/dashboard/traffic', 'guess-' + i)).status).toBe(401)
    expect(counted.length - before).toBe(4)
    expect(waited.length).toBeGreaterThan(0) // the limit is 3 a minute: this source is past it
    expect(waited.every((ms) => ms === 1000)).toBe(true)
    expect((await get('/dashboard/traffic')).status).toBe(401) // no token at all: not a guess, not counted
    expect(counted.length - before).toBe(4)
  })
})
