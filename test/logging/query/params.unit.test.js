'use strict'

const { parseLogQuery } = require('../../../logging/query/params')
const { logMatch } = require('../../../logging/query/match')
const { ndjsonLine, csvLine, csvHeader, csvField, CSV_COLUMNS } = require('../../../logging/query/format')
const { ERRORS } = require('../../../lib/errors')

const NOW = Date.UTC(2026, 10, 24, 16)
const ctx = { now: NOW, maxIdLength: 64 }

/** The coded error a call throws. */
function thrown (fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

test('a scan query: range, filters, limit, cursor, format (ndjson by default)', () => {
  expect(parseLogQuery('scan', { from: '-1h' }, ctx)).toEqual({ from: NOW - 3600000, to: NOW, format: 'ndjson' })
  const key = '0a1764000000000p123-45'
  expect(
    parseLogQuery(
      'scan',
      { from: '-2h', to: '-1h', endpoint: 'sample5', id: 'A_b-9', status: '404', limit: '10', after: key, format: 'csv' },
      ctx
    )
  )
    .toEqual({
      from: NOW - 7200000,
      to: NOW - 3600000,
      endpoint: 'sample5',
      id: 'A_b-9',
      status: 404,
      limit: 10,
      after: key,
      format: 'csv'
    })
})

test('a count query: range, filters, by', () => {
  expect(parseLogQuery('count', { from: '-1h', id: '42', by: 'minute' }, ctx)).toEqual({
    from: NOW - 3600000,
    to: NOW,
    id: '42',
    by: 'minute'
  })
  for (const by of ['endpoint', 'id', 'status', 'minute']) expect(parseLogQuery('count', { from: '-1h', by }, ctx).by).toBe(by)
})

test.each([
  ['an unknown parameter (a typo must not widen the query)', 'scan', { from: '-1h', form: '-2h' }, 'BAD_LOG_QUERY'],
  ['a scan parameter on a count', 'count', { from: '-1h', limit: '5' }, 'BAD_LOG_QUERY'],
  ['a count parameter on a scan', 'scan', { from: '-1h', by: 'id' }, 'BAD_LOG_QUERY'],
  ['a repeated parameter', 'scan', { from: '-1h', id: ['1', '2'] }, 'BAD_LOG_QUERY'],
  ['a repeated time', 'scan', { from: ['-1h', '-2h'] }, 'BAD_LOG_QUERY'],
  ['no from', 'count', {}, 'BAD_TIME'],
  ['a bad from', 'count', { from: 'yesterday' }, 'BAD_TIME'],
  ['a bad to', 'count', { from: '-1h', to: 'later' }, 'BAD_TIME'],
  ['from after to', 'scan', { from: '-1h', to: '-2h' }, 'BAD_TIME_RANGE'],
  ['an id with other characters', 'scan', { from: '-1h', id: '4"' }, 'BAD_LOG_QUERY'],
  ['an id longer than ids are', 'scan', { from: '-1h', id: 'x'.repeat(65) }, 'BAD_LOG_QUERY'],
  ['an empty id', 'scan', { from: '-1h', id: '' }, 'BAD_LOG_QUERY'],
  ['an endpoint with a slash', 'count', { from: '-1h', endpoint: 'a/b' }, 'BAD_LOG_QUERY'],
  ['a status of two digits', 'count', { from: '-1h', status: '20' }, 'BAD_LOG_QUERY'],
  ['a status of 600', 'count', { from: '-1h', status: '600' }, 'BAD_LOG_QUERY'],
  ['a status with a sign', 'count', { from: '-1h', status: '+200' }, 'BAD_LOG_QUERY'],
  ['limit 0', 'scan', { from: '-1h', limit: '0' }, 'BAD_LOG_QUERY'],
  ['a negative limit', 'scan', { from: '-1h', limit: '-5' }, 'BAD_LOG_QUERY'],
  ['a fractional limit', 'scan', { from: '-1h', limit: '1.5' }, 'BAD_LOG_QUERY'],
  ['a limit too large', 'scan', { from: '-1h', limit: '99999999999' }, 'BAD_LOG_QUERY'],
  ['an unknown format', 'scan', { from: '-1h', format: 'xml' }, 'BAD_LOG_QUERY'],
  ['an unknown by', 'count', { from: '-1h', by: 'ip' }, 'BAD_LOG_QUERY'],
  ['a cursor that is not a row key', 'scan', { from: '-1h', after: '<script>' }, 'BAD_LOG_QUERY']
])('400, %s', (name, kind, raw, code) => {
  const err = thrown(() => parseLogQuery(kind, raw, ctx))
  expect(err).toMatchObject({ code, statusCode: 400 })
  expect(err.message.startsWith(ERRORS[code].message)).toBe(true)
  // The detail names the parameter; it never echoes what was sent.
  for (const value of Object.values(raw).flat()) if (value.length > 2) expect(err.message).not.toContain(value)
})

describe('logMatch: the server-side filter narrows, the test in Node is exact', () => {
  const entry = (fields) => ({ ts: 1, endpoint: 'sample5', id: '4', status: 200, ms: 1, ip: null, ua: null, ref: null, ...fields })

  test('no filters: no HBase filter, every row (unreadable ones too) passes', () => {
    const m = logMatch({})
    expect(m.filter).toBeNull()
    expect(m.any).toBe(true)
    expect(m.test(null)).toBe(true)
  })

  test('id 4 is not id 42, 04, A4 or a4; status 200 is not "200" or 2000; unreadable rows never match a filter', () => {
    const m = logMatch({ id: '4', status: 200 })
    expect(m.filter.name).toBe('org.apache.hadoop.hbase.filter.FilterList')
    expect(m.test(entry({}))).toBe(true)
    for (const id of ['42', '04', 'A4', null]) expect(m.test(entry({ id }))).toBe(false)
    for (const status of ['200', 2000, 20]) expect(m.test(entry({ status }))).toBe(false)
    expect(m.test(entry({ status: undefined, event: 'exposure' }))).toBe(false)
    expect(m.test(null)).toBe(false)
  })

  test('case matters in Node (HBase\'s substring comparator ignores it)', () => {
    const m = logMatch({ id: 'abc', endpoint: 'sample5' })
    expect(m.test(entry({ id: 'abc' }))).toBe(true)
    expect(m.test(entry({ id: 'ABC' }))).toBe(false)
    expect(m.test(entry({ id: 'abc', endpoint: 'Sample5' }))).toBe(false)
  })
})

describe('output formats', () => {
  const record = {
    ts: 1764000000123,
    key: '031764000000123p1-7',
    entry: {
      ts: 1764000000123,
      endpoint: 'sample5',
      id: '42',
      status: 200,
      ms: 0.5,
      ip: '127.0.0.1',
      ua: 'Mozilla, "quoted"\nnext',
      ref: '=HYPERLINK("http://x")'
    }
  }

  test('NDJSON: the entry as stored plus its key, one line; ts from the key when the entry has none', () => {
    const line = ndjsonLine(record)
    expect(line.endsWith('\n')).toBe(true)
    expect(line.slice(0, -1)).not.toContain('\n')
    expect(JSON.parse(line)).toEqual({ ...record.entry, key: record.key })
    expect(line.startsWith('{"ts":1764000000123,')).toBe(true)
    expect(JSON.parse(ndjsonLine({ ...record, entry: { id: '1' } }))).toEqual({ id: '1', ts: record.ts, key: record.key })
    expect(JSON.parse(ndjsonLine({ ...record, entry: null }))).toEqual({ ts: record.ts, key: record.key, unreadable: true })
  })

  test('CSV: a header, RFC 4180 quoting, formulas defused, ISO time from the key', () => {
    expect(csvHeader()).toBe(CSV_COLUMNS.join(',') + '\r\n')
    const line = csvLine(record)
    expect(line).toBe('1764000000123,2025-11-24T16:00:00.123Z,sample5,42,200,,,0.5,127.0.0.1,"Mozilla, ' +
      '""quoted""\nnext","\'=HYPERLINK(""http://x"")",031764000000123p1-7,,\r\n')
    expect(csvLine({ ...record, entry: null })).toBe('1764000000123,2025-11-24T16:00:00.123Z,,,,,,,,,,031764000000123p1-7,,\r\n')
    expect(csvLine({ ...record, entry: { ...record.entry, bot: true } })).toMatch(/,031764000000123p1-7,true,\r\n$/)
    expect(csvLine({ ...record, entry: { ...record.entry, version: 'hmx53n6d1-B' } })).toMatch(/,031764000000123p1-7,,hmx53n6d1-B\r\n$/)
    expect(csvField(-1)).toBe('-1')
    expect(csvField('-1')).toBe("'-1")
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"')
  })
})
