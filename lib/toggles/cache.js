'use strict'

const { LRUCache } = require('lru-cache')

const noop = () => {}
const BACKGROUND = Object.freeze({ background: true })
const PAST_FILTERS = Object.freeze({ fresh: true })

/** @typedef {'hit'|'miss'|'coalesced'|'stale'|'negative_hit'|'stale_on_error'|'refresh_error'} Outcome */
/** @typedef {{ entry: import('./entry').ConfigEntry, fetchedAt: number }} Cached */

/**
 * Local LRU cache in front of a config source.
 *
 * Ages of an entry (since it was fetched):
 *   < ttl                         fresh: served synchronously
 *   < ttl + staleWhileRevalidate  stale: served synchronously while one background refresh runs
 *   older                         expired: the lookup waits for a refresh; if the store fails,
 *                                 the old value is still served while younger than maxStale
 * Absent ids are cached too (negative entries, negativeTtl) so a flood of unknown ids does not
 * become a flood of store reads, in an LRU of their own of at most `maxNegative`: random ids
 * evict each other, never the known ids the real traffic reads. Concurrent misses on one id
 * share one store read.
 *
 * @param {object} options
 * @param {{ lookup: (id: string, opts?: { background?: boolean, fresh?: boolean }) =>
 *   Promise<import('./entry').ConfigEntry>|import('./entry').ConfigEntry,
 *   hurry?: (id: string) => void }} options.source
 *   `background`: a refresh of a stale entry, no one waits on it (the source may hold it back to read it with others);
 *   `fresh`: a reload, read whatever the source believes; hurry: someone now waits on it
 * @param {number} options.max entries
 * @param {number} options.ttlMs
 * @param {number} options.staleWhileRevalidateMs
 * @param {number} options.maxStaleMs
 * @param {number} options.negativeTtlMs
 * @param {number} [options.maxNegative] negative entries at most (default a tenth of max, at least 1)
 * @param {() => number} [options.now] clock in ms (tests inject a fake one)
 * @param {(outcome: 'hit'|'miss'|'coalesced'|'stale'|'negative_hit'|'stale_on_error'
 *   |'refresh_error') => void} [options.onOutcome]
 */
function createConfigCache ({
  source, max, ttlMs, staleWhileRevalidateMs, maxStaleMs, negativeTtlMs,
  maxNegative = Math.max(1, Math.floor(max / 10)), now = Date.now, onOutcome
}) {
  /** @param {number} size @returns {LRUCache<string, Cached>} */
  const lru = (size) => new LRUCache({
    max: size,
    // The LRU drops what is past any use (older than every window); freshness is decided here.
    ttl: Math.max(maxStaleMs, ttlMs + staleWhileRevalidateMs, negativeTtlMs, 1),
    ttlAutopurge: false,
    perf: { now }
  })
  const known = lru(max)
  const absent = lru(maxNegative)
  const cache = {
    /** @param {string} id */
    get: (id) => known.get(id) ?? absent.get(id),
    /** An id lives in one of the two: the one its last read says. @param {string} id @param {Cached} value */
    set (id, value) {
      const [into, out] = value.entry.found ? [known, absent] : [absent, known]
      out.delete(id)
      into.set(id, value)
    },
    /** @param {string} id */
    delete: (id) => known.delete(id) || absent.delete(id),
    clear () {
      known.clear()
      absent.clear()
    }
  }
  /** @type {Map<string, Promise<import('./entry').ConfigEntry>>} */
  const inflight = new Map()
  /** @type {Set<string>} ids whose read in flight no one waits on yet */
  const background = new Set()
  const counters = { hit: 0, miss: 0, coalesced: 0, stale: 0, negative_hit: 0, stale_on_error: 0, refresh_error: 0 }
  /** @type {(outcome: Outcome) => void} */
  const count = onOutcome
    ? (outcome) => { counters[outcome]++; onOutcome(outcome) }
    : (outcome) => { counters[outcome]++ }

  /**
   * @param {string} id
   * @param {boolean} [inBackground] no one waits on it (a stale entry is served meanwhile): the
   *   source may hold it back a while to read it with others
   * @param {boolean} [fresh] the caller knows the id changed: the source reads it whatever it
   *   believes of the id (its known-id filter)
   * @returns {Promise<import('./entry').ConfigEntry>}
   */
  function refresh (id, inBackground = false, fresh = false) {
    let pending = inflight.get(id)
    if (pending) {
      if (!inBackground) hurry(id)
      return pending
    }
    if (inBackground) background.add(id)
    pending = Promise.resolve()
      .then(() => source.lookup(id, background.has(id) ? BACKGROUND : fresh ? PAST_FILTERS : undefined))
      .then((entry) => {
        cache.set(id, { entry, fetchedAt: now() })
        return entry
      })
      .finally(() => {
        inflight.delete(id)
        background.delete(id)
      })
    inflight.set(id, pending)
    return pending
  }

  /** Someone now waits on a refresh started in the background: the source sends it at once. @param {string} id */
  function hurry (id) {
    if (background.delete(id) && source.hurry) source.hurry(id)
  }

  /** @param {string} id @returns {import('./entry').ConfigEntry|Promise<import('./entry').ConfigEntry>} */
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
        refresh(id, true).catch(() => count('refresh_error'))
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
    if (pending) hurry(id)
    const after = pending ? pending.then(noop, noop) : Promise.resolve()
    return after.then(() => refresh(id, false, true))
  }

  return {
    lookup,
    reload,
    /** Drops one id so the next lookup reads the store (admin changes on this process). */
    /** @param {string} id */
    invalidate: (id) => cache.delete(id),
    clear: () => cache.clear(),
    stats: () => ({ ...counters, size: known.size + absent.size, negativeSize: absent.size, inflight: inflight.size })
  }
}

module.exports = { createConfigCache }
