'use strict'

/**
 * Options of `npm run bench`: defaults for a full run and for `--quick`, from the command line,
 * validated once and frozen.
 */

const os = require('node:os')
const { parseArgs } = require('node:util')
const { SCENARIOS, QUICK_SCENARIOS } = require('./scenarios')
const { TESTS } = require('./faults')

const USAGE = `npm run bench -- [--quick] [--out FILE.json] [--label NAME] [--scenario all|${SCENARIOS.join(',')}]
  [--topology auto|netns|loopback] [--keep-hbase] [--precise] [--endpoints a,b] [--port 4100] [--workers N]
  seed:        [--connections 100] [--duration 30] [--runs 3] [--warmup 10] [--miss-ratio 0] [--id-range 10000] [--hbase-warmup 45]
  cpu:         [--cpu-rate 1000] [--cpu-runs 5] [--cpu-duration 6] [--cpu-endpoints a,b]   ` +
  `(CPU µs per request; quick: 2 runs of 2 s, no sample5_durable)
  sweep:       [--sweep-rates 1000,2000,...] [--sweep-step 10] [--sweep-endpoints a,b] [--sweep-connections 100]
  vus:         [--vus 100,1000] [--vu-duration 20] [--scenario-endpoints a,b]
  cross-zone:  [--cross-zone-delay 3.5] [--cross-zone-endpoints a,b]
  connections: [--conn-counts 1,2,...,256] [--no-keepalive-counts 1,16,100] [--conn-duration 5] [--conn-endpoints a,b]
  mixed:       [--mixed-rate 2000] [--mixed-duration 20] [--mix hit,miss,absent]
  lb:          [--lb-endpoints sample3] [--lb-duration 10] [--lb-rate 2000] [--lb-connections 50] [--lb-id-range 1000]
  chaos:       [--chaos-seconds 180] [--chaos-seed 11] [--chaos-rate 200] [--chaos-connections 32]   ` +
  `(full runs and --scenario chaos, never --quick's all)
  logcount:    [--logcount-rows 1000000] [--logcount-minutes 20]   (an exact count from the raw rows vs from the rollups; ` +
  `quick: 100,000 rows)
  faults:      [--fault-tests memory,slow] [--fault-outage-seconds 600] [--fault-phase-seconds 60]   ` +
  "(full runs and --scenario faults, never --quick's all)"

const STRING_OPTIONS = ['out', 'label', 'scenario', 'topology', 'endpoints', 'port', 'workers', 'connections', 'duration', 'runs', 'warmup',
  'miss-ratio', 'id-range', 'hbase-warmup', 'sweep-rates', 'sweep-step', 'sweep-endpoints', 'sweep-connections', 'vus', 'vu-duration',
  'scenario-endpoints', 'cross-zone-delay', 'cross-zone-endpoints', 'conn-counts', 'no-keepalive-counts', 'conn-duration', 'conn-endpoints',
  'mixed-rate', 'mixed-duration', 'mix', 'lb-endpoints', 'lb-duration', 'lb-rate', 'lb-connections', 'lb-id-range',
  'chaos-seconds', 'chaos-seed', 'chaos-rate', 'chaos-connections', 'cpu-rate', 'cpu-runs', 'cpu-duration', 'cpu-endpoints', 'fault-tests',
  'fault-outage-seconds', 'fault-phase-seconds',
  'logcount-rows', 'logcount-minutes']

/**
 * @param {string[]} argv
 * @returns {Readonly<object>} parameters; `scenarios` is the ordered list to run
 */
function parseOptions (argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      'keep-hbase': { type: 'boolean', default: false },
      precise: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      ...Object.fromEntries(STRING_OPTIONS.map((k) => [k, { type: 'string' }]))
    }
  })
  /** @type {Record<string, any>} */
  const a = values
  if (a.help) return { help: USAGE }
  const q = a.quick
  const pick = (key, full, quick) => (a[key] !== undefined ? a[key] : q ? quick : full)
  const number = (key, full, quick, min = 0) => {
    const n = Number(pick(key, full, quick))
    if (!Number.isFinite(n) || n < min) throw new RangeError(`bench: --${key} must be a number >= ${min} (got ${a[key]})`)
    return n
  }
  /** @type {(key: string, full: any, quick: any, parse?: (s: any) => any) => any[]} */
  const list = (key, full, quick, parse = Number) => {
    const raw = pick(key, full, quick)
    const items = (Array.isArray(raw) ? raw : String(raw).split(','))
      .map((s) => (typeof s === 'string' ? s.trim() : s))
      .filter((s) => s !== '')
    const out = items.map(parse)
    if (out.some((v) => typeof v === 'number' && !(v > 0))) {
      throw new RangeError(`bench: --${key} must be a list of positive numbers (got ${raw})`)
    }
    return out
  }
  const names = (key, full, quick) => list(key, full, quick, String)
  const integer = (key, dflt) => {
    const n = Number(pick(key, dflt, dflt))
    if (!Number.isSafeInteger(n)) throw new RangeError(`bench: --${key} must be an integer (got ${a[key]})`)
    return n
  }

  const scenarios = pick('scenario', 'all', 'all') === 'all' ? (q ? QUICK_SCENARIOS : SCENARIOS) : names('scenario', 'all', 'all')
  for (const s of scenarios) {
    if (!SCENARIOS.includes(s)) throw new RangeError(`bench: unknown scenario ${JSON.stringify(s)} (known: all, ${SCENARIOS.join(', ')})`)
  }
  const topology = pick('topology', 'auto', 'loopback')
  if (!['auto', 'netns', 'loopback'].includes(topology)) {
    throw new RangeError(`bench: --topology must be auto, netns or loopback (got ${topology})`)
  }
  const mix = list('mix', '0.8,0.1,0.1', '0.8,0.1,0.1')
  if (mix.length !== 3 || Math.abs(mix[0] + mix[1] + mix[2] - 1) > 1e-9) {
    throw new RangeError('bench: --mix must be three shares hit,miss,absent that add up to 1')
  }

  return Object.freeze({
    quick: q,
    label: a.label || (q ? 'quick' : 'full'),
    out: a.out || null,
    scenarios: SCENARIOS.filter((s) => scenarios.includes(s)),
    topology,
    keepHBase: a['keep-hbase'],
    endpoints: a.endpoints ? names('endpoints') : null,
    port: number('port', 4100, 4100, 1),
    workers: number('workers', os.availableParallelism(), os.availableParallelism(), 1),
    // seed protocol
    connections: number('connections', 100, 100, 1),
    durationSeconds: number('duration', 30, 5, 1),
    runs: number('runs', 3, 1, 1),
    warmupSeconds: number('warmup', 10, 2, 0),
    missRatio: number('miss-ratio', 0, 0),
    idRange: number('id-range', 10000, 10000, 1),
    // A freshly started HBase serves about half as fast for its first minute (JIT): warm it first.
    hbaseWarmupSeconds: number('hbase-warmup', 45, 10),
    // CPU per request (tools/bench/lib/cpu.js): a fixed rate below every knee, and saturation
    cpuRate: number('cpu-rate', 1000, 1000, 1),
    cpuRuns: number('cpu-runs', 5, 2, 1),
    cpuSeconds: number('cpu-duration', 6, 2, 1),
    cpuEndpoints: names(
      'cpu-endpoints',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5,sample5_norollup,sample5_durable',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5'
    ),
    // counting the access log (tools/bench/lib/log-count.js)
    logcountRows: number('logcount-rows', 1000000, 100000, 1000),
    logcountMinutes: number('logcount-minutes', 20, 10, 1),
    // sweep
    sweepRates: list('sweep-rates', '1000,2000,5000,10000,15000,20000,25000,30000', '1000,4000,8000'),
    sweepStepSeconds: number('sweep-step', 10, 2, 1),
    sweepEndpoints: names(
      'sweep-endpoints',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5',
      a.endpoints || 'sample1,sample3,sample5'
    ),
    sweepConnections: number('sweep-connections', 100, 100, 1),
    // virtual users and cross-zone
    vuCounts: list('vus', '100,1000', '100'),
    vuSeconds: number('vu-duration', 20, 3, 1),
    scenarioEndpoints: names('scenario-endpoints', a.endpoints || 'sample1,sample2,sample3,sample4,sample5', a.endpoints || 'sample3'),
    crossZoneDelayMs: number('cross-zone-delay', 3.5, 3.5),
    crossZoneEndpoints: names('cross-zone-endpoints', a.endpoints || 'sample1,sample3', a.endpoints || 'sample3'),
    // connections
    connectionCounts: list('conn-counts', '1,2,4,8,16,32,64,128,256', '1,16,256'),
    noKeepAliveCounts: list('no-keepalive-counts', '1,16,100', '16'),
    connectionSeconds: number('conn-duration', 5, 2, 1),
    connectionEndpoints: names('conn-endpoints', a.endpoints || 'sample1,sample3', a.endpoints || 'sample1'),
    // mixed ids
    mixedRate: number('mixed-rate', 2000, 1000, 1),
    mixedSeconds: number('mixed-duration', 20, 3, 1),
    mix: { hit: mix[0], miss: mix[1], absent: mix[2] },
    // app hosts behind HAProxy
    lbEndpoints: names('lb-endpoints', a.endpoints || 'sample3', a.endpoints || 'sample3'),
    lbSeconds: number('lb-duration', 10, 2, 1),
    lbRate: number('lb-rate', 2000, 1000, 1),
    lbConnections: number('lb-connections', 50, 50, 1),
    lbIdRange: number('lb-id-range', 1000, 1000, 1),
    // chaos under load, on an HBase cluster of its own (tools/bench/lib/chaos/)
    chaosSeconds: number('chaos-seconds', 180, 180, 10),
    chaosSeed: integer('chaos-seed', 11),
    chaosRate: number('chaos-rate', 200, 200, 1),
    chaosConnections: number('chaos-connections', 32, 32, 1),
    // the long runs of the app-host fault tests (tools/bench/lib/faults.js)
    faultTests: faultTests(names('fault-tests', 'memory,slow', 'memory,slow')),
    faultOutageSeconds: number('fault-outage-seconds', 600, 600, 1),
    faultPhaseSeconds: number('fault-phase-seconds', 60, 60, 1),
    // open-loop send timing: poll (sub-ms) up to this rate, timers above (see scenarios.js)
    precise: a.precise,
    preciseMaxRate: 200
  })
}

/** @param {string[]} names @returns {string[]} the fault tests named, checked */
function faultTests (names) {
  for (const n of names) {
    if (!Object.hasOwn(TESTS, n)) {
      throw new RangeError(`bench: unknown fault test ${JSON.stringify(n)} (known: ${Object.keys(TESTS).join(', ')})`)
    }
  }
  return names
}

module.exports = { parseOptions, USAGE }
