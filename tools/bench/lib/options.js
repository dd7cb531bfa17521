'use strict'

/**
 * Options of `npm run bench`: defaults for a full run and for `--quick`, from the command line,
 * validated once and frozen.
 */

const os = require('node:os')
const { parseArgs } = require('node:util')
const { SCENARIOS } = require('./scenarios')

const USAGE = `npm run bench -- [--quick] [--out FILE.json] [--label NAME] [--scenario all|${SCENARIOS.join(',')}]
  [--endpoints a,b] [--port 4100] [--workers N]
  seed:        [--connections 100] [--duration 30] [--runs 3] [--warmup 10] [--miss-ratio 0] [--id-range 10000] [--hbase-warmup 45]
  cpu:         [--cpu-rate 1000] [--cpu-runs 5] [--cpu-duration 6] [--cpu-endpoints a,b] [--cpu-generator autocannon|wrk]   ` +
  `(CPU µs per request; quick: 2 runs of 2 s, no sample5_memory or sample5_host)
  sweep:       [--sweep-rates 1000,2000,...] [--sweep-step 10] [--sweep-endpoints a,b] [--sweep-connections 100]`

const STRING_OPTIONS = ['out', 'label', 'scenario', 'endpoints', 'port', 'workers', 'connections', 'duration', 'runs', 'warmup',
  'miss-ratio', 'id-range', 'hbase-warmup', 'sweep-rates', 'sweep-step', 'sweep-endpoints', 'sweep-connections',
  'cpu-rate', 'cpu-runs', 'cpu-duration', 'cpu-endpoints', 'cpu-generator']
/** What drives the cpu scenario's closed loop: wrk (tools/bench/lib/wrk.js) costs a fraction of autocannon's CPU. */
const CPU_GENERATORS = ['autocannon', 'wrk']

/**
 * @param {string[]} argv
 * @returns {Readonly<object>} parameters; `scenarios` is the ordered list to run
 */
function parseOptions (argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
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
  /** @type {(key: string, allowed: string[]) => string} the first allowed value by default */
  const oneOf = (key, allowed) => {
    const value = pick(key, allowed[0], allowed[0])
    if (!allowed.includes(value)) throw new RangeError(`bench: --${key} must be one of ${allowed.join(', ')} (got ${value})`)
    return value
  }
  const scenarios = pick('scenario', 'all', 'all') === 'all' ? SCENARIOS : names('scenario', 'all', 'all')
  for (const s of scenarios) {
    if (!SCENARIOS.includes(s)) throw new RangeError(`bench: unknown scenario ${JSON.stringify(s)} (known: all, ${SCENARIOS.join(', ')})`)
  }
  return Object.freeze({
    quick: q,
    label: a.label || (q ? 'quick' : 'full'),
    out: a.out || null,
    scenarios: SCENARIOS.filter((s) => scenarios.includes(s)),
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
    cpuGenerator: oneOf('cpu-generator', CPU_GENERATORS),
    cpuEndpoints: names(
      'cpu-endpoints',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5,sample5_norollup,sample5_memory,sample5_host',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5'
    ),
    // sweep
    sweepRates: list('sweep-rates', '1000,2000,5000,10000,15000,20000,25000,30000', '1000,4000,8000'),
    sweepStepSeconds: number('sweep-step', 10, 2, 1),
    sweepEndpoints: names(
      'sweep-endpoints',
      a.endpoints || 'sample1,sample2,sample3,sample4,sample5',
      a.endpoints || 'sample1,sample3,sample5'
    ),
    sweepConnections: number('sweep-connections', 100, 100, 1)
  })
}

module.exports = { parseOptions, USAGE }
