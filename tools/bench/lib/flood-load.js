'use strict'

/**
 * One source of the flood bench's load (tools/bench/flood.js) in a process of its own, so the real
 * visitors' generator keeps its schedule whatever the flood's generators cost:
 *
 *   node tools/bench/lib/flood-load.js '{"source":"visitors","port":4420,"rate":400,"durationMs":30000,"ids":100000}'
 *
 * Prints one JSON line: the open-loop summary and the answers by status.
 *
 * - visitors: sample5, ids Zipf(1.1) over 1..ids, 40 addresses (127.0.2.x), a browser's agent;
 * - bots: sample5, an id never sent before each, 200 other addresses (127.0.3.x), a crawler's agent;
 * - greedy: sample5, new ids, from one address (127.0.0.9), 8 connections.
 */

const { runOpenLoop } = require('./open-loop')
const { createZipfSampler } = require('./zipf')
const { jsonJobMain } = require('./processes')

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const CRAWLER = 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.test/bot)'
const GREEDY_ADDRESS = '127.0.0.9'
const addresses = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}.${i + 1}`)

/**
 * @param {{ source: 'visitors'|'bots'|'greedy', port: number, rate: number, durationMs: number, ids: number }} job
 * @returns {object} the run's open-loop options for its source
 */
function sourceOptions ({ source, ids }) {
  let seq = 0
  const fresh = (who) => `${who}-${process.pid}-${seq++}`
  if (source === 'visitors') {
    const zipf = createZipfSampler({ n: ids, s: 1.1 })
    return {
      connections: 40,
      // The visitors' latency is the measure: their sends poll for their due times.
      precise: true,
      localAddresses: addresses('127.0.2', 40),
      next: () => ({ path: `/api/sample5.js?id=${zipf()}&callback=cb`, headers: { 'User-Agent': BROWSER } })
    }
  }
  if (source === 'bots') {
    return {
      connections: 200,
      localAddresses: addresses('127.0.3', 200),
      next: () => ({ path: `/api/sample5.js?id=${fresh('bot')}&callback=cb`, headers: { 'User-Agent': CRAWLER } })
    }
  }
  if (source === 'greedy') {
    return {
      connections: 8,
      localAddresses: [GREEDY_ADDRESS],
      next: () => ({ path: `/api/sample5.js?id=${fresh('greedy')}`, headers: { 'User-Agent': 'python-requests/2.32.3' } })
    }
  }
  throw new TypeError(`flood-load: unknown source ${JSON.stringify(source)}`)
}

/** @param {Parameters<typeof sourceOptions>[0]} job */
async function runSource (job) {
  /** @type {Record<string, number>} */
  const byStatus = {}
  const summary = await runOpenLoop({
    host: '127.0.0.1',
    port: job.port,
    rate: job.rate,
    durationMs: job.durationMs,
    timeoutMs: 10000,
    ...sourceOptions(job),
    onAnswer: (request, outcome) => { byStatus[outcome.status] = (byStatus[outcome.status] || 0) + 1 }
  })
  const { rps, p50, p99, max, errors, late, sent } = summary
  return { source: job.source, summary: { rps, p50, p99, max, errors, late }, sent, byStatus }
}

jsonJobMain(module, 'flood-load', runSource)

module.exports = { sourceOptions, runSource, GREEDY_ADDRESS }
