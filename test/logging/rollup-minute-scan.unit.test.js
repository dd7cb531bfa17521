'use strict'

// The rollup job's group of a raw access-log row (logging/rollup/minute-scan.js), no JVM: the
// group read from an entry's first bytes is the one parsing the whole entry gives.

const { rollupGroupOfRow } = require('../../logging/rollup/minute-scan')
const { rollupGroupOf, totalsOf } = require('../../logging/rollup/layout')
const { accessEntry, eventEntry, serializeEntry } = require('../../logging/access-entry')

const UNREADABLE = JSON.stringify(['', '', 'unreadable'])
const row = (value) => ({ row: Buffer.from('k'), cells: value === undefined ? [] : [{ value: Buffer.from(value, 'utf8') }] })

/** What the job counted a row as before it read heads: the whole value parsed. */
function parsedWhole (value) {
  try {
    const entry = JSON.parse(value)
    return entry !== null && typeof entry === 'object' ? rollupGroupOf(entry) : UNREADABLE
  } catch {
    return UNREADABLE
  }
}

test('an access entry is counted in the group its whole JSON gives, whatever its other fields', () => {
  const entries = []
  for (const status of [200, 204, 304, 400, 404, 413, 503]) {
    for (const id of ['1', 'abc_DEF-9', null, 'x'.repeat(64)]) {
      entries.push(
        accessEntry({
          ts: 1795537234567,
          endpoint: 'sample5',
          id,
          status,
          ms: 0.123,
          ip: '127.0.0.1',
          ua: 'Mozilla/5.0 "quoted" \\ ünï',
          ref: null
        })
      )
    }
  }
  entries.push(accessEntry({ ts: 1, endpoint: 'a', id: '1', status: 200, ms: 1, ip: null, ua: null, ref: 'http://x/?q="}' }))
  for (const entry of entries) {
    const value = serializeEntry(entry)
    expect(rollupGroupOfRow(row(value))).toBe(parsedWhole(value))
  }
  expect(rollupGroupOfRow(row(serializeEntry(entries[0])))).toBe(JSON.stringify(['sample5', '1', '2xx']))
})

test('events, other JSON and values that are no entry are parsed whole, as before', () => {
  const values = [
    serializeEntry(
      eventEntry({ ts: 1795537234567, endpoint: 'sample5', id: '7', event: 'exposure', variant: 'b', ip: null, ua: null, ref: null })
    ),
    JSON.stringify({ ts: 1, endpoint: 'a', id: 1, status: 200 }), // id not a string: not the entry head
    JSON.stringify({ endpoint: 'a', status: 500 }),
    '{"ts":1,"endpoint":"a","id":null,"status":200.5,"ms":1}',
    '{"ts":1,"endpoint":"a","id":null,"status":200,"ms":1', // cut short
    '[1,2]',
    'null',
    'not json',
    ''
  ]
  for (const value of values) expect(rollupGroupOfRow(row(value))).toBe(parsedWhole(value))
  expect(rollupGroupOfRow(row(undefined))).toBe(UNREADABLE)
})

test('the counts by key add up to the counts by group, whichever keys share a group; as the job writes them too', () => {
  const { groupKeyOfValue, groupsOfKeys, countsOfKeys } = require('../../logging/rollup/group-keys')
  const values = []
  for (const status of [200, 204, 304, 404, 503, 5, 99, 1000, 1050]) {
    for (const id of ['1', '22', null, '']) {
      values.push(serializeEntry(accessEntry({ ts: 1795537234567, endpoint: 'sample5', id, status, ms: 1, ip: null, ua: 'x', ref: null })))
    }
  }
  for (const event of ['exposure', 'click']) {
    for (const id of ['1', '']) {
      const entry = eventEntry({ ts: 1795537234567, endpoint: 'sample5', id, event, variant: null, ip: null, ua: null, ref: null })
      values.push(serializeEntry(entry))
    }
  }
  // Parsed whole, yet the group of heads above: added to theirs.
  values.push(JSON.stringify({ endpoint: 'sample5', id: '1', status: 201 }), JSON.stringify({ endpoint: 'sample5', id: '1', event: 'x' }))
  values.push('not json', JSON.stringify({ endpoint: 'é"', id: 7, status: 500 }))
  const keys = new Map()
  const expected = new Map()
  values.forEach((value, i) => {
    const key = groupKeyOfValue(Buffer.from(value, 'utf8'))
    keys.set(key, (keys.get(key) || 0) + i + 1)
    const group = parsedWhole(value)
    expected.set(group, (expected.get(group) || 0) + i + 1)
  })
  const { groups, totals } = groupsOfKeys(keys)
  expect(groups).toEqual(expected)
  expect(totals).toEqual(totalsOf(expected))
  const written = countsOfKeys(keys)
  expect(new Set(written.groups.map(([q]) => q)).size).toBe(written.groups.length) // one cell per group
  expect(new Map(written.groups)).toEqual(expected)
  expect(written.totals).toEqual(totalsOf(expected))
  // Events of any name are one group; statuses of a class are one key.
  const exposure = groupKeyOfValue(Buffer.from(values.find((v) => v.includes('"exposure"') && v.includes('"id":"1"'))))
  const click = groupKeyOfValue(Buffer.from(values.find((v) => v.includes('"click"') && v.includes('"id":"1"'))))
  expect(exposure).toBe(click)
  expect(groupKeyOfValue(Buffer.from(values[0]))).toBe(groupKeyOfValue(Buffer.from(values[4])))
})

test('bots: a bot\'s entry and event have groups of their own; an entry from before bots were told apart counts as a person\'s', () => {
  const { groupKeyOfValue, groupsOfKeys, countsOfKeys } = require('../../logging/rollup/group-keys')
  const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
  const at = { ts: 1795537234567, endpoint: 'sample5', id: '9', ip: null, ref: null }
  const view = (ua, status = 200) => serializeEntry(accessEntry({ ...at, status, ms: 1, ua }))
  const event = (ua) => serializeEntry(eventEntry({ ...at, event: 'exposure', ua }))
  const before = '{"ts":1795537234567,"endpoint":"sample5","id":"9","status":200,"ms":1,"ip":null,"ua":null,"ref":null}'
  const values = [view(BROWSER), view('Googlebot/2.1'), view(null, 404), event(BROWSER), event('curl/8.5.0'), before, view(BROWSER, 1000)]
  for (const value of values) expect(rollupGroupOfRow(row(value))).toBe(parsedWhole(value))
  expect(values.map((v) => rollupGroupOfRow(row(v)))).toEqual([
    '["sample5","9","2xx"]', '["sample5","9","2xx","bot"]', '["sample5","9","4xx","bot"]',
    '["sample5","9","event"]', '["sample5","9","event","bot"]', '["sample5","9","2xx"]', '["sample5","9","10xx"]'
  ])
  const keys = new Map()
  for (const value of [...values, view(BROWSER), before]) {
    const key = groupKeyOfValue(Buffer.from(value))
    keys.set(key, (keys.get(key) || 0) + 1)
  }
  const expected = {
    '["sample5","9","2xx"]': 4,
    '["sample5","9","2xx","bot"]': 1,
    '["sample5","9","4xx","bot"]': 1,
    '["sample5","9","event"]': 1,
    '["sample5","9","event","bot"]': 1,
    '["sample5","9","10xx"]': 1
  }
  expect(Object.fromEntries(groupsOfKeys(keys).groups)).toEqual(expected)
  expect(Object.fromEntries(countsOfKeys(keys).groups)).toEqual(expected)
  expect(Object.fromEntries(countsOfKeys(keys).totals)).toEqual({
    '["sample5","*","2xx"]': 4,
    '["sample5","*","2xx","bot"]': 1,
    '["sample5","*","4xx","bot"]': 1,
    '["sample5","*","event"]': 1,
    '["sample5","*","event","bot"]': 1,
    '["sample5","*","10xx"]': 1
  })
})

test('variants: views and events count per variant; entries from before variants count as no variant\'s', () => {
  const { groupKeyOfValue, groupsOfKeys, countsOfKeys, groupOfKey } = require('../../logging/rollup/group-keys')
  const at = { ts: 1795537234567, endpoint: 'sample5', id: '9', ip: null, ua: 'curl/8.5.0', ref: null }
  const view = (variant, status = 200) => serializeEntry(accessEntry({ ...at, variant, status, version: `v1-${variant}`, ms: 1 }))
  const event = (variant) => serializeEntry(eventEntry({ ...at, event: 'exposure', variant }))
  // How events and views were written before variants were recorded (variant after the event name).
  const oldEvent = (variant) => JSON.stringify(
    { ts: at.ts, endpoint: 'sample5', id: '9', bot: true, event: 'exposure', variant, ip: null })
  const oldView = '{"ts":1795537234567,"endpoint":"sample5","id":"9","bot":true,"status":200,"ms":1,"ip":null,"ua":null,"ref":null}'
  const values = [
    view('A'), view('B'), view('B'), view(null), view('B', 404), view('B', 1000),
    event('B'), event(null), oldEvent('B'), oldEvent(null), oldView
  ]
  for (const value of values) expect(rollupGroupOfRow(row(value))).toBe(parsedWhole(value))
  expect(values.map((v) => rollupGroupOfRow(row(v)))).toEqual([
    '["sample5","9","2xx","bot","A"]', '["sample5","9","2xx","bot","B"]', '["sample5","9","2xx","bot","B"]',
    '["sample5","9","2xx","bot"]', '["sample5","9","4xx","bot","B"]', '["sample5","9","10xx","bot","B"]',
    '["sample5","9","event","bot","B"]', '["sample5","9","event","bot"]', '["sample5","9","event","bot","B"]',
    '["sample5","9","event","bot"]', '["sample5","9","2xx","bot"]'
  ])
  // Read from the head (no whole parse) but for the old event that names a variant.
  const heads = values.map((v) => groupKeyOfValue(Buffer.from(v)))
  expect(heads.filter((k) => k.startsWith('[')).length).toBe(1)
  expect(groupOfKey(heads[1])).toEqual({ endpoint: 'sample5', id: '9', class: '2xx', bot: true, variant: 'B', plain: true })
  expect(groupOfKey(heads[10]).plain).toBe(false) // shares no-variant's group with view(null)
  const keys = new Map()
  for (const key of heads) keys.set(key, (keys.get(key) || 0) + 1)
  const expected = new Map()
  for (const value of values) expected.set(parsedWhole(value), (expected.get(parsedWhole(value)) || 0) + 1)
  expect(groupsOfKeys(keys).groups).toEqual(expected)
  const written = countsOfKeys(keys)
  expect(new Set(written.groups.map(([q]) => q)).size).toBe(written.groups.length)
  expect(new Map(written.groups)).toEqual(expected)
  expect(Object.fromEntries(written.totals)).toEqual({
    '["sample5","*","2xx","bot","A"]': 1,
    '["sample5","*","2xx","bot","B"]': 2,
    '["sample5","*","2xx","bot"]': 2,
    '["sample5","*","4xx","bot","B"]': 1,
    '["sample5","*","10xx","bot","B"]': 1,
    '["sample5","*","event","bot","B"]': 2,
    '["sample5","*","event","bot"]': 2
  })
})
