'use strict'

const { parseTime, parseTimeRange } = require('../../../logging/query/time')
const { ERRORS } = require('../../../lib/errors')

const NOW = Date.UTC(2026, 10, 24, 16, 30, 15, 250)

test.each([
  ['now', NOW],
  ['-30s', NOW - 30 * 1000],
  ['-15m', NOW - 15 * 60 * 1000],
  ['-2h', NOW - 2 * 3600 * 1000],
  ['-1d', NOW - 86400 * 1000],
  ['-1w', NOW - 7 * 86400 * 1000],
  ['-0m', NOW],
  ['1764000000000', 1764000000000],
  ['2026-11-24T16:00:00Z', Date.UTC(2026, 10, 24, 16)],
  ['2026-11-24T16:00:00.5Z', Date.UTC(2026, 10, 24, 16, 0, 0, 500)],
  ['2026-11-24T16:00:00.123456Z', Date.UTC(2026, 10, 24, 16, 0, 0, 123)],
  ['2026-11-24T17:00:00+01:00', Date.UTC(2026, 10, 24, 16)],
  ['2026-11-24T10:30:00-0530', Date.UTC(2026, 10, 24, 16)],
  ['2026-11-24T16:00', Date.UTC(2026, 10, 24, 16)],
  ['2026-11-24 16:00:00', Date.UTC(2026, 10, 24, 16)],
  ['2026-11-24', Date.UTC(2026, 10, 24)],
  ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
  ['1970-01-01T00:00:00Z', 0]
])('%s is %d', (text, ms) => {
  expect(parseTime(text, NOW, 'from')).toBe(ms)
})

test('an ISO time without an offset is UTC, whatever the server\'s time zone', () => {
  expect(parseTime('2026-07-01T12:00', NOW, 'from')).toBe(Date.parse('2026-07-01T12:00:00Z'))
})

test.each([
  ['empty', ''],
  ['a word', 'yesterday'],
  ['no unit', '-15'],
  ['an unknown unit', '-15y'],
  ['a future relative time', '+15m'],
  ['no minus sign', '15m'],
  ['compound', '-1h30m'],
  ['a day that does not exist', '2026-02-30'],
  ['not a leap year', '2026-02-29T00:00:00Z'],
  ['month 13', '2026-13-01'],
  ['hour 24', '2026-11-24T24:00:00Z'],
  ['second 60', '2026-11-24T16:00:60Z'],
  ['an offset hour 24', '2026-11-24T16:00:00+24:00'],
  ['before 1970', '1969-12-31T23:59:59Z'],
  ['past the 13-digit keys', '2286-11-20T17:46:40Z'],
  ['seconds, not ms', '1764000000'],
  ['14 digits', '17640000000000'],
  ['a number', 1764000000000],
  ['an array (a repeated parameter)', ['-1h', '-2h']],
  ['uppercase now', 'NOW'],
  ['padded', ' -15m']
])('%s is BAD_TIME, naming the parameter and not echoing the value', (name, text) => {
  let error
  try {
    parseTime(text, NOW, 'to')
  } catch (err) {
    error = err
  }
  expect(error).toMatchObject({ code: 'BAD_TIME', statusCode: 400 })
  expect(error.message).toBe(`${ERRORS.BAD_TIME.message}: to`)
})

test('a range: from required, to defaults to now, from must be before to', () => {
  expect(parseTimeRange({ from: '-15m' }, NOW)).toEqual({ from: NOW - 15 * 60 * 1000, to: NOW })
  expect(parseTimeRange({ from: '-2h', to: '-1h' }, NOW)).toEqual({ from: NOW - 2 * 3600 * 1000, to: NOW - 3600 * 1000 })
  expect(parseTimeRange({ from: '-15m', to: '' }, NOW).to).toBe(NOW)
  expect(() => parseTimeRange({}, NOW)).toThrow(
    expect.objectContaining({ code: 'BAD_TIME', message: expect.stringMatching(/: from is required$/) })
  )
  expect(() => parseTimeRange({ from: '' }, NOW)).toThrow(expect.objectContaining({ code: 'BAD_TIME' }))
  expect(() => parseTimeRange({ from: '-1h', to: '-2h' }, NOW)).toThrow(
    expect.objectContaining({ code: 'BAD_TIME_RANGE', statusCode: 400 })
  )
  expect(() => parseTimeRange({ from: 'now', to: 'now' }, NOW)).toThrow(expect.objectContaining({ code: 'BAD_TIME_RANGE' }))
  expect(() => parseTimeRange({ from: '2026-11-24T16:00:00Z', to: '2026-11-24T17:00:00+01:00' }, NOW)).toThrow(
    expect.objectContaining({ code: 'BAD_TIME_RANGE' })
  )
  expect(() => parseTimeRange({ from: 'now', to: 'soon' }, NOW)).toThrow(
    expect.objectContaining({ code: 'BAD_TIME', message: expect.stringMatching(/: to$/) })
  )
})
