'use strict'

// GET /admin/log/scan and /admin/log/count on a real beacon and the real HBase: known rows
// written into the beacon's own access-log table (16 buckets, 4 regions) at a time in the past,
// read back through the admin port.

const http = require('node:http')
const express = require('express')
const { startBeacon } = require('../support/beacon')
const { until } = require('../support/until')
const { createLogQueryRouter } = require('../../api/admin/log')
const { accessLogRowKey } = require('../../logging/access-log-layout')
const { accessEntry, serializeEntry } = require('../../logging/access-entry')
const { ERRORS } = require('../../lib/errors')

const TOKEN = 'log-token-0123456789-0123456789abc'
const FROM = Date.UTC(2025, 2, 1, 12)
const TO = FROM + 10 * 60 * 1000
// A second range, of large rows: enough bytes to fill every buffer between server and client.
const BIG_FROM = Date.UTC(2025, 3, 1, 12)
const BIG_TO = BIG_FROM + 60 * 60 * 1000
const BIG_ROWS = 20000

let app
const rows = [] // [{ ts, key, entry }] written in [FROM, TO)

const auth = { Authorization: `Bearer ${TOKEN}` }
const get = (path, headers = auth) => fetch(app.adminUrl + path, { headers })
const range = (from = FROM, to = TO) => `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`

beforeAll(async () => {
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN } })
  const puts = []
  for (let i = 0; i < 600; i++) {
    const ts = FROM + i * 1000
    const entry = accessEntry({
      ts,
      endpoint: 'sample5',
      id: String(i % 12),
      status: i % 10 === 0 ? 404 : 200,
      ms: 1.5,
      ip: '10.0.0.1',
      ua: i % 50 === 0 ? '=cmd|calc, "x"' : 'ua',
      ref: null
    })
    const key = accessLogRowKey(i % 16, ts, `t-${i}`)
    puts.push({ row: key, cells: { l: { e: serializeEntry(entry) } } })
    rows.push({ ts, key, entry })
  }
  const ua = 'u'.repeat(512)
  for (let i = 0; i < BIG_ROWS; i++) {
    const ts = BIG_FROM + i * 100
    puts.push({
      row: accessLogRowKey(i % 16, ts, `big-${i}`),
      cells: { l: { e: serializeEntry(accessEntry({ ts, endpoint: 'sample5', id: 'big', status: 200, ms: 1, ua, ref: ua })) } }
    })
  }
  expect((await app.client.multiPut(app.accessLogTable, puts, { timeout: 30000 })).filter(Boolean)).toEqual([])
})

afterAll(async () => {
  if (app) await app.close()
})

describe('the token guard', () => {
  test.each(['/admin/log/scan', '/admin/log/count'])('%s without a token, or with a wrong one, is 401 and reads nothing', async (path) => {
    const before = app.beacon.logQuery.stats().queries
    for (const headers of [{}, { Authorization: 'Bearer wrong' }, { Authorization: TOKEN }]) {
      const res = await get(`${path}?${range()}`, headers)
      expect(res.status).toBe(401)
      expect((await res.json()).error.code).toBe('UNAUTHORIZED')
    }
    expect(app.beacon.logQuery.stats().queries).toBe(before)
  })
})

describe('scan', () => {
  test('NDJSON: every row of the range in time order, each entry as stored with its ts and key', async () => {
    const res = await get(`/admin/log/scan?${range()}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const lines = (await res.text()).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((l) => JSON.parse(l))).toEqual(rows.map((r) => ({ ...r.entry, key: r.key })))
  })

  test('filters, limit, and the next page after the last key', async () => {
    const ndjson = async (query) =>
      (await (await get(`/admin/log/scan?${range()}&${query}`)).text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    const id3 = await ndjson('id=3')
    expect(id3.map((e) => e.key)).toEqual(rows.filter((r) => r.entry.id === '3').map((r) => r.key))
    expect((await ndjson('status=404&id=0')).map((e) => e.key)).toEqual(
      rows.filter((r) => r.entry.id === '0' && r.entry.status === 404).map((r) => r.key)
    )
    expect(await ndjson('endpoint=sample4')).toEqual([])
    const page1 = await ndjson('id=3&limit=20')
    const page2 = await ndjson(`id=3&limit=20&after=${page1[19].key}`)
    expect([...page1, ...page2].map((e) => e.key)).toEqual(id3.slice(0, 40).map((e) => e.key))
  })

  test('CSV: a header line, then one line per row, formulas defused', async () => {
    const res = await get(`/admin/log/scan?${range()}&format=csv&limit=51`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const lines = (await res.text()).split('\r\n')
    expect(lines.shift()).toBe('ts,time,endpoint,id,status,event,variant,ms,ip,ua,ref,key,bot,version')
    expect(lines.pop()).toBe('')
    expect(lines).toHaveLength(51)
    expect(lines[1]).toBe(`${FROM + 1000},${new Date(FROM + 1000).toISOString()},sample5,1,200,,,1.5,10.0.0.1,ua,,${rows[1].key},true,`)
    expect(lines[0]).toContain(',"\'=cmd|calc, ""x""",')
    expect(lines[50]).toContain(',"\'=cmd|calc, ""x""",')
  })

  test('an empty range answers 200 with no rows (CSV: the header alone)', async () => {
    const empty = range(FROM - 60000, FROM)
    expect(await (await get(`/admin/log/scan?${empty}`)).text()).toBe('')
    expect(await (await get(`/admin/log/scan?${empty}&format=csv`)).text()).toBe(
      'ts,time,endpoint,id,status,event,variant,ms,ip,ua,ref,key,bot,version\r\n'
    )
  })

  test('a client that goes away mid-scan closes every bucket\'s scanner; the server stays well', async () => {
    const query = app.beacon.logQuery
    const before = query.stats().stoppedEarly
    const req = http.get(`${app.adminUrl}/admin/log/scan?${range(BIG_FROM, BIG_TO)}`, { headers: auth })
    const res = await new Promise((resolve, reject) => { req.on('response', resolve); req.on('error', reject) })
    expect(res.statusCode).toBe(200)
    // Read one chunk, then stop reading: the server's writes back up and its scan waits.
    await new Promise((resolve) => res.once('data', resolve))
    res.pause()
    expect(query.stats().openScans).toBe(16)
    req.on('error', () => {})
    req.destroy()
    await until('every bucket scan closed', () => query.stats().openScans === 0, 10000)
    // It stopped there: the scan did not run on to the end of the range.
    expect(query.stats().stoppedEarly).toBe(before + 1)
    expect((await get(`/admin/log/count?${range()}`)).status).toBe(200)
  })
})

describe('count', () => {
  test('JSON: the exact total, the range as ISO-8601, the filters', async () => {
    const res = await get(`/admin/log/count?${range()}&id=3`)
    expect(res.status).toBe(200)
    const body = await res.json()
    // These rows were written behind the sink's back, unmarked: the rollups cover none of the
    // range's 10 minutes, so every one is counted from its raw rows (not taken as empty).
    expect(body).toEqual({
      total: 50,
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
      filters: { id: '3' },
      scanned: 50,
      source: { rollupMinutes: 0, scannedMinutes: 10 },
      // The test's table keeps its rows forever: nothing can be missing (docs/access-log.md#retention).
      horizon: expect.objectContaining({ known: true, rows: null, retention: 'forever', complete: true }),
      ms: expect.any(Number)
    })
    expect((await (await get(`/admin/log/count?${range()}`)).json()).total).toBe(600)
  })

  test('by status and by minute: groups that add up to the total', async () => {
    const byStatus = await (await get(`/admin/log/count?${range()}&by=status`)).json()
    expect(byStatus).toMatchObject({ total: 600, by: 'status', groups: [{ key: '200', count: 540 }, { key: '404', count: 60 }] })
    const byMinute = await (await get(`/admin/log/count?${range()}&by=minute&id=0`)).json()
    expect(byMinute.groups).toEqual(Array.from({ length: 10 }, (_, m) => ({ key: new Date(FROM + m * 60000).toISOString(), count: 5 })))
  })

  test('a client that goes away mid-count ends its scans', async () => {
    const query = app.beacon.logQuery
    const before = query.stats().stoppedEarly
    const req = http.get(`${app.adminUrl}/admin/log/count?${range(BIG_FROM, BIG_TO)}&by=id`, { headers: auth })
    req.on('error', () => {})
    await until('the count started', () => query.stats().openScans > 0, 10000, 2)
    req.destroy()
    await until('every bucket scan closed', () => query.stats().openScans === 0, 10000)
    expect(query.stats().stoppedEarly).toBe(before + 1)
  })
})

describe('bad input: a 400 from the error table, naming the parameter, echoing nothing', () => {
  const XSS = '<script>alert(1)</script>'
  test.each([
    ['no from', '/admin/log/count?to=now', 'BAD_TIME', 'from is required'],
    ['a bad from', `/admin/log/scan?from=${encodeURIComponent(XSS)}`, 'BAD_TIME', 'from'],
    ['a bad to', '/admin/log/count?from=-1h&to=tomorrow', 'BAD_TIME', 'to'],
    ['from after to', '/admin/log/scan?from=-1h&to=-2h', 'BAD_TIME_RANGE', null],
    ['an unknown parameter', `/admin/log/count?from=-1h&${encodeURIComponent(XSS)}=1`, 'BAD_LOG_QUERY', 'an unknown parameter was given'],
    ['a repeated parameter', '/admin/log/scan?from=-1h&id=1&id=2', 'BAD_LOG_QUERY', 'id may be given once'],
    ['an id with a quote', `/admin/log/count?from=-1h&id=${encodeURIComponent('4"' + XSS)}`, 'BAD_LOG_QUERY', 'id must be'],
    ['a bad status', '/admin/log/count?from=-1h&status=2xx', 'BAD_LOG_QUERY', 'status must be'],
    ['a bad limit', '/admin/log/scan?from=-1h&limit=-1', 'BAD_LOG_QUERY', 'limit must be'],
    ['a bad format', `/admin/log/scan?from=-1h&format=${encodeURIComponent(XSS)}`, 'BAD_LOG_QUERY', 'format must be'],
    ['a bad by', '/admin/log/count?from=-1h&by=ua', 'BAD_LOG_QUERY', 'by must be'],
    ['a bad cursor', `/admin/log/scan?from=-1h&after=${encodeURIComponent(XSS)}`, 'BAD_LOG_QUERY', 'after must be']
  ])('%s', async (name, path, code, detail) => {
    const res = await get(path)
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const text = await res.text()
    expect(text).not.toContain('script')
    const { error } = JSON.parse(text)
    expect(error.code).toBe(code)
    expect(error.message.startsWith(ERRORS[code].message)).toBe(true)
    if (detail) expect(error.message).toContain(detail)
  })
})

test('HBase unable to serve the query: 503 LOG_UNAVAILABLE with the HBase code, not a 500', async () => {
  const other = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: TOKEN },
    overrides: { logSinks: { hbase: { table: 't_no_such_access_log' } } }
  })
  try {
    for (const path of ['/admin/log/count', '/admin/log/scan']) {
      const res = await fetch(`${other.adminUrl}${path}?from=-1h`, { headers: auth })
      expect(res.status).toBe(503)
      expect((await res.json()).error).toEqual({
        status: 503,
        code: 'LOG_UNAVAILABLE',
        message: `${ERRORS.LOG_UNAVAILABLE.message}: HBASE_TABLE_NOT_FOUND`
      })
    }
  } finally {
    await other.close()
  }
})

test('without an HBase access log configured: 404 LOG_NOT_CONFIGURED', async () => {
  const router = express()
  router.use(createLogQueryRouter({ logQuery: null, logger: { warn () {}, error () {} } }))
  const server = router.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/admin/log/count?from=-1h`)
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe('LOG_NOT_CONFIGURED')
  } finally {
    server.close()
  }
})
