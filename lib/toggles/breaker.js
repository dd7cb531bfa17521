'use strict'

/**
 * Circuit breaker for store reads. After `failureThreshold` consecutive failures it opens: calls
 * fail at once for `openMs` instead of each waiting out its timeout against a stuck or dead
 * store (so requests cannot pile up). Then one trial call is let through (half-open): success
 * closes the circuit, failure opens it again.
 *
 * @param {{ failureThreshold?: number, openMs?: number, now?: () => number,
 *   onStateChange?: (state: 'closed'|'open'|'half-open') => void }} [options]
 */
function createCircuitBreaker ({ failureThreshold = 3, openMs = 1000, now = Date.now, onStateChange } = {}) {
  /** @type {'closed'|'open'|'half-open'} */
  let state = 'closed'
  let failures = 0
  let openedAt = 0
  let trialInFlight = false

  /** @param {'closed'|'open'|'half-open'} next */
  function setState (next) {
    if (next === state) return
    state = next
    if (onStateChange) onStateChange(next)
  }

  return {
    /** @returns {boolean} whether a call may go to the store now */
    allow () {
      if (state === 'closed') return true
      if (state === 'open' && now() - openedAt >= openMs) setState('half-open')
      if (state === 'half-open' && !trialInFlight) {
        trialInFlight = true
        return true
      }
      return false
    },
    success () {
      failures = 0
      trialInFlight = false
      setState('closed')
    },
    failure () {
      trialInFlight = false
      failures++
      if (state === 'half-open' || failures >= failureThreshold) {
        openedAt = now()
        setState('open')
      }
    },
    get state () {
      return state
    }
  }
}

module.exports = { createCircuitBreaker }
