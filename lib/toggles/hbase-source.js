'use strict'

const { configEntry, contentVersion } = require('./entry')
const { createCircuitBreaker } = require('./breaker')
const { ERRORS } = require('../errors')

const MAX_IDS_PER_MULTI_GET = 500
const DEFAULT_MAX_IN_FLIGHT = 2
// Shared: it carries no request data, and an open circuit fails every read the same way.
const CIRCUIT_OPEN = Object.freeze(Object.assign(new ERRORS.CIRCUIT_OPEN(), { retryable: true }))
const LOOKUP_TIMEOUT = Object.freeze(Object.assign(new ERRORS.LOOKUP_TIMEOUT(), { retryable: true }))
// A read sent with less time than this left would only add load to a struggling HBase.
const MIN_READ_MS = 10
// How long a refresh no one waits on (a stale entry served meanwhile) waits for others to go with.
const DEFAULT_REFRESH_LINGER_MS = 50

/**
 * One caller waiting on an id's read.
 * @typedef {{ resolve: (entry: import('./entry').ConfigEntry) => void, reject: (err: unknown) => void }} Waiter
 */

/**
 * Config source reading toggles from HBase through the toggle store (lib/toggles/store.js).
 * Lookups made in the same turn of the event loop are coalesced into one multi-get (one RPC per
 * RegionServer) instead of one RPC each, and an id asked for twice in that turn is read once. At
 * most `maxInFlight` reads are out at a time: under load, ids queue while they are, so batches
 * grow with the load (fewer, larger RPCs), while a lone request at low load is sent at once. A
 * queue longer than the multi-gets there is room for (500 ids each) sends only those, oldest ids
 * first; the rest go as reads come back. The store's deadline counts
 * from when a lookup is made: a batch is read with what is left of its oldest lookup's time, and
 * fails with LOOKUP_TIMEOUT if nearly nothing is left, so queueing behind slow reads never
 * doubles a request's wait. With `lingerMs`, a batch also waits that long after its first id
 * for more: HBase spends about as much CPU on one RPC as on several rows of a multi-get, so a
 * wait trades latency for HBase CPU per read; measured, it raised p99 for no gain beyond the
 * noise, which is why it defaults to 0 (docs/decisions.md, 2026-11-25).
 *
 * A lookup no one waits on (`{ background: true }`: the cache refreshing an entry it serves
 * stale meanwhile) waits up to `refreshLingerMs` instead, so the refreshes of that time go in one
 * multi-get rather than one single-row read each; a lookup someone waits on, of the same id or
 * any other, sends them at once with it (and `hurry(id)` does, for a caller that starts waiting
 * on a refresh already queued). Their deadline counts from when they are sent.
 *
 * An absent id resolves to the endpoint's default entry (found: false). A cell that is not a
 * JSON object is a data problem, not a client one: it is reported through `onInvalid` and the
 * default is served. Store errors reject (the cache layer decides whether stale data can serve).
 *
 * @param {object} options
 * @param {ReturnType<typeof import('./store').createToggleStore>} options.store
 * @param {object} options.defaultConfig value for absent ids
 * @param {(id: string, reason: string) => void} [options.onInvalid]
 * @param {number} [options.maxInFlight] concurrent store reads (default 2)
 * @param {number} [options.lingerMs] how long a batch waits after its first id for more (default
 *   0: sent in the next turn of the event loop)
 * @param {number} [options.refreshLingerMs] how long background lookups wait for more (default 50)
 * @param {ReturnType<typeof createCircuitBreaker>} [options.breaker] fails reads fast while the
 *   store keeps failing (default: opens after 3 failed reads in a row, for 1 s)
 * @param {(event: { ids: number, rpcs: number }) => void} [options.onBatch]
 * @param {() => number} [options.now] monotonic ms clock (tests)
 * @param {{ mayExist: (id: string) => boolean, add: (id: string) => void }} [options.knownIds] which ids have
 *   a row (./known-ids.js): any other id resolves to the default without a read, unless `fresh` (a
 *   reload: the caller knows it changed); a row found is added
 * @returns {{ defaultEntry: import('./entry').ConfigEntry, breaker: ReturnType<typeof createCircuitBreaker>,
 *   lookup: (id: string, opts?: { background?: boolean, fresh?: boolean }) => Promise<import('./entry').ConfigEntry>,
 *   hurry: (id: string) => void }}
 */
function createHBaseSource ({
  store, defaultConfig, onInvalid, onBatch, maxInFlight = DEFAULT_MAX_IN_FLIGHT, lingerMs = 0,
  breaker = createCircuitBreaker(), refreshLingerMs = DEFAULT_REFRESH_LINGER_MS,
  now = performance.now.bind(performance), knownIds
}) {
  const defaultEntry = configEntry(defaultConfig, contentVersion('d', defaultConfig), false)
  /** @type {Map<string, Waiter[]>} id → its waiters */
  let queue = new Map()
  let urgentSince = -1 // when the oldest lookup someone waits on in `queue` was made (-1: none)
  let scheduled = false
  /** @type {NodeJS.Timeout|null} */
  let refreshTimer = null // background lookups only: their wait
  let inFlight = 0

  /** @param {string} id @param {import('./store').DecodedRow} stored @returns {import('./entry').ConfigEntry} */
  function toEntry (id, stored) {
    if (!stored) return defaultEntry
    if ('invalid' in stored) {
      if (onInvalid) onInvalid(id, stored.invalid)
      return defaultEntry
    }
    if (knownIds) knownIds.add(id)
    return configEntry(stored.toggles, stored.version, true)
  }

  /**
   * @param {Waiter[]} waiters
   * @param {string} id
   * @param {import('./store').DecodedRow|Error} result
   */
  function settle (waiters, id, result) {
    if (result instanceof Error) {
      for (const w of waiters) w.reject(result)
      return
    }
    let entry
    try {
      entry = toEntry(id, result)
    } catch (err) {
      for (const w of waiters) w.reject(err)
      return
    }
    for (const w of waiters) w.resolve(entry)
  }

  function done () {
    inFlight--
    if (queue.size === 0 || scheduled) return
    if (urgentSince >= 0) schedule()
    else scheduleRefresh()
  }

  function schedule () {
    scheduled = true
    const wait = urgentSince < 0 ? 0 : lingerMs - (now() - urgentSince)
    if (wait >= 1) setTimeout(flush, wait)
    else setImmediate(flush)
  }

  /** Background lookups alone in the queue: they go when their wait ends, or with a lookup someone waits on. */
  function scheduleRefresh () {
    if (scheduled || refreshTimer) return
    refreshTimer = setTimeout(() => {
      refreshTimer = null
      if (!scheduled) schedule()
    }, refreshLingerMs)
    refreshTimer.unref()
  }

  /** A lookup someone waits on is queued: the queue goes in the next turn (or after lingerMs). */
  function urgent () {
    if (urgentSince < 0) urgentSince = now()
    if (!scheduled) schedule()
  }

  /**
   * The oldest `most` ids of the queue (all of it when it holds no more): as many multi-gets as
   * there is room for in flight; the rest keep their place, and their time, for done().
   * @param {number} most
   * @returns {Map<string, Waiter[]>}
   */
  function takeBatch (most) {
    if (queue.size <= most) {
      const all = queue
      queue = new Map()
      urgentSince = -1
      return all
    }
    /** @type {Map<string, Waiter[]>} */
    const batch = new Map()
    for (const [id, waiters] of queue) {
      if (batch.size >= most) break
      batch.set(id, waiters)
    }
    for (const id of batch.keys()) queue.delete(id)
    return batch
  }

  function flush () {
    scheduled = false
    if (queue.size === 0) return
    if (inFlight >= maxInFlight) return // done() sends the queue when a read comes back
    if (refreshTimer) clearTimeout(refreshTimer)
    refreshTimer = null
    const since = urgentSince < 0 ? now() : urgentSince
    const batch = takeBatch((maxInFlight - inFlight) * MAX_IDS_PER_MULTI_GET)
    const ids = [...batch.keys()]
    /** Every id of `ids` has its waiters in `batch`. @param {string} id */
    const waitersOf = (id) => /** @type {Waiter[]} */ (batch.get(id))
    // A store without a deadline of its own leaves it to the client's default.
    const timeoutMs = Number.isFinite(store.timeoutMs)
      ? Math.floor(/** @type {number} */ (store.timeoutMs) - (now() - since))
      : undefined
    const late = timeoutMs !== undefined && timeoutMs < MIN_READ_MS
    let rpcs = 0
    for (let from = 0; from < ids.length; from += MAX_IDS_PER_MULTI_GET) {
      const chunk = ids.slice(from, from + MAX_IDS_PER_MULTI_GET)
      if (late || !breaker.allow()) {
        const why = late ? LOOKUP_TIMEOUT : CIRCUIT_OPEN
        for (const id of chunk) settle(waitersOf(id), id, why)
        continue
      }
      rpcs++
      inFlight++
      if (chunk.length === 1) {
        const id = chunk[0]
        store.read(id, { timeoutMs })
          .then((row) => {
            breaker.success()
            settle(waitersOf(id), id, row)
          }, (err) => {
            if (/** @type {{ retryable?: boolean }} */ (err).retryable) breaker.failure()
            settle(waitersOf(id), id, err)
          })
          .finally(done)
      } else {
        store.readMany(chunk, { timeoutMs })
          .then((rows) => {
            // The breaker tracks whether the store answers at all. Rows that failed while others
            // were read (one region in transition, the rest served) fail alone: counting them
            // against the breaker would fail every id for the sake of one region.
            if (rows.every((row) => row instanceof Error && /** @type {{ retryable?: boolean }} */ (row).retryable)) {
              breaker.failure()
            } else {
              breaker.success()
            }
            rows.forEach((row, i) => settle(waitersOf(chunk[i]), chunk[i], row))
          }, (err) => {
            if (/** @type {{ retryable?: boolean }} */ (err).retryable) breaker.failure()
            chunk.forEach((id) => settle(waitersOf(id), id, err))
          })
          .finally(done)
      }
    }
    if (onBatch) onBatch({ ids: ids.length, rpcs })
  }

  return {
    defaultEntry,
    breaker,
    lookup (id, opts) {
      if (knownIds && !(opts && opts.fresh) && !knownIds.mayExist(id)) return Promise.resolve(defaultEntry)
      return new Promise((resolve, reject) => {
        const waiters = queue.get(id)
        if (waiters) waiters.push({ resolve, reject })
        else queue.set(id, [{ resolve, reject }])
        if (opts && opts.background) scheduleRefresh()
        else urgent()
      })
    },
    /** A lookup queued in the background now has someone waiting on it: it goes at once. */
    hurry (id) {
      if (queue.has(id)) urgent()
    }
  }
}

module.exports = { createHBaseSource }
