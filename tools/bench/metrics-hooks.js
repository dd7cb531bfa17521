'use strict'

/**
 * What the per-request metric updates cost in CPU: a response counter, a latency histogram and
 * a cache-outcome counter, through prom-client's bound children, through api/metrics/hot.js's
 * series, and through the hooks the data plane calls (api/metrics/index.js: the series looked up by
 * endpoint and status or outcome), alternating over rounds in one process. Prints ns per
 * request (median and range).
 *
 *   node tools/bench/metrics-hooks.js [--requests 2000000] [--rounds 5]
 */

const { parseArgs } = require('node:util')
const client = require('prom-client')
const { hotCounter, hotHistogram } = require('../../api/metrics/hot')
const { createMetrics } = require('../../api/metrics')

const { values: args } = parseArgs({
  options: { requests: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '5' } }
})
const N = Number(args.requests)
const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** The three series one sample3 cache hit updates, from each implementation. */
const variants = {
  'prom-client': () => {
    const registers = [new client.Registry()]
    const requests = new client.Counter({ name: 'r', help: 'h', labelNames: ['endpoint', 'status'], registers }).labels({
      endpoint: 'sample3',
      status: '200'
    })
    const duration = new client.Histogram({ name: 'd', help: 'h', labelNames: ['endpoint'], buckets: BUCKETS, registers }).labels({
      endpoint: 'sample3'
    })
    const hits = new client.Counter({ name: 'c', help: 'h', labelNames: ['endpoint', 'outcome'], registers }).labels({
      endpoint: 'sample3',
      outcome: 'hit'
    })
    return { requests, duration, hits }
  },
  'hot-metrics': () => {
    const register = new client.Registry()
    return {
      requests: hotCounter({ name: 'r', help: 'h', register }).child({ endpoint: 'sample3', status: '200' }),
      duration: hotHistogram({ name: 'd', help: 'h', buckets: BUCKETS, register }).child({ endpoint: 'sample3' }),
      hits: hotCounter({ name: 'c', help: 'h', register }).child({ endpoint: 'sample3', outcome: 'hit' })
    }
  }
}

/** The data plane's calls for one sample3 cache hit, through api/metrics/index.js's hooks. */
function viaHooks () {
  const { hooks } = createMetrics({ collectDefault: false })
  return (i) => {
    hooks.onCacheOutcome('sample3', 'hit')
    hooks.onResponse('sample3', 200, 0.0003 + (i & 7) * 0.0001)
  }
}

/** @param {ReturnType<typeof variants['hot-metrics']>} s */
const direct = ({ requests, duration, hits }) => (i) => {
  requests.inc()
  duration.observe(0.0003 + (i & 7) * 0.0001)
  hits.inc()
}
const runners = {
  ...Object.fromEntries(Object.entries(variants).map(([name, make]) => [name, () => direct(make())])),
  'api/metrics/index.js hooks': viaHooks
}

const ns = Object.fromEntries(Object.keys(runners).map((name) => [name, []]))
for (let round = 0; round < Number(args.rounds); round++) {
  for (const [name, make] of Object.entries(runners)) {
    const one = make()
    const started = process.cpuUsage()
    for (let i = 0; i < N; i++) one(i)
    const used = process.cpuUsage(started)
    ns[name].push(Math.round((used.user + used.system) * 1000 / N))
  }
}
for (const [name, runs] of Object.entries(ns)) {
  const sorted = [...runs].sort((a, b) => a - b)
  console.log(`${name}: ${sorted[Math.floor(sorted.length / 2)]} ns per request ` +
    `(${sorted[0]}–${sorted[sorted.length - 1]}, ${runs.length} rounds of ${N.toLocaleString('en-US')})`)
}
