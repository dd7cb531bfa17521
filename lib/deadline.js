'use strict'

/** What a wait that reached its deadline resolves to. */
const TIMED_OUT = Symbol('timed out')

/**
 * Settles as `promise` does, or resolves TIMED_OUT once `deadline` passes first: the one way
 * beacon bounds a wait (a close within the shutdown budget, a readiness probe). Time never
 * rejects; the caller decides what a late answer means. The promise keeps running.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} deadline epoch ms; not finite: no bound
 * @param {() => number} [now] the clock
 * @returns {Promise<T|typeof TIMED_OUT>}
 */
function settleBy (promise, deadline, now = Date.now) {
  if (!Number.isFinite(deadline)) return promise
  /** @type {NodeJS.Timeout|undefined} */
  let timer
  /** @type {Promise<typeof TIMED_OUT>} */
  const late = new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, deadline - now()), TIMED_OUT) })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * settleBy, `ms` from now.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms not a number ≥ 0: no bound
 * @returns {Promise<T|typeof TIMED_OUT>}
 */
function settleWithin (promise, ms) {
  return settleBy(promise, ms >= 0 ? Date.now() + ms : Infinity)
}

module.exports = { TIMED_OUT, settleBy, settleWithin }
