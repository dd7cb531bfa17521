'use strict'

/**
 * What a per-client limit costs a request on the hot path (issue 35: ≤ 0.5 µs): beacon's own
 * token bucket (api/public/rate-limit.js, with the client's key from its socket address) against
 * rate-limiter-flexible's RateLimiterMemory, the well-kept library of the field, on the same
 * clients. CPU time of this process per call, from process.cpuUsage, best of `--rounds`; every
 * call admitted (a limit far above the load), as on an ordinary day.
 *
 *   node tools/bench/rate-limit.js [--calls 1000000] [--clients 10000] [--rounds 5]
 *
 * Writes tools/bench/results/<time>-rate-limit.{json,md}; docs/configuration.md#rate-limits has the figures.
 */

const { parseArgs } = require('node:util')
const { execFileSync } = require('node:child_process')
const { RateLimiterMemory } = require('rate-limiter-flexible')
const { publicPlane: { createRateLimiter, clientOf, createProxyTrust }, settings: { DEFAULTS } } = require('../../index.js')
const { describeMachine } = require('./lib/machine')
const { writeResult } = require('./lib/result-files')

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000000' },
    clients: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' }
  }
})
const CALLS = Number(values.calls)
const CLIENTS = Number(values.clients)
const ROUNDS = Number(values.rounds)

// Requests as the data plane sees them: a socket address each, 10,000 distinct clients.
const requests = Array.from({ length: CLIENTS }, (_, i) => ({
  socket: { remoteAddress: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
  headers: {}
}))
// The default trusted proxies; a request without X-Forwarded-For never asks them.
const trusted = createProxyTrust(DEFAULTS.rateLimit.trustedProxies)

/** @param {() => void|Promise<void>} run @returns {Promise<number>} µs of CPU per call, best round */
async function cpuPerCall (run) {
  let best = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const before = process.cpuUsage()
    await run()
    const used = process.cpuUsage(before)
    best = Math.min(best, (used.user + used.system) / CALLS)
  }
  return Math.round(best * 1000) / 1000
}

async function main () {
  const own = createRateLimiter({ perSecond: 1e6, burst: 1e7, maxClients: 100000 })
  const ownUs = await cpuPerCall(() => {
    for (let i = 0; i < CALLS; i++) {
      if (own.take(clientOf(requests[i % CLIENTS], trusted)) !== 0) throw new Error('refused')
    }
  })
  const keyOnlyUs = await cpuPerCall(() => {
    let n = 0
    for (let i = 0; i < CALLS; i++) n += clientOf(requests[i % CLIENTS], trusted).length
    if (n === 0) throw new Error('no keys')
  })
  const library = new RateLimiterMemory({ points: 1e7, duration: 1 })
  const libraryUs = await cpuPerCall(async () => {
    for (let i = 0; i < CALLS; i++) await library.consume(clientOf(requests[i % CLIENTS], trusted))
  })
  const report = {
    command: `node tools/bench/rate-limit.js --calls ${CALLS} --clients ${CLIENTS} --rounds ${ROUNDS}`,
    commit: execFileSync('git', ['describe', '--always', '--dirty'], { cwd: __dirname, encoding: 'utf8' }).trim(),
    machine: describeMachine(),
    calls: CALLS,
    clients: CLIENTS,
    rounds: ROUNDS,
    cpuMicrosPerRequest: { beacon: ownUs, clientKeyAlone: keyOnlyUs, rateLimiterFlexibleMemory: libraryUs }
  }
  const m = report.machine
  const markdown = [
    '# Per-client limit: CPU per request',
    '',
    `\`${report.command}\` at ${report.commit}; ${m.cores} cores, ${m.cpuModel}, node ${m.node}. ${CALLS.toLocaleString('en-US')} ` +
      `admitted requests over ${CLIENTS.toLocaleString('en-US')} clients, CPU time of the process per request, best of ${ROUNDS} rounds.`,
    '',
    '| per request | CPU µs |',
    '|---|---|',
    `| beacon's token bucket (api/public/rate-limit.js), the client's key included | ${ownUs} |`,
    `| the client's key alone (socket address → IPv4 or IPv6 /64) | ${keyOnlyUs} |`,
    `| rate-limiter-flexible RateLimiterMemory.consume, awaited | ${libraryUs} |`,
    ''
  ].join('\n')
  writeResult({ name: 'rate-limit', report, markdown })
}

main()
