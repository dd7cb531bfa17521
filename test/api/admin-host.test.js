'use strict'

// The admin port over real sockets turns away a request whose Host is not one of its own names
// (DNS rebinding), on every path, before anything else runs: 421 with the error body.

const http = require('node:http')
const { startBeacon } = require('../support/beacon')

const TOKEN = 'test-token-admin-host-0123456789abcdef'
let app

beforeAll(async () => {
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { admin: { allowedHosts: ['beacon-admin.internal'] } } })
})

afterAll(async () => {
  if (app) await app.close()
})

/** A GET to the admin port with this Host header (and the token). */
function get (path, host) {
  const { port } = new URL(app.adminUrl)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { Host: host, Authorization: `Bearer ${TOKEN}` }, agent: false },
      (res) => {
        let body = ''
        res.on('data', (c) => { body += c })
        res.on('end', () => resolve({ status: res.statusCode, body }))
      })
    req.on('error', reject)
    req.end()
  })
}

const PATHS = [
  '/healthz', '/readyz', '/metrics', '/dashboard', '/dashboard/traffic', '/admin/config/1', '/admin/log/count?from=-1m', '/nosuch'
]

test.each(['evil.example', 'evil.example:' + 4001, '127.0.0.1.evil.example'])('Host %s gets 421 on every path', async (host) => {
  for (const path of PATHS) {
    const res = await get(path, host)
    expect({ path, status: res.status }).toEqual({ path, status: 421 })
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'MISDIRECTED_REQUEST' } })
    expect(res.body).not.toContain('evil')
  }
})

test('its own names are answered: the bound address and port, localhost, an allowed name', async () => {
  const { port } = new URL(app.adminUrl)
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `beacon-admin.internal:${port}`]) {
    expect((await get('/healthz', host)).status).toBe(200)
    expect((await get('/admin/config/1', host)).status).not.toBe(421)
  }
  expect((await get('/healthz', `127.0.0.1:${Number(port) + 1}`)).status).toBe(421)
})
