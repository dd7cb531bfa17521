'use strict'

// Retention as settings, as a count reports it and as the CLI prints it: durations parsed and
// spelled back (config/duration.js), checked in the settings, the horizon of a count
// (logging/query/horizon.js), the erase route's parameters (logging/query/params.js), and the
// lines of `status`, `log retention` and `log count` (bin/log-lifecycle.js).

const { parseDuration, formatDuration } = require('../../config/duration')
const { loadSettings } = require('../../config')
const { countHorizon } = require('../../logging/query/horizon')
const { parseEraseQuery } = require('../../logging/query/params')
const { retentionLines, horizonWarning } = require('../../bin/log-lifecycle')
const { retentionChange } = require('../../api/admin/log-lifecycle')

const NOW = Date.UTC(2026, 10, 26, 12)
const DAY = 86400

/** The code of the error a call throws. */
const codeOf = (fn) => {
  try { fn() } catch (err) { return err.code }
}

test('durations: s, m, h, d, w or forever, at least a second and under what an HBase TTL holds', () => {
  expect(parseDuration('30s')).toBe(30)
  expect(parseDuration('15m')).toBe(900)
  expect(parseDuration('12h')).toBe(43200)
  expect(parseDuration('90d')).toBe(90 * DAY)
  expect(parseDuration('2w')).toBe(14 * DAY)
  expect(parseDuration('forever')).toBeNull()
  expect(parseDuration('3550w')).toBe(3550 * 7 * DAY)
  for (const bad of ['', '0s', '90', 'd', '1.5d', '-1d', '90D', '1y', ' 1d', '1d ', '3551w', '99999999999s', 'Forever', 90, null]) {
    expect(parseDuration(bad)).toBeUndefined()
  }
})

test('a TTL is spelled back in its largest whole unit', () => {
  expect(formatDuration(90 * DAY)).toBe('90d')
  expect(formatDuration(14 * DAY)).toBe('2w')
  expect(formatDuration(3600)).toBe('1h')
  expect(formatDuration(90)).toBe('90s')
  expect(formatDuration(null)).toBe('forever')
  expect(formatDuration(2147483647)).toBe('forever')
  for (const text of ['30s', '15m', '12h', '400d', '3w']) expect(formatDuration(/** @type {number} */ (parseDuration(text)))).toBe(text)
})

test('settings: defaults, the environment, and what is refused with the key and where it was set', () => {
  const defaults = loadSettings({ env: {} }).logSinks.hbase
  expect([defaults.retention, defaults.rollupRetention]).toEqual(['90d', '400d'])
  const env = loadSettings({ env: { BEACON_ACCESS_LOG_RETENTION: '7d', BEACON_ACCESS_ROLLUP_RETENTION: 'forever' } }).logSinks.hbase
  expect([env.retention, env.rollupRetention]).toEqual(['7d', 'forever'])
  expect(() => loadSettings({ env: { BEACON_ACCESS_LOG_RETENTION: '90' } }))
    .toThrow(/logSinks\.hbase\.retention must be a duration like 30s.*\(from env BEACON_ACCESS_LOG_RETENTION\)/)
  expect(() => loadSettings({ env: { BEACON_ACCESS_LOG_RETENTION: '9999999w' } }))
    .toThrow(/logSinks\.hbase\.retention must be/)
  // One rollup table has one TTL.
  const shared = { logSinks: { other: { type: 'hbase', table: 'other_log', rollupRetention: '30d' } } }
  expect(() => loadSettings({ env: {}, overrides: shared }))
    .toThrow(/logSinks\.other\.rollupRetention differs from logSinks\.hbase's, and both keep their rollups in beacon_access_rollup/)
  const own = { logSinks: { other: { type: 'hbase', table: 'other_log', rollupTable: 'other_rollup', rollupRetention: '30d' } } }
  expect(loadSettings({ env: {}, overrides: own }).logSinks.other.rollupRetention).toBe('30d')
  // A file sink rotates and keeps files instead (keepFiles).
  expect(() => loadSettings({ env: {}, overrides: { logSinks: { file: { retention: '1d' } } } }))
    .toThrow(/logSinks\.file\.retention is not a known key/)
})

test('a count is complete unless part of it came from raw rows older than now less the retention', () => {
  const ttl = { log: 3600, rollups: 40 * DAY }
  const edge = NOW - 3600 * 1000
  expect(countHorizon({ rawFrom: edge }, ttl, NOW)).toEqual({
    known: true,
    rows: new Date(edge).toISOString(),
    retention: '1h',
    rollups: new Date(NOW - 40 * DAY * 1000).toISOString(),
    rollupRetention: '40d',
    complete: true
  })
  expect(countHorizon({ rawFrom: edge - 1 }, ttl, NOW).complete).toBe(false)
  // All from the rollups (no raw rows read): complete, however old.
  expect(countHorizon({ rawFrom: null }, ttl, NOW).complete).toBe(true)
  // Kept forever: nothing is ever missing; no rollups: nothing said of them.
  expect(countHorizon({ rawFrom: 0 }, { log: null, rollups: undefined }, NOW))
    .toEqual({ known: true, rows: null, retention: 'forever', complete: true })
  expect(countHorizon({ rawFrom: 0 }, null, NOW)).toEqual({ known: false })
})

test('the erase route: id required and checked like the data plane, the whole log by default, dryRun', () => {
  const ctx = { now: NOW, maxIdLength: 8 }
  expect(parseEraseQuery({ id: 'a_B-9' }, ctx)).toEqual({ id: 'a_B-9', from: 0, to: NOW, dryRun: false })
  expect(parseEraseQuery({ id: '42', from: '-1h', to: 'now', dryRun: '1' }, ctx))
    .toEqual({ id: '42', from: NOW - 3600000, to: NOW, dryRun: true })
  expect(codeOf(() => parseEraseQuery({}, ctx))).toBe('MISSING_ID')
  expect(codeOf(() => parseEraseQuery({ id: '' }, ctx))).toBe('MISSING_ID')
  for (const id of ['a b', 'x'.repeat(9), '../1', '%00', ['1', '2']]) expect(codeOf(() => parseEraseQuery({ id }, ctx))).toBe('BAD_ID')
  expect(codeOf(() => parseEraseQuery({ id: '1', endpoint: 'x' }, ctx))).toBe('BAD_LOG_QUERY')
  expect(codeOf(() => parseEraseQuery({ id: '1', dryRun: 'yes' }, ctx))).toBe('BAD_LOG_QUERY')
  expect(codeOf(() => parseEraseQuery({ id: '1', from: 'then' }, ctx))).toBe('BAD_TIME')
  expect(codeOf(() => parseEraseQuery({ id: '1', from: 'now', to: '-1h' }, ctx))).toBe('BAD_TIME_RANGE')
  // Never the value in the message.
  expect(() => parseEraseQuery({ id: '<script>' }, ctx)).toThrow(/^id must be letters(?!.*script)/)
  // The rule it broke: a dot is not a length problem.
  expect(() => parseEraseQuery({ id: 'a.b' }, ctx)).toThrow(/this one holds another character \(a dot, a space, …\)/)
  expect(() => parseEraseQuery({ id: 'x'.repeat(9) }, ctx)).toThrow(/this one is longer than 8 characters$/)
})

test('a retention change: one or both durations, nothing else', () => {
  expect(retentionChange({ retention: '30d' }, true)).toEqual({ retention: '30d' })
  expect(retentionChange({ retention: '30d', rollupRetention: 'forever' }, true)).toEqual({ retention: '30d', rollupRetention: 'forever' })
  for (const body of [null, [], 'x', {}, { retention: '30' }, { retention: 30 }, { ttl: '1d' }, { retention: '1d', x: 1 }]) {
    expect(retentionChange(body, true)).toMatchObject({ code: 'BAD_RETENTION', statusCode: 400 })
  }
  expect(retentionChange({ rollupRetention: '1d' }, false)).toMatchObject({ code: 'LOG_NOT_CONFIGURED' })
})

test('what status, log retention and log count print', () => {
  const view = {
    log: { table: 'beacon_access_log', retention: '90d', seconds: 90 * DAY, configured: '90d' },
    rollups: { table: 'beacon_access_rollup', retention: 'forever', seconds: null, configured: '400d' }
  }
  expect(retentionLines(view)).toEqual([
    'beacon_access_log     90d',
    'beacon_access_rollup  forever  (the settings say 400d: beacon log retention --set… applies it)'
  ])
  expect(retentionLines({ error: 'HBASE_TIMEOUT' })).toEqual(['retention unknown (HBASE_TIMEOUT)'])
  expect(horizonWarning(undefined)).toBeNull()
  expect(horizonWarning({ known: true, complete: true })).toBeNull()
  expect(horizonWarning({ known: false })).toMatch(/retention could not be read/)
  const past = { known: true, complete: false, rows: '2026-11-26T11:00:00.000Z', retention: '1h', rollups: null }
  past.rollupRetention = 'forever'
  expect(horizonWarning(past, true))
    .toBe('beacon: part of this range was counted from raw rows older than 2026-11-26T11:00:00.000Z (retention 1h): rows HBase has ' +
      'expired are not in this total; the per-minute rollups are kept forever (count without --scan to read them)')
  // Without --scan, no advice to leave it out.
  expect(horizonWarning(past)).toMatch(/kept forever \(whole minutes they cover are read from them\)$/)
  expect(horizonWarning(past)).not.toMatch(/--scan/)
})
