'use strict'

/**
 * The refetch a change event triggers, answered from data read after the change, whichever
 * worker of whichever host it reaches.
 *
 * A change reaches the workers of the host where it was made at once, and every other worker
 * within its own change-feed poll (api/propagation.js), each on its own schedule. The event a
 * client gets comes from the worker that holds its stream, but the bulk POST it sends in answer
 * may reach a worker, or a host, that has not heard of the change yet, and would be answered
 * from its cache (a 304 on the old config, and the client waits for the next change). So the
 * event carries `lastModified` (when the change was made, epoch seconds), the web provider sends
 * it back as `flagConfigLastModified` (OFREP's SSE metadata, which exists for this), and a
 * worker that gets a recent one reads the id from the store instead of its cache: once per id
 * and change on each worker, the other refetches of that change sharing the read.
 *
 * "Recent" is within `windowMs` (the change-feed poll plus a margin): later, every worker has
 * heard of the change and its cache is right. A value that is no number of seconds is ignored.
 * A client that sends the parameter on its own makes at most one store read per id per second
 * of the window on each worker, as many as asking for an id that is not cached.
 */

const PARAM = 'flagConfigLastModified='
const SECONDS_RE = /^[0-9]{1,12}$/
const MAX_RELOADS = 10000

/**
 * The `flagConfigLastModified` of a bulk request's query string, in epoch seconds, or null.
 * @param {string} query the part of the URL after `?` (may be empty)
 * @returns {number|null}
 */
function lastModifiedOf (query) {
  const at = query.indexOf(PARAM)
  if (at < 0 || (at > 0 && query[at - 1] !== '&')) return null
  const start = at + PARAM.length
  const end = query.indexOf('&', start)
  const value = query.slice(start, end < 0 ? query.length : end)
  return SECONDS_RE.test(value) ? Number(value) : null
}

/**
 * @typedef {import('../../../lib/toggles/entry').ConfigEntry} ConfigEntry
 * @typedef {ConfigEntry|Promise<ConfigEntry>} Looked a lookup's answer: synchronous on a cache hit
 * @typedef {{ lookup: (id: string) => Looked, reload?: (id: string) => Looked }} Reloadable
 *   an endpoint: its lookup (cache + source) and a read that bypasses the cache
 */

/**
 * @param {object} options
 * @param {number} options.windowMs how long after a change its refetches read the store
 * @param {() => number} [options.now] epoch ms
 * @param {number} [options.max] reloads remembered at once
 * @returns {{ lookup: (endpoint: Reloadable, id: string, lastModifiedSec: number|null) => Looked,
 *   size: () => number }}
 */
function createRefetchGate ({ windowMs, now = Date.now, max = MAX_RELOADS }) {
  /** @typedef {{ at: number, settled: boolean, promise: Promise<ConfigEntry> }} Reload */
  /** @type {Map<string, Reload>} oldest first */
  const reloads = new Map()

  /** @param {number} t now */
  function forget (t) {
    for (const [key, reload] of reloads) {
      if (reload.at >= t - windowMs && reloads.size <= max) break
      reloads.delete(key)
    }
  }

  return {
    /**
     * The id's config for a bulk request: from the endpoint's lookup, unless the request is the
     * refetch of a recent change, whose first on this worker reloads the id (and the others wait
     * for that read).
     */
    /**
     * @param {Reloadable} endpoint
     * @param {string} id
     * @param {number|null} lastModifiedSec
     * @returns {Looked}
     */
    lookup (endpoint, id, lastModifiedSec) {
      if (lastModifiedSec === null || typeof endpoint.reload !== 'function') return endpoint.lookup(id)
      const t = now()
      if (Math.abs(t - lastModifiedSec * 1000) > windowMs) return endpoint.lookup(id)
      const key = id + '\n' + lastModifiedSec
      const known = reloads.get(key)
      if (known !== undefined) return known.settled ? endpoint.lookup(id) : known.promise
      // promise is set on the next line, before anyone reads it
      const reload = /** @type {Reload} */ (/** @type {unknown} */ ({ at: t, settled: false, promise: null }))
      // A failed read falls back on the lookup, which serves a stale entry while it may, and
      // is forgotten: the next refetch of the change tries the store again.
      // reload is a function: checked above
      const reloadable = /** @type {Required<Reloadable>} */ (endpoint)
      reload.promise = Promise.resolve().then(() => reloadable.reload(id)).then((entry) => {
        reload.settled = true
        return entry
      }, () => {
        if (reloads.get(key) === reload) reloads.delete(key)
        return endpoint.lookup(id)
      })
      reloads.set(key, reload)
      forget(t)
      return reload.promise
    },
    size: () => reloads.size
  }
}

module.exports = { createRefetchGate, lastModifiedOf }
