'use strict'

const { parseOptions } = require('../../bench/lib/options')
const { SCENARIOS } = require('../../bench/lib/scenarios')

describe('bench options', () => {
  test('a full run does every scenario with the seed protocol, on the best topology available', () => {
    const p = parseOptions([])
    expect(p.scenarios).toEqual(SCENARIOS)
    expect(p).toMatchObject({ quick: false, topology: 'auto', connections: 100, runs: 3, durationSeconds: 30, label: 'full' })
    expect(p.sweepRates.slice(0, 4)).toEqual([1000, 2000, 5000, 10000])
    expect(p.vuCounts).toEqual([100, 1000])
    expect(p.connectionCounts).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256])
    expect(Object.isFrozen(p)).toBe(true)
  })

  test('--quick shortens everything and stays on loopback unless told otherwise', () => {
    const p = parseOptions(['--quick'])
    expect(p).toMatchObject({ quick: true, topology: 'loopback', runs: 1, durationSeconds: 5, label: 'quick' })
    expect(p.scenarios).toEqual(SCENARIOS)
    expect(parseOptions(['--quick', '--topology', 'netns']).topology).toBe('netns')
  })

  test('scenarios run in the canonical order; --endpoints sets every scenario endpoint list', () => {
    const p = parseOptions(['--scenario', 'sweep,seed', '--endpoints', 'sample1,sample5'])
    expect(p.scenarios).toEqual(['seed', 'sweep'])
    expect(p.sweepEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.scenarioEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.connectionEndpoints).toEqual(['sample1', 'sample5'])
  })

  test('bad values fail with the option name', () => {
    expect(() => parseOptions(['--scenario', 'nope'])).toThrow(/unknown scenario "nope"/)
    expect(() => parseOptions(['--topology', 'vm'])).toThrow(/--topology/)
    expect(() => parseOptions(['--runs', '0'])).toThrow(/--runs/)
    expect(() => parseOptions(['--sweep-rates', '1000,x'])).toThrow(/--sweep-rates/)
    expect(() => parseOptions(['--mix', '0.5,0.5,0.5'])).toThrow(/--mix/)
  })
})
