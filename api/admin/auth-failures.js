'use strict'

/**
 * Failed admin authentications, by source address: each is counted (the metrics hook), the first
 * of a source in each minute is logged (with how many the source had in its minute before, so a
 * guessing run reads as one line a minute, not one per guess), and a source past
 * `maxPerMinute` failures in its minute waits `delayMs` before each further answer, which makes
 * guessing slow without slowing anyone who has the token.
 *
 * The table of sources is bounded (`maxSources`): past it, the oldest minute's sources are
 * forgotten first, so a flood of addresses costs memory once, not without end.
 */

const MINUTE_MS = 60000

/**
 * @typedef {{ windowStart: number, failures: number }} SourceState
 *
 * @param {object} options
 * @param {{ warn: Function }} options.logger
 * @param {() => number} [options.now]
 * @param {(path: string) => void} [options.onFailure] metrics: one failed authentication
 * @param {number} [options.maxPerMinute] failures a source may have in a minute before it waits
 * @param {number} [options.delayMs] how long it then waits per answer
 * @param {number} [options.maxSources]
 * @returns {{ failed: (source: string|undefined, path: string) => number }} failed: records one
 *   failure, returns how many ms its answer waits (0 under the limit)
 */
function createAuthFailures ({ logger, now = Date.now, onFailure, maxPerMinute = 10, delayMs = 1000, maxSources = 10000 }) {
  /** @type {Map<string, SourceState>} in the order sources were first seen in their minute */
  const sources = new Map()

  return {
    failed (source = 'unknown', path) {
      if (onFailure) onFailure(path)
      const at = now()
      let state = sources.get(source)
      let before = 0
      if (state !== undefined && at - state.windowStart >= MINUTE_MS) {
        before = state.failures
        sources.delete(source)
        state = undefined
      }
      if (state === undefined) {
        if (sources.size >= maxSources) sources.delete(/** @type {string} */ (sources.keys().next().value))
        state = { windowStart: at, failures: 0 }
        sources.set(source, state)
        logger.warn({ source, path, failuresLastMinute: before }, 'admin authentication failed (logged once per source per minute)')
      }
      state.failures++
      return state.failures > maxPerMinute ? delayMs : 0
    }
  }
}

module.exports = { createAuthFailures }
