'use strict'

// The change streams (GET /api/<name>/changes) over real sockets against the real HBase, on two
// beacons that share a config table of this file's own, as two hosts do: a toggle PUT through
// the admin API reaches the streams of its id within 1 s on the host where it was made and on
// the other; the refetch it triggers reads the new config; a switch of an endpoint reaches its
// watchers; heartbeats; Last-Event-ID; the cap; close() ends every stream.

const { startBeacon } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { ofrepPost } = require('../support/ofrep-client')
const { openStream, isRefetch } = require('../support/sse-client')
const { main: cli } = require('../../bin/beacon')
const { until } = require('../support/until')

const TOKEN = 'test-token-0123456789-0123456789ab'
const ID = `sse${process.pid}`
const CONFIG_TABLE = uniqueTable('cfg')
// Host B polls the change feed; 200 ms keeps this file short. The bound under test is the
// product's (a change heard within 1 s), not the poll's. Every change is made on host A, which
// hears its own at once and polls nothing: a poll would hear each of them a second time and
// re-read the id, at a moment no test chooses.
const POLL_MS = 200
const hbaseA = { configTable: CONFIG_TABLE, controlPollMs: 0 }
const hbaseB = { configTable: CONFIG_TABLE, controlPollMs: POLL_MS }
let hostA
let hostB
const streams = []

beforeAll(async () => {
  const admin = testClient()
  await admin.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await admin.close()
  const endpoints = { sample3: { ofrep: { maxStreams: 3, heartbeatMs: 300 } } }
  ;[hostA, hostB] = await Promise.all([
    startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { hbase: hbaseA, endpoints } }),
    startBeacon({ overrides: { hbase: hbaseB, endpoints } })
  ])
})

afterEach(() => {
  for (const s of streams.splice(0)) s.close()
})

afterAll(async () => {
  await Promise.all([hostA && hostA.close(), hostB && hostB.close()])
  const admin = testClient()
  await admin.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await admin.close()
})

async function open (host, path, headers = {}) {
  const stream = await openStream(host.url + path, { headers })
  streams.push(stream)
  expect(stream.status).toBe(200)
  await stream.find((b) => b.retry !== undefined) // open, and registered: the first bytes are written after
  return stream
}

function put (path, body) {
  return fetch(`${hostA.adminUrl}${path}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body)
  }).then((res) => expect(res.status).toBe(200))
}

const bulk = (host, id, { query = '', headers = {} } = {}) =>
  ofrepPost(`${host.url}/api/sample5/ofrep/v1/evaluate/flags${query}`, { targetingKey: id, headers })
const variantOf = (res) => res.json.flags.find((f) => f.key === 'variant').value

test('a PUT through the admin API reaches the id\'s streams within 1 s, on this host and another; the refetch reads it', async () => {
  const id = ID + 'a'
  await put(`/admin/config/${id}`, { variant: 'A' })
  // Host B hears of a new id within a change-feed poll (its known-id filter holds no row for it
  // before); then it caches the old config.
  let before
  const served = (res) => res.json.flags.find((f) => f.key === 'variant')?.value // none in the default config
  await until('host B serves the new id', async () => served((before = await bulk(hostB, id))) === 'A', 5000)
  const here = await open(hostA, `/api/sample5/changes?id=${id}`)
  const there = await open(hostB, `/api/sample5/changes?id=${id}`)
  const other = await open(hostA, `/api/sample5/changes?id=${id}x`)
  const events = [here.next(isRefetch), there.next(isRefetch)]
  const sent = performance.now()
  await put(`/admin/config/${id}`, { variant: 'B' })
  const [a, b] = await Promise.all(events)
  console.log(`change stream: PUT → event ${(a.at - sent).toFixed(0)} ms on this host, ${(b.at - sent).toFixed(0)} ms on the other`)
  expect(a.at - sent).toBeLessThan(1000)
  expect(b.at - sent).toBeLessThan(1000)
  const data = JSON.parse(b.data)
  expect(data).toEqual({ type: 'refetchEvaluation', lastModified: expect.any(Number) })
  expect(Math.abs(data.lastModified * 1000 - Date.now())).toBeLessThan(60000)
  // What the web provider sends: its ETag and the event's lastModified. A 200 with the new config.
  const query = `?flagConfigLastModified=${data.lastModified}`
  const refetch = await bulk(hostB, id, { query, headers: { 'If-None-Match': before.headers.etag } })
  expect(refetch.status).toBe(200)
  expect(variantOf(refetch)).toBe('B')
  // Another id's stream heard nothing of it (it may have been told at its opening that this
  // young worker cannot vouch for what came before: an event without lastModified).
  expect(other.blocks.filter((block) => block.data !== undefined && JSON.parse(block.data).lastModified)).toEqual([])
})

test('a refetch of a change this worker has not heard of reads the store; without lastModified it reads its cache', async () => {
  const id = ID + 'g'
  await put(`/admin/config/${id}`, { variant: 'A' })
  expect(variantOf(await bulk(hostA, id))).toBe('A')
  // Written past beacon (no broadcast, no change feed): no worker hears of it, as a worker that
  // has not polled yet has not heard of a change made on another host.
  const writer = testClient()
  const write = (variant) => writer.put(CONFIG_TABLE, id, { c: { json: JSON.stringify({ variant }) } })
  await write('C')
  await writer.close()
  expect(variantOf(await bulk(hostA, id))).toBe('A')
  const changedAt = Math.floor(Date.now() / 1000)
  expect(variantOf(await bulk(hostA, id, { query: `?flagConfigLastModified=${changedAt}` }))).toBe('C')
  expect(variantOf(await bulk(hostA, id))).toBe('C') // and the cache has it now
})

test('a switch of an endpoint reaches its watchers, once every host has applied it', async () => {
  const id = ID + 's'
  const s = await open(hostB, `/api/sample5/changes?id=${id}`)
  const got = s.next(isRefetch, 10000)
  await put('/admin/endpoints/sample5', { enabled: false })
  try {
    const event = await got
    expect(JSON.parse(event.data)).toEqual({ type: 'refetchEvaluation' })
    const [onA, onB] = await Promise.all([bulk(hostA, id), bulk(hostB, id)])
    expect([onA.json.flags, onB.json.flags]).toEqual([[{ key: 'features', reason: 'DISABLED' }], [{ key: 'features', reason: 'DISABLED' }]])
    const back = s.next(isRefetch, 10000)
    await put('/admin/endpoints/sample5', { enabled: true })
    await back
    expect((await bulk(hostA, id)).json.flags[0].reason).not.toBe('DISABLED')
  } finally {
    await put('/admin/endpoints/sample5', { enabled: true })
  }
})

test('heartbeats: a comment line every heartbeatMs on a quiet stream', async () => {
  const s = await open(hostA, `/api/sample3/changes?id=${ID}h`)
  const beat = await s.next((block) => block.comment !== undefined)
  expect(beat).toEqual({ comment: '', at: expect.any(Number) })
  expect(s.body()).toMatch(/\n\n:\n\n/)
})

test('Last-Event-ID: a reconnect after a change (made with the CLI) it missed is told at once; one that missed nothing is not', async () => {
  const id = ID + 'r'
  const first = await open(hostA, `/api/sample3/changes?id=${id}`)
  const stamp = first.blocks[0].id
  first.close()
  const env = { ...process.env }
  Object.assign(process.env, { BEACON_ADMIN_URL: hostA.adminUrl, BEACON_ADMIN_TOKEN: TOKEN })
  try {
    await cli(['config', 'set', id, '{"variant":"R"}'])
  } finally {
    process.env = env
  }
  const missed = await open(hostB, `/api/sample3/changes?id=${id}`, { 'Last-Event-ID': stamp })
  expect(JSON.parse((await missed.find(isRefetch)).data).type).toBe('refetchEvaluation')
  // Long after the change (past the margin): a reconnect with a fresh stamp gets its opening,
  // then heartbeats, and no event.
  await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS + 2500))
  const later = await open(hostB, `/api/sample3/changes?id=${id}`)
  const fresh = await open(hostB, `/api/sample3/changes?id=${id}`, { 'Last-Event-ID': later.blocks[0].id })
  await fresh.find((block) => block.comment !== undefined)
  expect(fresh.blocks.filter(isRefetch)).toEqual([])
})

test('the cap: past maxStreams a worker refuses 503 TOO_MANY_STREAMS with Retry-After', async () => {
  // The earlier tests' streams are closed; the server sees that on its side a moment later.
  while (hostA.beacon.streams.stats().open.sample3 > 0) await new Promise((resolve) => setImmediate(resolve))
  for (let i = 0; i < 3; i++) await open(hostA, `/api/sample3/changes?id=${ID}c${i}`)
  const refused = await ofrepPost(`${hostA.url}/api/sample3/changes?id=${ID}c3`, { method: 'GET' })
  expect(refused.status).toBe(503)
  expect(refused.headers['retry-after']).toBe('5')
  expect(refused.json.error).toMatchObject({ status: 503, code: 'TOO_MANY_STREAMS' })
  const metrics = await hostA.metrics.metrics()
  expect(metrics).toMatch(/^beacon_change_streams\{endpoint="sample3"\} 3$/m)
  expect(metrics).toMatch(/^beacon_change_stream_events_total\{endpoint="sample3",outcome="TOO_MANY_STREAMS"\} 1$/m)
})

test('close() ends every stream, so the drain is not held up by them', async () => {
  const open2 = [await open(hostB, `/api/sample5/changes?id=${ID}z`), await open(hostB, `/api/sample3/changes?id=${ID}z`)]
  const { forced } = await hostB.beacon.close()
  expect(forced).toBe(false)
  // Ended cleanly (the terminating chunk, not a reset), after their opening.
  expect(await Promise.all(open2.map((s) => s.ended))).toEqual([true, true])
  for (const s of open2) expect(s.body()).toMatch(/^retry: \d+\nid: \d+\n\n/)
})
