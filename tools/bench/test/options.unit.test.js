'use strict'

const { parseOptions } = require('../lib/options')
const { SCENARIOS } = require('../lib/scenarios')

describe('bench options', () => {
  test('a full run does every scenario with the seed protocol', () => {
    const p = parseOptions([])
    expect(p.scenarios).toEqual(SCENARIOS)
    expect(p).toMatchObject({ quick: false, connections: 100, runs: 3, durationSeconds: 30, label: 'full' })
    expect(p.sweepRates.slice(0, 4)).toEqual([1000, 2000, 5000, 10000])
    expect(Object.isFrozen(p)).toBe(true)
  })

  test('--quick shortens everything', () => {
    const p = parseOptions(['--quick'])
    expect(p).toMatchObject({ quick: true, runs: 1, durationSeconds: 5, label: 'quick' })
    expect(p.scenarios).toEqual(SCENARIOS)
  })

  test('scenarios run in the canonical order; --endpoints sets every scenario endpoint list', () => {
    const p = parseOptions(['--scenario', 'sweep,seed', '--endpoints', 'sample1,sample5'])
    expect(p.scenarios).toEqual(['seed', 'sweep'])
    expect(p.sweepEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.cpuEndpoints).toEqual(['sample1', 'sample5'])
  })

  test('cpu: in full and quick runs, right after seed; 5 rounds of 6 s at 1,000 req/s ' +
    '(2 of 2 s quick, without sample5_memory or sample5_host)', () => {
    expect(SCENARIOS.slice(0, 2)).toEqual(['seed', 'cpu'])
    expect(parseOptions([])).toMatchObject({
      cpuRate: 1000,
      cpuRuns: 5,
      cpuSeconds: 6,
      cpuEndpoints: ['sample1', 'sample2', 'sample3', 'sample4', 'sample5', 'sample5_norollup', 'sample5_memory', 'sample5_host']
    })
    expect(parseOptions(['--quick'])).toMatchObject({
      cpuRate: 1000,
      cpuRuns: 2,
      cpuSeconds: 2,
      cpuEndpoints: ['sample1', 'sample2', 'sample3', 'sample4', 'sample5']
    })
    expect(parseOptions(['--scenario', 'cpu', '--cpu-rate', '1500', '--cpu-runs', '3', '--cpu-endpoints', 'sample3'])).toMatchObject({
      scenarios: ['cpu'],
      cpuRate: 1500,
      cpuRuns: 3,
      cpuEndpoints: ['sample3']
    })
    expect(parseOptions(['--endpoints', 'sample4']).cpuEndpoints).toEqual(['sample4'])
    expect(() => parseOptions(['--cpu-runs', '0'])).toThrow(/--cpu-runs/)
  })

  test('bad values fail with the option name', () => {
    expect(() => parseOptions(['--scenario', 'nope'])).toThrow(/unknown scenario "nope"/)
    expect(() => parseOptions(['--topology', 'netns'])).toThrow(/topology/)
    expect(() => parseOptions(['--runs', '0'])).toThrow(/--runs/)
    expect(() => parseOptions(['--sweep-rates', '1000,x'])).toThrow(/--sweep-rates/)
  })
})
