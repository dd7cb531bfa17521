'use strict'

// The dashboard's tick labels (api/admin/dashboard/axes.js): round, distinct, never wider than the
// axis. The Chromium tests read what the page drew (data-ticks-x/-y) at idle and under load.

const {
  valueLabels, logCountLabels, logCountScale, timeLabels, axisWidth, timeTickSpace, legendValue, timeSeries,
  COUNT_INCRS, SECOND_INCRS, MINUTE_INCRS
} = require('../../api/admin/dashboard/axes')

const distinct = (labels) => new Set(labels).size === labels.length

test('large counts are short: 1,200,000 is 1.2M, not a label cut to 00,000', () => {
  const splits = [0, 200000, 400000, 600000, 800000, 1000000, 1200000]
  expect(valueLabels(splits, 200000)).toEqual(['0', '0.2M', '0.4M', '0.6M', '0.8M', '1.0M', '1.2M'])
  expect(valueLabels([1200000, 1250000, 1300000], 50000)).toEqual(['1.20M', '1.25M', '1.30M'])
  expect(valueLabels([0, 5000, 10000, 15000], 5000)).toEqual(['0', '5k', '10k', '15k'])
  expect(valueLabels([0, 3e9], 1e9)).toEqual(['0', '3G'])
})

test('a log-scale count axis labels each split on its own and leaves the ones uPlot hides unlabelled', () => {
  expect(logCountLabels([-1, 0, 1, 2, null, 5, 10, 50, 100, 500, 1000, 2000, 15000, 1.5e6])).toEqual(
    [null, '0', '1', '2', null, '5', '10', '50', '100', '500', '1k', '2k', '15k', '1.5M'])
  const scale = logCountScale()
  expect(scale).toMatchObject({ distr: 4, asinh: 1 })
  expect(scale.range(null, 0, 45000)).toEqual([0, 67500])
  expect(scale.range(null, 0, 0)).toEqual([0, 1])
})

test('labels carry the decimals their step needs: distinct, never 1, 1, 0', () => {
  expect(valueLabels([0, 0.5, 1], 0.5)).toEqual(['0', '0.5', '1.0'])
  expect(valueLabels([0, 0.02, 0.04], 0.02)).toEqual(['0', '0.02', '0.04'])
  expect(valueLabels([0, 1, 2], 1)).toEqual(['0', '1', '2'])
  for (const incr of [0.001, 0.002, 0.005, 0.1, 0.2, 1, 2, 5, 20, 500, 2000, 50000, 2e6]) {
    const splits = Array.from({ length: 8 }, (_, i) => i * incr)
    const labels = valueLabels(splits, incr)
    expect(distinct(labels)).toBe(true)
    expect(labels.every((l) => l.length <= 6)).toBe(true)
  }
})

test('count charts step by whole numbers; time axes by whole seconds, or minutes', () => {
  expect(COUNT_INCRS[0]).toBe(1)
  expect(COUNT_INCRS.every(Number.isInteger)).toBe(true)
  expect(SECOND_INCRS[0]).toBe(1)
  expect(MINUTE_INCRS.every((s) => s % 60 === 0)).toBe(true)
})

test('time labels: HH:MM:SS between whole minutes, HH:MM on them; never sub-second', () => {
  const noon = new Date(2026, 10, 26, 12, 0, 0).getTime() / 1000
  expect(timeLabels([noon, noon + 30, noon + 60], 30)).toEqual(['12:00:00', '12:00:30', '12:01:00'])
  expect(timeLabels([noon, noon + 300], 300)).toEqual(['12:00', '12:05'])
  expect(timeLabels([noon + 0.5], 1)).toEqual(['12:00:01'])
})

test('the y axis is as wide as its widest label, plus tick and gap', () => {
  const measure = (text) => text.length * 7
  expect(axisWidth(['0', '1.2M'], measure)).toBe(28 + 19)
  expect(axisWidth([], measure)).toBe(19)
  expect(axisWidth(['0', null, '1k'], measure)).toBe(14 + 19) // an unlabelled split takes no room
})

test('time ticks are at least the widest label of their kind apart, with a gap either side', () => {
  const measure = (text) => text.length * 7
  expect(timeTickSpace(false, measure)).toBe(56 + 14) // HH:MM:SS
  expect(timeTickSpace(true, measure)).toBe(35 + 14) // HH:MM
})

test('legends: the pointer\'s point while it is on the chart, else the latest point drawn; time in 24-hour clock', () => {
  const u = { data: [[100, 160, 220], [1, null, 3], [5, 7, null], [null, null, null]] }
  const value = legendValue((v) => `${v} req/s`)
  expect(value(u, 1, 1, 0)).toBe('1 req/s')
  expect(value(u, null, 1, 1)).toBe('–') // a gap at the pointer stays a gap
  expect(value(u, null, 1, null)).toBe('3 req/s') // no pointer: the latest
  expect(value(u, null, 2, null)).toBe('7 req/s') // the latest that has a value
  expect(value(u, null, 3, null)).toBe('–') // no point at all
  const at = new Date(2026, 11, 4, 21, 5, 9).getTime() / 1000
  expect(timeSeries().value({ data: [[at]] }, null, 0, null)).toBe('21:05:09')
})
