'use strict'

/**
 * Polls `predicate` until it returns (or resolves) true; rejects, naming `what`, once `boundMs`
 * have passed without it.
 * @param {string} what
 * @param {() => boolean|Promise<boolean>} predicate
 * @param {number} boundMs
 * @param {number} [intervalMs]
 * @returns {Promise<void>}
 */
async function until (what, predicate, boundMs, intervalMs = 50) {
  const deadline = Date.now() + boundMs
  for (;;) {
    if (await predicate()) return
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${boundMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

module.exports = { until }
