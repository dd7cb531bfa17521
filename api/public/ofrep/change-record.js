'use strict'

/**
 * What one worker remembers of recent changes, so that a change stream that opens (or reopens
 * with a `Last-Event-ID`) is told at once of a change its client may have missed, and only then.
 *
 * A client's knowledge ends at a stamp: the `Last-Event-ID` of a reconnect (the sender's clock
 * when it last wrote to that client, api/public/ofrep/sse-format.js), or, for a stream opened without
 * one, the moment it opens (its client has just read its config, or is about to). It may have
 * missed a change when this worker heard of one for its id, or a switch of its endpoint, at or
 * after that stamp less `marginMs`, or when the stamp is older than what this worker can vouch
 * for: its own start (it heard nothing before), or what it has since forgotten.
 *
 * The margin covers the difference between two workers' hearing of one change: on one host
 * they hear it at once (the cluster broadcast), across hosts within a change-feed poll of each
 * other, plus clock skew. Erring late costs the client one refetch answered 304; erring early
 * would leave it on an old config, so the margin is generous.
 *
 * Bounded: entries older than `retainMs` are dropped, and past `maxIds` ids the oldest go; the
 * time vouched for moves up with what is dropped.
 */

const RETAIN_MS = 10 * 60 * 1000
const MAX_IDS = 100000

/**
 * @typedef {{ missed: boolean, changedAt: number|null }} Verdict changedAt: when the change that
 *   was missed was made (epoch ms, as the notice carried it), null when not known
 */

/**
 * @param {object} options
 * @param {number} options.marginMs
 * @param {number} [options.retainMs]
 * @param {number} [options.maxIds]
 * @param {() => number} [options.now] epoch ms
 */
function createChangeRecord ({ marginMs, retainMs = RETAIN_MS, maxIds = MAX_IDS, now = Date.now }) {
  // The earliest time this record vouches for: what happened before it is unknown here.
  let horizon = now()
  /** @type {Map<string, { heardAt: number, at: number|null }>} id → its last change, oldest first */
  const ids = new Map()
  /** @type {Map<string, number>} endpoint name → when its switch last changed here */
  const endpoints = new Map()

  /** @param {number} t now */
  function forget (t) {
    const limit = t - retainMs
    for (const [id, change] of ids) {
      if (change.heardAt >= limit && ids.size <= maxIds) break
      ids.delete(id)
      if (change.heardAt > horizon) horizon = change.heardAt
    }
    if (horizon < limit) horizon = limit
  }

  return {
    /**
     * This worker heard that `id`'s config changed.
     * @param {string} id
     * @param {number|null} at when the change was made (epoch ms), when the notice says
     */
    noteId (id, at) {
      const t = now()
      ids.delete(id)
      ids.set(id, { heardAt: t, at: Number.isFinite(at) ? at : null })
      forget(t)
    },

    /**
     * This worker's copy of an endpoint's switch changed.
     * @param {string} name
     */
    noteEndpoint (name) {
      endpoints.set(name, now())
    },

    /**
     * @param {string} endpoint the stream's endpoint
     * @param {string} id the id it watches
     * @param {number|null} sinceMs the client's stamp (Last-Event-ID); null: it opens now
     * @param {boolean} configs whether the endpoint's configs change with the id's (false: a
     *   fixed config, which only its switch changes)
     * @returns {Verdict}
     */
    missedSince (endpoint, id, sinceMs, configs) {
      const t = now()
      const from = (sinceMs === null ? t : sinceMs) - marginMs
      if (from < Math.max(horizon, t - retainMs)) return { missed: true, changedAt: null }
      const change = configs ? ids.get(id) : undefined
      if (change !== undefined && change.heardAt >= from) return { missed: true, changedAt: change.at }
      const switched = endpoints.get(endpoint)
      if (switched !== undefined && switched >= from) return { missed: true, changedAt: null }
      return { missed: false, changedAt: null }
    },

    /** @returns {{ ids: number, horizon: number }} */
    stats: () => ({ ids: ids.size, horizon })
  }
}

module.exports = { createChangeRecord, RETAIN_MS, MAX_IDS }
