'use strict'

/**
 * The options of an open-loop run (./open-loop.js), defaults filled in and checked; a bad one
 * throws, naming it.
 * @param {any} options
 * @returns {any}
 */
function validate (options) {
  const o = {
    connections: 1,
    timeoutMs: 10000,
    // Timers fire up to ~1.5 ms after their time: only a lag beyond that is the schedule slipping.
    lateMs: options.precise ? 1 : 2,
    ...options
  }
  const positive = (key, n) => {
    if (!Number.isFinite(n) || n <= 0) throw new RangeError(`open-loop: ${key} must be a positive number (got ${n})`)
  }
  if (typeof o.host !== 'string' || !o.host) throw new TypeError('open-loop: host is required')
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new RangeError(`open-loop: port must be 1..65535 (got ${o.port})`)
  positive('rate', o.rate)
  positive('durationMs', o.durationMs)
  positive('timeoutMs', o.timeoutMs)
  if (!Number.isInteger(o.connections) || o.connections < 1) {
    throw new RangeError(`open-loop: connections must be a positive integer (got ${o.connections})`)
  }
  if (typeof o.next !== 'function') throw new TypeError('open-loop: next() is required')
  return o
}

module.exports = { validate }
