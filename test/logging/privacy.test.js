'use strict'

// End to end, through the root factory, real sockets and the real HBase: with `privacy.ip:
// truncate` on the file sink and on the HBase sink, no full client address reaches an HBase row
// or a file line, for page views and events alike, from IPv4 and from IPv6. The server listens
// dual-stack (`::`), so an IPv4 client arrives as `::ffff:127.0.0.1` and is stored as IPv4's
// /24; an IPv6 client (`::1`) as its /48. The HBase sink also honours opt-out, the file sink
// does not: one request, two policies, each sink gets its own copy, and every request is a row
// and a line either way. Then `hash`: the secret comes from the beacon's own config table, and
// shows in no row, no app log line, no /metrics and no /readyz.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { startBeacon, request } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { HASH_SECRET_ROW } = require('../../lib/toggles/store')

let app
let port
const SAMPLE5_LOGS_BOTH = { accessLog: ['hbase', 'file'], events: { names: ['exposure'], sinks: ['hbase', 'file'] } }

async function start (overrides) {
  app = await startBeacon({ overrides: { host: '::', ...overrides, endpoints: { sample5: SAMPLE5_LOGS_BOTH } } })
  port = new URL(app.url).port
}

afterEach(async () => {
  if (app) await app.close()
  app = null
})

/** One request to `host` (an IPv4 or IPv6 loopback literal); resolves with the status. */
function send (host, urlPath, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const options = { host, port, path: urlPath, method, headers: { 'User-Agent': 'privacy-e2e', ...headers }, agent: false }
    const req = http.request(options, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function rows () {
  await app.sinks.get('hbase').flush()
  const out = []
  for await (const row of app.client.scan(app.accessLogTable, {})) out.push(row.cells[0].value.toString())
  return out
}

async function lines () {
  await app.sinks.get('file').flush()
  const dir = path.dirname(app.settings.logSinks.file.path)
  return fs.readdirSync(dir).flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
}

test('views and events from 127.0.0.1 and ::1: only /24 and /48 networks are stored, in HBase and in the file', async () => {
  await start({ logSinks: { file: { privacy: { ip: 'truncate' } }, hbase: { privacy: { ip: 'truncate', honorOptOut: true } } } })
  expect(app.beacon.publicServer.address()).toMatchObject({ address: '::', family: 'IPv6' }) // dual-stack: IPv4 comes mapped
  const sent = { '127.0.0.1': 0, '::1': 0 }
  for (const host of ['127.0.0.1', '::1']) {
    for (let id = 1; id <= 3; id++) {
      expect(await send(host, `/api/sample5.js?id=${id}&callback=cb`)).toBe(200)
      expect(await send(host, `/api/sample5/events.gif?id=${id}&event=exposure`)).toBe(200)
    }
    const batch = JSON.stringify([{ id: '4', event: 'exposure' }, { id: '5', event: 'exposure', variant: 'B' }])
    expect(await send(host, '/api/sample5/events', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: batch })).toBe(204)
    expect(await send(host, '/api/sample5.js?id=x', { headers: { 'Sec-GPC': '1' } })).toBe(200)
    expect(await send(host, '/api/sample5.js?id=y', { headers: { DNT: '1' } })).toBe(200)
    sent[host] = 3 + 3 + 2 + 2
  }
  const stored = { hbase: await rows(), file: await lines() }
  for (const [sink, texts] of Object.entries(stored)) {
    expect({ sink, entries: texts.length }).toEqual({ sink, entries: sent['127.0.0.1'] + sent['::1'] })
    const all = texts.join('\n')
    const leaked = ['127.0.0.1', '::1"', '::ffff:', 'ffff'].filter((full) => all.includes(full))
    expect({ sink, leaked }).toEqual({ sink, leaked: [] })
    const entries = texts.map((t) => JSON.parse(t))
    const optedOut = entries.filter((e) => e.id === 'x' || e.id === 'y')
    const others = entries.filter((e) => e.id !== 'x' && e.id !== 'y')
    expect(others.map((e) => e.ip).sort()).toEqual([...new Array(8).fill('0:0:0::'), ...new Array(8).fill('127.0.0.0')])
    expect(new Set(others.map((e) => e.ua))).toEqual(new Set(['privacy-e2e']))
    // Opt-out: the HBase sink honours it (row written, nothing of the client), the file sink does not.
    expect(optedOut).toHaveLength(4)
    const expected = sink === 'hbase' ? { ip: null, ua: null } : { ua: 'privacy-e2e' }
    for (const e of optedOut) expect(sink === 'hbase' ? { ip: e.ip, ua: e.ua } : { ua: e.ua }).toEqual(expected)
  }
  expect(stored.file.filter((t) => JSON.parse(t).event === 'exposure')).toHaveLength(10)
})

test('hash: one 16-hex value per client a day, the same in both sinks; the secret is in the config table only', async () => {
  const admin = testClient()
  const configTable = uniqueTable('cfg_hash')
  await admin.admin.createTable(configTable, { families: ['c'] })
  try {
    await start({ hbase: { configTable }, logSinks: { file: { privacy: { ip: 'hash' } }, hbase: { privacy: { ip: 'hash' } } } })
    for (const host of ['127.0.0.1', '::1', '127.0.0.1']) expect(await send(host, '/api/sample5.js?id=1')).toBe(200)
    const stored = { hbase: (await rows()).map((t) => JSON.parse(t)), file: (await lines()).map((t) => JSON.parse(t)) }
    const [v4, v6, again] = stored.file.sort((a, b) => a.ts - b.ts).map((e) => e.ip)
    expect(v4).toMatch(/^[0-9a-f]{16}$/)
    expect(v6).toMatch(/^[0-9a-f]{16}$/)
    expect(again).toBe(v4)
    expect(v6).not.toBe(v4)
    expect(stored.hbase.map((e) => e.ip).sort()).toEqual([v4, v4, v6].sort())

    const secret = (await admin.get(configTable, HASH_SECRET_ROW)).cells[0].value
    expect(secret).toHaveLength(32)
    const forms = [secret.toString('hex'), secret.toString('base64'), secret.toString('base64url'), JSON.stringify(secret)]
    const seen = [
      JSON.stringify(app.logLines),
      (await request(app.adminUrl + '/metrics')).body,
      (await request(app.adminUrl + '/readyz')).body,
      ...Object.values(stored).map((entries) => JSON.stringify(entries))
    ].join('\n')
    expect(forms.filter((f) => seen.includes(f))).toEqual([])
  } finally {
    await admin.admin.deleteTable(configTable).catch(() => {})
    await admin.close()
  }
})
