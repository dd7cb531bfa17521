'use strict'

/**
 * @typedef {object} Core what the operation modules share; the client builds it once
 * @property {import('./options').ClientOptions} options
 * @property {import('./pool').ConnectionPool} pool
 * @property {import('./locator').RegionLocator} locator
 * @property {import('./retry').RetryPolicy} policy
 */

/**
 * @typedef {{ name: string, startKey: Buffer, endKey: Buffer, server: string|null, info: object }} RegionInfo
 */

/**
 * The epoch-ms deadline of an operation that starts now.
 * @param {Core} core
 * @param {number} [timeout] ms; default operationTimeout
 * @returns {number}
 */
function deadlineOf (core, timeout) {
  return Date.now() + (timeout || core.options.operationTimeout)
}

/**
 * A single-row RPC against the region holding `key`, relocating and retrying as needed until
 * the operation's deadline.
 * @param {Core} core
 * @param {string} method ClientService method: "Get", "Mutate" or "Scan"
 * @param {string} table
 * @param {Buffer} key
 * @param {(region: import('./meta').LocatedRegion) => object} buildRequest the request for that region
 * @param {number} [timeout] ms, retries included; default operationTimeout
 * @param {string} [kind] the tag its RPCs count under (traffic.js)
 * @returns {Promise<any>} the decoded response
 */
function regionOp (core, method, table, key, buildRequest, timeout, kind) {
  const { locator, pool, policy } = core
  const deadline = deadlineOf(core, timeout)
  return policy.retry(`${method} on ${table}`, deadline, async () => {
    const region = locator.cached(table, key) || await locator.locate(table, key, deadline)
    try {
      return await pool.invoke(
        region.server,
        'ClientService',
        method,
        buildRequest(region),
        policy.rpcTimeout(deadline),
        kind
      )
    } catch (err) {
      if (/** @type {{ relocate?: boolean }} */ (err).relocate) locator.invalidate(region)
      throw err
    }
  })
}

/**
 * Regions of a table as meta has them now, retried within operationTimeout.
 * @param {Core} core
 * @param {string} table
 * @returns {Promise<RegionInfo[]>}
 */
async function listRegions (core, table) {
  const { locator, policy, options } = core
  const regions = await policy.retry('regions', deadlineOf(core), () =>
    locator.listRegions(table, Date.now() + options.rpcTimeout))
  return regions.map((r) => ({
    name: r.name.toString(),
    startKey: r.startKey,
    endKey: r.endKey,
    server: r.server,
    info: r.info
  }))
}

module.exports = { regionOp, listRegions, deadlineOf }
