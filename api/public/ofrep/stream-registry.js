'use strict'

/**
 * The open change streams of one worker: who watches which id of which endpoint, with each
 * endpoint's cap, and the slots its heartbeats are spread over. Only data: writing to the
 * streams is api/public/ofrep/stream-hub.js's.
 *
 * A change reaches the watchers of its id in one Map lookup and one walk of their Set, whatever
 * the number of other streams. Heartbeats go one slot at a time (a watcher's slot is fixed when
 * it is added), so a worker with many streams writes a slot's share at each tick instead of
 * every stream in one burst that would stall its event loop.
 */

/**
 * @template W
 * @typedef {object} EndpointStreams
 * @property {number} count
 * @property {Map<string, Set<W>>} byId
 * @property {Set<W>[]} slots
 * @property {number} next the slot the next watcher goes to
 * @property {Map<string, number>} byClient open streams per client (api/public/rate-limit.js clientOf)
 */

const EMPTY = Object.freeze(new Set())

/**
 * @template W
 * @param {{ slots: number }} options how many slots the heartbeats of an endpoint are spread over
 */
function createStreamRegistry ({ slots }) {
  /** @type {Map<string, EndpointStreams<W>>} */
  const byEndpoint = new Map()
  /** @type {WeakMap<object, number>} watcher → its slot */
  const slotOf = new WeakMap()
  /** @type {WeakMap<object, string>} watcher → its client */
  const clientOf = new WeakMap()
  let total = 0

  /** @param {string} endpoint @returns {EndpointStreams<W>} */
  function streamsOf (endpoint) {
    let streams = byEndpoint.get(endpoint)
    if (streams === undefined) {
      streams = {
        count: 0,
        byId: new Map(),
        slots: Array.from({ length: slots }, () => new Set()),
        next: 0,
        byClient: new Map()
      }
      byEndpoint.set(endpoint, streams)
    }
    return streams
  }

  return {
    /**
     * Adds a watcher unless the endpoint already has `max` streams open, or its client has
     * `maxPerClient` of them (so that one address cannot take every place).
     * @param {string} endpoint
     * @param {string} id
     * @param {W & object} watcher
     * @param {number} max the endpoint's cap
     * @param {string} [client] who opens it
     * @param {number} [maxPerClient] 0: no share
     * @returns {'added'|'full'|'client'} full: at the cap; client: at the client's share (not added)
     */
    add (endpoint, id, watcher, max, client = '', maxPerClient = 0) {
      const streams = streamsOf(endpoint)
      if (streams.count >= max) return 'full'
      const held = streams.byClient.get(client) || 0
      if (maxPerClient > 0 && held >= maxPerClient) return 'client'
      streams.byClient.set(client, held + 1)
      clientOf.set(watcher, client)
      let watchers = streams.byId.get(id)
      if (watchers === undefined) streams.byId.set(id, (watchers = new Set()))
      watchers.add(watcher)
      const slot = streams.next
      streams.next = (slot + 1) % slots
      streams.slots[slot].add(watcher)
      slotOf.set(watcher, slot)
      streams.count++
      total++
      return 'added'
    },

    /**
     * @param {string} endpoint
     * @param {string} id
     * @param {W & object} watcher
     * @returns {boolean} whether it was there
     */
    remove (endpoint, id, watcher) {
      const streams = byEndpoint.get(endpoint)
      const watchers = streams && streams.byId.get(id)
      if (!watchers || !watchers.delete(watcher)) return false
      if (watchers.size === 0) streams.byId.delete(id)
      // every added watcher has a slot
      streams.slots[/** @type {number} */ (slotOf.get(watcher))].delete(watcher)
      const client = clientOf.get(watcher) || ''
      const held = (streams.byClient.get(client) || 1) - 1
      if (held === 0) streams.byClient.delete(client)
      else streams.byClient.set(client, held)
      streams.count--
      total--
      return true
    },

    /**
     * @param {string} endpoint
     * @param {string} id
     * @returns {ReadonlySet<W>} the watchers of one id (do not add or remove while walking it)
     */
    watchersOf (endpoint, id) {
      const streams = byEndpoint.get(endpoint)
      return (streams && streams.byId.get(id)) || EMPTY
    },

    /**
     * @param {string} endpoint
     * @param {number} slot
     * @returns {ReadonlySet<W>} the watchers of one heartbeat slot
     */
    slot (endpoint, slot) {
      const streams = byEndpoint.get(endpoint)
      return streams ? streams.slots[slot] : EMPTY
    },

    /**
     * Every watcher of an endpoint, as a new array (safe to remove while walking it).
     * @param {string} endpoint
     * @returns {W[]}
     */
    watchersOfEndpoint (endpoint) {
      const streams = byEndpoint.get(endpoint)
      return streams ? [...streams.byId.values()].flatMap((watchers) => [...watchers]) : []
    },

    /** @returns {string[]} the endpoints that have had streams */
    endpoints: () => [...byEndpoint.keys()],

    /**
     * @param {string} endpoint
     * @returns {number} its open streams
     */
    count: (endpoint) => (byEndpoint.get(endpoint) || { count: 0 }).count,

    /** @returns {number} every endpoint's open streams */
    size: () => total
  }
}

module.exports = { createStreamRegistry }
