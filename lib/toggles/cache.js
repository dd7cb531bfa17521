'use strict'

const { LRUCache } = require('lru-cache')

const noop = () => {}

/**
 * Local LRU cache in front of a config source.
 *
 * Ages of an entry (since it was fetched):
 *   < ttl                         fresh: served synchronously
 *   < ttl + staleWhileRevalidate  stale: served synchronously while one background refresh runs
 *   older                         expired: the lookup waits for a refresh; if the store fails,
 *                                 the old value is still served while younger than maxStale
 * Absent ids are cached too (negative entries, negativeTtl) so a flood of unknown ids does not
 * become a flood of store reads. Concurrent misses on one id share one store read.
 *
 * @param {object} options
 * @param {{ lookup: (id: string) => Promise<import('./entry').ConfigEntry>|import('./entry').ConfigEntry }} options.source
 * @param {number} options.max entries
 * @param {number} options.ttlMs
 * @param {number} options.staleWhileRevalidateMs
 * @param {number} options.maxStaleMs
 * @param {number} options.negativeTtlMs
 * @param {() => number} [options.now] clock in ms (tests inject a fake one)
 * @param {(outcome: 'hit'|'miss'|'coalesced'|'stale'|'negative_hit'|'stale_on_error'|'refresh_error') => void} [options.onOutcome]
 */
function createConfigCache ({ source, max, ttlMs, staleWhileRevalidateMs, maxStaleMs, negativeTtlMs, now = Date.now, onOutcome }) {
  /** @type {LRUCache<string, { entry: import('./entry').ConfigEntry, fetchedAt: number }>} */
  const cache = new LRUCache({
    max,
    // The LRU drops what is past any use (older than every window); freshness is decided here.
    ttl: Math.max(maxStaleMs, ttlMs + staleWhileRevalidateMs, negativeTtlMs, 1),
    ttlAutopurge: false,
    perf: { now }
  })
  const inflight = new Map()
  const counters = { hit: 0, miss: 0, coalesced: 0, stale: 0, negative_hit: 0, stale_on_error: 0, refresh_error: 0 }
  const count = onOutcome
    ? (outcome) => { counters[outcome]++; onOutcome(outcome) }
    : (outcome) => { counters[outcome]++ }

  function refresh (id) {
    let pending = inflight.get(id)
    if (pending) return pending
    pending = Promise.resolve()
      .then(() => source.lookup(id))
      .then((entry) => {
        cache.set(id, { entry, fetchedAt: now() })
        return entry
      })
      .finally(() => inflight.delete(id))
    inflight.set(id, pending)
    return pending
  }

  function lookup (id) {
    const cached = cache.get(id)
    if (cached !== undefined) {
      const age = now() - cached.fetchedAt
      const freshFor = cached.entry.found ? ttlMs : negativeTtlMs
      if (age < freshFor) {
        count(cached.entry.found ? 'hit' : 'negative_hit')
        return cached.entry
      }
      if (age < freshFor + staleWhileRevalidateMs) {
        count('stale')
        refresh(id).catch(() => count('refresh_error'))
        return cached.entry
      }
      // Too old to serve without asking: a store read like a miss (one outcome per lookup).
      const outcome = inflight.has(id) ? 'coalesced' : 'miss'
      return refresh(id).then((entry) => {
        count(outcome)
        return entry
      }, (err) => {
        if (now() - cached.fetchedAt < maxStaleMs) {
          count('stale_on_error')
          return cached.entry
        }
        throw err
      })
    }
    // Only the first miss reads the store; the others wait for that read.
    count(inflight.has(id) ? 'coalesced' : 'miss')
    return refresh(id)
  }

  /**
   * Reads `id` from the source now and caches what it reads, whatever is cached: for a caller
   * that knows the id changed after the cached entry may have been read. A read already in
   * flight may have started before the change, so it is waited for, never shared.
   * @param {string} id
   * @returns {Promise<import('./entry').ConfigEntry>}
   */
  function reload (id) {
    count('miss')
    const pending = inflight.get(id)
    const after = pending ? pending.then(noop, noop) : Promise.resolve()
    return after.then(() => refresh(id))
  }

  return {
    lookup,
    reload,
    /** Drops one id so the next lookup reads the store (admin changes on this process). */
    invalidate: (id) => cache.delete(id),
    clear: () => cache.clear(),
    stats: () => ({ ...counters, size: cache.size, inflight: inflight.size })
  }
}

module.exports = { createConfigCache }
