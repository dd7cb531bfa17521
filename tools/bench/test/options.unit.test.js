'use strict'

const { parseOptions } = require('../lib/options')
const { SCENARIOS, QUICK_SCENARIOS } = require('../lib/scenarios')

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
    expect(p.scenarios).toEqual(QUICK_SCENARIOS)
    expect(parseOptions(['--quick', '--topology', 'netns']).topology).toBe('netns')
  })

  test('scenarios run in the canonical order; --endpoints sets every scenario endpoint list', () => {
    const p = parseOptions(['--scenario', 'sweep,seed', '--endpoints', 'sample1,sample5'])
    expect(p.scenarios).toEqual(['seed', 'sweep'])
    expect(p.sweepEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.scenarioEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.connectionEndpoints).toEqual(['sample1', 'sample5'])
    expect(p.lbEndpoints).toEqual(['sample1', 'sample5'])
  })

  test('lb: sample3 by default, 10 s per case (2 s quick), closed loop and 2,000 req/s (1,000 quick)', () => {
    expect(parseOptions([])).toMatchObject({ lbEndpoints: ['sample3'], lbSeconds: 10, lbRate: 2000, lbConnections: 50, lbIdRange: 1000 })
    expect(parseOptions(['--quick'])).toMatchObject({ lbEndpoints: ['sample3'], lbSeconds: 2, lbRate: 1000 })
    expect(parseOptions(['--scenario', 'lb']).scenarios).toEqual(['lb'])
    expect(() => parseOptions(['--lb-rate', '0'])).toThrow(/--lb-rate/)
  })

  test('cpu: in full and quick runs, right after seed; 5 rounds of 6 s at 1,000 req/s (2 of 2 s quick, without sample5_durable)', () => {
    expect(SCENARIOS.slice(0, 2)).toEqual(['seed', 'cpu'])
    expect(QUICK_SCENARIOS).toContain('cpu')
    expect(parseOptions([])).toMatchObject({
      cpuRate: 1000,
      cpuRuns: 5,
      cpuSeconds: 6,
      cpuEndpoints: ['sample1', 'sample2', 'sample3', 'sample4', 'sample5', 'sample5_norollup', 'sample5_durable']
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

  test('chaos: in full runs (after the shared-environment ones) and on request, never in --quick\'s all; 3 minutes, seeded', () => {
    expect(SCENARIOS.slice(-2)).toEqual(['chaos', 'faults'])
    expect(QUICK_SCENARIOS).not.toContain('chaos')
    expect(parseOptions([])).toMatchObject({ chaosSeconds: 180, chaosSeed: 11, chaosRate: 200, chaosConnections: 32 })
    expect(parseOptions(['--quick', '--scenario', 'chaos']).scenarios).toEqual(['chaos'])
    expect(parseOptions(['--scenario', 'chaos', '--chaos-seconds', '240', '--chaos-seed', '7'])).toMatchObject({
      chaosSeconds: 240,
      chaosSeed: 7
    })
    expect(() => parseOptions(['--chaos-seed', '1.5'])).toThrow(/--chaos-seed/)
  })

  test('faults: the long fault runs in full runs and on request, never in --quick\'s all; a 10-minute outage, 1 minute per slow ' +
    'phase', () => {
    expect(QUICK_SCENARIOS).not.toContain('faults')
    expect(parseOptions([])).toMatchObject({ faultTests: ['memory', 'slow'], faultOutageSeconds: 600, faultPhaseSeconds: 60 })
    expect(parseOptions(['--scenario', 'faults', '--fault-tests', 'slow', '--fault-phase-seconds', '5'])).toMatchObject({
      scenarios: ['faults'],
      faultTests: ['slow'],
      faultPhaseSeconds: 5
    })
    expect(() => parseOptions(['--fault-tests', 'memory,disk'])).toThrow(/unknown fault test "disk"/)
    expect(() => parseOptions(['--fault-outage-seconds', '0'])).toThrow(/--fault-outage-seconds/)
  })

  test('bad values fail with the option name', () => {
    expect(() => parseOptions(['--scenario', 'nope'])).toThrow(/unknown scenario "nope"/)
    expect(() => parseOptions(['--topology', 'vm'])).toThrow(/--topology/)
    expect(() => parseOptions(['--runs', '0'])).toThrow(/--runs/)
    expect(() => parseOptions(['--sweep-rates', '1000,x'])).toThrow(/--sweep-rates/)
    expect(() => parseOptions(['--mix', '0.5,0.5,0.5'])).toThrow(/--mix/)
  })
})
