'use strict'

const { settleWithin, TIMED_OUT } = require('../../lib/deadline')

/**
 * @typedef {import('../../logging/retention').RetentionView} RetentionView
 * @typedef {{ pending: number, writeFailing?: string|null, walFailing?: string|null, walFailures?: number,
 *   journalBuffered?: number, shed?: number, state?: string, journalPending?: number,
 *   history?: { short: boolean, keptMs: number, promisedMs: number } }} SinkStats
 *   what readiness reads of a sink's stats (each sink's own shape: logging/)
 */

/**
 * The `/readyz` check: may a load balancer send this process traffic? Ready when HBase answers
 * or the caches can serve without it (so a shared-HBase outage does not pull every warm host
 * out at once), no access-log sink is saturated or failing to write to its local disk (its journal
 * or its write-ahead log), and the process is not closing.
 *
 * @param {object} options
 * @param {{ ping: (opts: { timeout: number }) => Promise<void> }} options.client
 * @param {number} options.pingTimeoutMs
 * @param {Map<string, { cache: { stats: () => { size: number } }|null }>} options.endpoints
 * @param {Map<string, import('../../logging/sink-set').Sink>} options.sinks
 * @param {{ describe: () => Promise<RetentionView> }|null} [options.retention] the queried access log's
 *   (logging/retention.js): shown beside the checks, never a reason to be unready
 * @param {{ parked: () => Promise<number[]> }|null} [options.rollups] the queried access log's parked
 *   minutes (logging/rollup/read.js createParkedView): a warning, never a reason to be unready
 * @param {() => boolean} options.closing
 * @returns {() => Promise<{ ready: boolean, checks: Record<string, string|number>,
 *   retention?: RetentionView|{ error: string } }>}
 */
function createReadiness ({ client, pingTimeoutMs, endpoints, sinks, retention = null, rollups = null, closing }) {
  return async function readiness () {
    /** @type {Record<string, string|number>} */
    const checks = {}
    let hbaseOk = true
    // Read beside the ping, from the cache most of the time (a master call a minute at most), and
    // never waited for longer than the ping: a load balancer's probe must not hang on the master.
    const described = retention ? withinMs(retention.describe(), pingTimeoutMs) : null
    const parked = rollups ? withinMs(rollups.parked(), pingTimeoutMs) : null
    try {
      await client.ping({ timeout: pingTimeoutMs })
      checks.hbase = 'reachable'
    } catch (e) {
      const err = /** @type {Error & { code?: string }} */ (e)
      hbaseOk = false
      checks.hbase = `unreachable (${err.code || err.message})`
    }
    const cachedEntries = [...endpoints.values()].reduce((n, e) => n + (e.cache ? e.cache.stats().size : 0), 0)
    checks.cachedConfigs = cachedEntries
    let saturated = false
    for (const [name, sink] of sinks) {
      const stats = /** @type {SinkStats} */ (sink.stats())
      // Memory is full: new entries are spilled or shed (the sink's policy). Still answering,
      // but a load balancer should prefer a host that is not.
      const maxQueue = sink.maxQueue ?? 0 // only an HBase sink has a bound
      const full = maxQueue > 0 && stats.pending >= maxQueue
      // The local disk refuses the sink's writes (a full disk): entries wait in memory, within
      // a bound, and past it are shed. A host that can log should get the traffic instead.
      const failing = typeof stats.writeFailing === 'string'
      // The write-ahead log refuses writes: entries are answered without it, not crash-proof.
      const walFailing = typeof stats.walFailing === 'string'
      saturated = saturated || full || failing || walFailing
      let check = 'ok'
      if (walFailing) {
        check = `write-ahead log cannot be written: ${stats.walFailing} ` +
          `(${stats.walFailures} entries answered without it; a crash would lose those in memory)`
      } else if (failing) {
        check = writeFailingCheck(sink, /** @type {SinkStats & { writeFailing: string }} */ (stats))
      } else if (full) {
        check = `saturated: ${sink.overload === 'shed' ? 'shedding' : 'spilling to the journal'}`
      } else if (stats.state === 'down') {
        check = `spilling to the journal (HBase not answering; ${stats.journalPending} pending)`
      } else if (stats.history && stats.history.short) {
        check = historyCheck(stats.history)
      }
      checks[`accessLog.${name}`] = check
    }
    if (parked) checks.rollups = parkedCheck(await parked)
    const ready = (hbaseOk || cachedEntries > 0) && !saturated && !closing()
    return described ? { ready, checks, retention: await described } : { ready, checks }
  }
}

/**
 * @param {number[]|{ error: string }} parked
 * @returns {string} `ok`, or a warning that names the parked minutes
 */
function parkedCheck (parked) {
  if (!Array.isArray(parked)) return `not read: ${parked.error}`
  if (parked.length === 0) return 'ok'
  const first = parked.slice(0, 3).map((m) => new Date(m).toISOString()).join(', ')
  return `warning: ${parked.length} minute(s) parked, not counted ` +
    `(${first}${parked.length > 3 ? ', …' : ''}; see beacon log check)`
}

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T|{ error: string }>} its value, or `{ error }` when it failed or took longer than ms
 */
async function withinMs (promise, ms) {
  const answer = await settleWithin(promise.catch((err) => ({ error: err.code || err.message })), ms)
  return answer === TIMED_OUT ? { error: 'no answer in time' } : answer
}

/**
 * A warning, never a reason to be unready: the file log still writes, it keeps less than promised.
 * @param {{ keptMs: number, promisedMs: number }} history
 * @returns {string}
 */
function historyCheck ({ keptMs, promisedMs }) {
  const hours = (/** @type {number} */ ms) => `${Math.round(ms / 360000) / 10} h`
  return `warning: the file log's rotated files hold ${hours(keptMs)} of history, ` +
    `less than the ${hours(promisedMs)} keepFiles promise ` +
    '(rotating on size: raise rotateSize or keepFiles)'
}

/**
 * @param {{ type?: string }} sink
 * @param {{ writeFailing: string, pending: number, journalBuffered?: number, shed?: number }} stats
 * @returns {string} e.g. `journal cannot be written: ENOSPC (1200 entries in memory, 0 shed)`
 */
function writeFailingCheck (sink, stats) {
  const what = sink.type === 'file' ? 'file log' : 'journal'
  const held = sink.type === 'file' ? stats.pending : stats.journalBuffered
  return `${what} cannot be written: ${stats.writeFailing} (${held} entries in memory, ${stats.shed || 0} shed)`
}

module.exports = { createReadiness }
