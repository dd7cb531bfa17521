'use strict'

/**
 * One shutdown budget. `shutdownTimeoutMs` is the time a worker has from the stop signal to its
 * exit; every stage's timeout is carved out of it, so the stages together can never outlast it:
 *
 *   drain the HTTP servers    up to DRAIN_SHARE of the budget (idle keep-alive connections
 *                             close at once; requests still running past it are cut)
 *   close the access-log sinks   what is left, less the HBase client's reserve (an HBase sink
 *                             writes what it holds to HBase, then journals the rest to disk)
 *   close the HBase client    the reserve (in-flight calls finish; past it they are aborted)
 *
 * A stage that ends early leaves its time to the next ones. The cluster primary SIGKILLs a
 * worker only after `killAfterMs`: the whole budget plus EXIT_GRACE_MS for the process to flush
 * its log and exit, so a worker that keeps to its budget is never killed.
 */

const DRAIN_SHARE = 0.5
const CLIENT_SHARE = 0.1
const EXIT_GRACE_MS = 2000

/**
 * @param {number} totalMs settings.shutdownTimeoutMs
 * @param {() => number} [now]
 * @returns {{ drainMs: () => number, sinksMs: () => number, clientMs: () => number }} each
 *   returns the time its stage may take from the moment it is called
 */
function startShutdownBudget (totalMs, now = Date.now) {
  const deadline = now() + totalMs
  const clientReserve = Math.floor(totalMs * CLIENT_SHARE)
  const left = () => Math.max(0, deadline - now())
  return {
    drainMs: () => Math.min(Math.floor(totalMs * DRAIN_SHARE), left()),
    sinksMs: () => Math.max(0, left() - clientReserve),
    clientMs: left
  }
}

/**
 * When the cluster primary gives up on a worker that was asked to stop.
 * @param {number} totalMs settings.shutdownTimeoutMs
 * @returns {number}
 */
function killAfterMs (totalMs) {
  return totalMs + EXIT_GRACE_MS
}

module.exports = { startShutdownBudget, killAfterMs, DRAIN_SHARE, CLIENT_SHARE, EXIT_GRACE_MS }
