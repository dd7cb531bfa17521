'use strict'

const net = require('node:net')
const { logEntries, ENDPOINTS, DAY_MS } = require('../lib/log-entries')
const { log: { serializeEntry } } = require('../../../index.js')

const DAY = Date.UTC(2026, 10, 25)

test('the same seed gives the same entries; another seed others', () => {
  const a = [...logEntries({ count: 200, dayStart: DAY })].map(serializeEntry)
  const b = [...logEntries({ count: 200, dayStart: DAY })].map(serializeEntry)
  const c = [...logEntries({ count: 200, dayStart: DAY, seed: 7 })].map(serializeEntry)
  expect(a).toEqual(b)
  expect(c).not.toEqual(a)
})

test('entries spread over the day in time order, over the ids and the five endpoints', () => {
  const entries = [...logEntries({ count: 20000, dayStart: DAY })]
  expect(entries[0].ts).toBe(DAY)
  expect(entries[entries.length - 1].ts).toBeLessThan(DAY + DAY_MS)
  expect(entries[entries.length - 1].ts).toBeGreaterThan(DAY + DAY_MS - 10000)
  expect(entries.every((e, i) => i === 0 || e.ts >= entries[i - 1].ts)).toBe(true)
  const ids = entries.map((e) => Number(e.id))
  expect(Math.min(...ids)).toBeGreaterThanOrEqual(1)
  expect(Math.max(...ids)).toBeLessThanOrEqual(10000)
  expect(new Set(ids).size).toBeGreaterThan(8000)
  expect(new Set(entries.map((e) => e.endpoint))).toEqual(new Set(ENDPOINTS))
  expect(ENDPOINTS).toHaveLength(5)
})

test('real-looking addresses, both families; user agents, referers, statuses and events', () => {
  const entries = [...logEntries({ count: 5000, dayStart: DAY })]
  const families = entries.map((e) => net.isIP(e.ip))
  expect(families.every((f) => f === 4 || f === 6)).toBe(true)
  const v6 = families.filter((f) => f === 6).length / entries.length
  expect(v6).toBeGreaterThan(0.15)
  expect(v6).toBeLessThan(0.45)
  expect(entries.every((e) => /^Mozilla\/5\.0 \(/.test(e.ua))).toBe(true)
  expect(entries.some((e) => e.ref === null)).toBe(true)
  expect(entries.filter((e) => e.ref).every((e) => /^https:\/\/[a-z.]+\.example\.(com|org|net)\//.test(e.ref))).toBe(true)
  const events = entries.filter((e) => 'event' in e)
  expect(events.length / entries.length).toBeGreaterThan(0.05)
  expect(events.length / entries.length).toBeLessThan(0.15)
  const statuses = new Set(entries.filter((e) => 'status' in e).map((e) => e.status))
  expect(statuses).toEqual(new Set([200, 304, 400, 503]))
})

test('an id mostly comes back from the same device', () => {
  const byId = new Map()
  for (const e of logEntries({ count: 20000, ids: 100, dayStart: DAY })) {
    if (!byId.has(e.id)) byId.set(e.id, new Map())
    const seen = byId.get(e.id)
    seen.set(e.ip, (seen.get(e.ip) || 0) + 1)
  }
  for (const seen of byId.values()) {
    const total = [...seen.values()].reduce((a, b) => a + b, 0)
    expect(Math.max(...seen.values()) / total).toBeGreaterThan(0.7)
  }
})
