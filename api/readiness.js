'use strict'

/**
 * The `/readyz` check: may a load balancer send this process traffic? Ready when HBase answers
 * or the caches can serve without it (so a shared-HBase outage does not pull every warm host
 * out at once), no access-log sink is saturated, and the process is not closing.
 *
 * @param {object} options
 * @param {{ ping: (opts: { timeout: number }) => Promise<void> }} options.client
 * @param {number} options.pingTimeoutMs
 * @param {Map<string, { cache: { stats: () => { size: number } }|null }>} options.endpoints
 * @param {Map<string, { stats: () => any, maxQueue?: number, overload?: string }>} options.sinks
 * @param {() => boolean} options.closing
 * @returns {() => Promise<{ ready: boolean, checks: Record<string, string|number> }>}
 */
function createReadiness ({ client, pingTimeoutMs, endpoints, sinks, closing }) {
  return async function readiness () {
    /** @type {Record<string, string|number>} */
    const checks = {}
    let hbaseOk = true
    try {
      await client.ping({ timeout: pingTimeoutMs })
      checks.hbase = 'reachable'
    } catch (err) {
      hbaseOk = false
      checks.hbase = `unreachable (${err.code || err.message})`
    }
    const cachedEntries = [...endpoints.values()].reduce((n, e) => n + (e.cache ? e.cache.stats().size : 0), 0)
    checks.cachedConfigs = cachedEntries
    let saturated = false
    for (const [name, sink] of sinks) {
      const stats = sink.stats()
      // Memory is full: new entries are spilled or shed (the sink's policy). Still answering,
      // but a load balancer should prefer a host that is not.
      const full = sink.maxQueue > 0 && stats.pending >= sink.maxQueue
      saturated = saturated || full
      let check = 'ok'
      if (full) check = `saturated: ${sink.overload === 'shed' ? 'shedding' : 'spilling to the journal'}`
      else if (stats.state === 'down') check = `spilling to the journal (HBase not answering; ${stats.journalPending} pending)`
      checks[`accessLog.${name}`] = check
    }
    return { ready: (hbaseOk || cachedEntries > 0) && !saturated && !closing(), checks }
  }
}

module.exports = { createReadiness }
