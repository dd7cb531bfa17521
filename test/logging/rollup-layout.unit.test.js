'use strict'

// The rollup table's keys and groups (logging/rollup/layout.js), no JVM.

const {
  MINUTE_MS,
  minuteOf,
  rollupKey,
  minuteOfRollupKey,
  minuteOfLogRow,
  rollupGroupOf,
  parseGroup,
  totalsOf
} = require('../../logging/rollup/layout')
const { accessLogRowKey } = require('../../logging/access-log-layout')

test('keys sort by minute, per log table and kind; a key gives its minute back', () => {
  const minutes = [0, MINUTE_MS, 9 * MINUTE_MS, 10 * MINUTE_MS, 1795537200000, 1795537260000]
  const keys = minutes.map((m) => rollupKey('c', 'beacon_access_log', m))
  expect([...keys].sort()).toEqual(keys)
  expect(keys.map(minuteOfRollupKey)).toEqual(minutes)
  expect(rollupKey('m', 'a', 0) < rollupKey('m', 'b', 0)).toBe(true)
  expect(rollupKey('c', 't', 0).startsWith('c/t/')).toBe(true)
})

test('the minute of an access-log row comes from its key, whatever its bucket and suffix', () => {
  const ts = 1795537234567
  for (const bucket of [0, 7, 15, 255]) expect(minuteOfLogRow(accessLogRowKey(bucket, ts, 'p123-w1-42'))).toBe(minuteOf(ts))
  expect(minuteOf(ts)).toBe(1795537200000)
})

test('groups: endpoint, id, status class; events and entries without an id have groups of their own; a group parses back', () => {
  const human = { bot: false, variant: null }
  const groupOf = (entry) => parseGroup(rollupGroupOf(entry))
  expect(groupOf({ endpoint: 'sample5', id: '42', status: 200 })).toEqual({ endpoint: 'sample5', id: '42', class: '2xx', ...human })
  expect(groupOf({ endpoint: 'sample5', id: null, status: 404 })).toEqual({ endpoint: 'sample5', id: '', class: '4xx', ...human })
  expect(parseGroup(rollupGroupOf({ endpoint: 'sample5', id: '7', event: 'exposure' }))).toEqual({
    endpoint: 'sample5',
    id: '7',
    class: 'event',
    ...human
  })
  // A bot's group: "bot" after the class; a person's (and an entry from before bots were told
  // apart) keeps the three members rollups have always had.
  expect(rollupGroupOf({ endpoint: 'sample5', id: '42', status: 200, bot: true })).toBe('["sample5","42","2xx","bot"]')
  expect(rollupGroupOf({ endpoint: 'sample5', id: '42', status: 200, bot: false })).toBe('["sample5","42","2xx"]')
  expect(parseGroup('["sample5","42","2xx","bot"]')).toEqual({ endpoint: 'sample5', id: '42', class: '2xx', bot: true, variant: null })
  // A variant's: who and the variant after the class.
  expect(rollupGroupOf({ endpoint: 'sample5', id: '42', status: 200, bot: false, variant: 'B' })).toBe('["sample5","42","2xx","human","B"]')
  expect(rollupGroupOf({ endpoint: 'sample5', id: '42', event: 'exposure', bot: true, variant: 'B' })).toBe(
    '["sample5","42","event","bot","B"]'
  )
  expect(parseGroup('["sample5","42","2xx","human","B"]')).toEqual(
    { endpoint: 'sample5', id: '42', class: '2xx', bot: false, variant: 'B' })
  expect(rollupGroupOf({ endpoint: 'sample5', id: '4', status: 200 })).not.toBe(
    rollupGroupOf({ endpoint: 'sample5', id: '42', status: 200 })
  )
  // A separator inside an id cannot make two groups one (JSON, not joined strings).
  expect(rollupGroupOf({ endpoint: 'a|b', id: 'c', status: 200 })).not.toBe(rollupGroupOf({ endpoint: 'a', id: 'b|c', status: 200 }))
})

test('totals: counts summed over ids, by endpoint and class', () => {
  const groups = new Map([
    [rollupGroupOf({ endpoint: 'sample5', id: '1', status: 200 }), 3],
    [rollupGroupOf({ endpoint: 'sample5', id: '2', status: 204 }), 4],
    [rollupGroupOf({ endpoint: 'sample5', id: '2', status: 503 }), 1],
    [rollupGroupOf({ endpoint: 'sample4', id: null, status: 200 }), 2],
    [rollupGroupOf({ endpoint: 'sample5', id: '1', status: 200, bot: true }), 5],
    [rollupGroupOf({ endpoint: 'sample5', id: '3', status: 200, bot: true }), 6]
  ])
  expect(Object.fromEntries(totalsOf(groups))).toEqual({
    '["sample5","*","2xx"]': 7,
    '["sample5","*","5xx"]': 1,
    '["sample4","*","2xx"]': 2,
    '["sample5","*","2xx","bot"]': 11
  })
})
