'use strict'

const { createStreamRegistry } = require('./stream-registry')
const { createChangeRecord } = require('./change-record')
const { HEARTBEAT, openingBytes, reconnectBytes, refetchEvent, parseStamp } = require('./sse-format')

/**
 * One worker's change streams (`GET /api/<name>/changes?id=<id>`, docs/openfeature.md): it
 * holds them open, tells the watchers of an id of each change to it, the watchers of an endpoint
 * of each switch, beats their hearts, and ends them all at shutdown.
 *
 * Changes come from api/propagation.js, the one path by which a change reaches a worker: the
 * cluster broadcast of the host where it was made (at once), the change feed and the stored
 * switches on every other host (within `hbase.controlPollMs`). Nothing here reads HBase.
 *
 * - A config change of an id: its watchers on every endpoint whose config comes from HBase get
 *   a `refetchEvaluation` at once, with `lastModified` (api/public/ofrep/refetch.js says why).
 * - A switch of an endpoint: every watcher of it gets one, once every host has applied the switch
 *   (`controlPollMs` and a second after this worker did, when other hosts poll), so the refetch
 *   it causes reads the new state wherever it lands.
 * - A stream that opens gets one at once when its client may have missed a change
 *   (api/public/ofrep/change-record.js, from its Last-Event-ID).
 * - Heartbeats: a comment line to every stream every `heartbeatMs`, a slot at a time.
 * - A stream older than its `maxStreamAgeSec` (each drawn between 0.8 and 1 times it, so the
 *   streams of one restart do not all end together) is ended at its next heartbeat with a
 *   reconnect hint, so a fleet rebalances.
 * - A client that stops reading is cut once a bounded amount is waiting for it.
 * - close(): every stream ends (its client reconnects to another worker after its `retry`); a
 *   stream asked for afterwards is ended at once the same way.
 */

const SLOTS = 16
// The reconnection delay each stream is given: spread, so the clients of a worker that stops
// do not all come back in the same instant.
const RETRY_BASE_MS = 1000
const RETRY_SPREAD_MS = 4000
// A client that reads nothing lets this much pile up before it is cut (heartbeats alone would
// take many hours to; events more, but a stream is never worth more).
const MAX_BUFFERED_BYTES = 64 * 1024
const MARGIN_EXTRA_MS = 2000
const AGE_SPREAD = 0.2
const SWITCH_EXTRA_MS = 1000

/**
 * @typedef {object} StreamRoute what the hub needs of an endpoint's OFREP route (api/public/ofrep/routes.js)
 * @property {string} name
 * @property {boolean} configs whether its configs change per id
 * @property {{ maxStreams: number, maxStreamsPerClient?: number,
 *   heartbeatMs: number, maxStreamAgeSec?: number }|null} stream
 *
 * @typedef {StreamRoute & { stream: NonNullable<StreamRoute['stream']> }} StreamingRoute one with a stream
 *
 * @typedef {{ res: import('http').ServerResponse, endpoint: string, id: string, endsAt: number }} Watcher
 *   endsAt: epoch ms past which it is ended with a reconnect hint (Infinity: never)
 *
 * @typedef {object} EndpointCounts
 * @property {number} opened streams opened
 * @property {number} events refetchEvaluation events written
 * @property {number} cut streams cut because their client stopped reading
 * @property {number} aged streams ended at their maximum age, with a reconnect hint
 * @property {Record<string, number>} refused requests refused, by error code
 */

/**
 * @param {object} options
 * @param {Iterable<StreamRoute>} options.routes the OFREP routes
 * @param {number} options.controlPollMs how often other hosts' changes are polled (0: never)
 * @param {() => number} [options.now] epoch ms
 * @param {() => number} [options.random] in [0, 1): spreads reconnection delays
 * @param {ReturnType<typeof createChangeRecord>} [options.record]
 */
function createStreamHub ({ routes, controlPollMs, now = Date.now, random = Math.random, record }) {
  const streaming = /** @type {StreamingRoute[]} */ ([...routes].filter((route) => route.stream !== null))
  const withConfigs = streaming.filter((route) => route.configs).map((route) => route.name)
  const changes = record || createChangeRecord({ marginMs: controlPollMs + MARGIN_EXTRA_MS, now })
  const settleMs = controlPollMs > 0 ? controlPollMs + SWITCH_EXTRA_MS : 0
  /** @type {ReturnType<typeof createStreamRegistry<Watcher>>} */
  const registry = createStreamRegistry({ slots: SLOTS })
  /** @type {Map<string, NodeJS.Timeout>} endpoint → its heartbeat timer */
  const heartbeats = new Map()
  /** @type {Set<NodeJS.Timeout>} switch notices waiting for every host to apply the switch */
  const settling = new Set()
  /** @type {Map<string, EndpointCounts>} one per streaming route: `countsOf` never misses */
  const counts = new Map(streaming.map((route) => [route.name, { opened: 0, events: 0, cut: 0, aged: 0, refused: {} }]))
  /** @param {string} name a streaming route's @returns {EndpointCounts} */
  const countsOf = (name) => /** @type {EndpointCounts} */ (counts.get(name))
  let closed = false

  const retryMs = () => RETRY_BASE_MS + Math.floor(random() * RETRY_SPREAD_MS)

  /** @param {Watcher} watcher @param {string} bytes */
  function write (watcher, bytes) {
    const { res } = watcher
    if (res.destroyed || res.writableEnded) return
    res.write(bytes)
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      countsOf(watcher.endpoint).cut++
      res.destroy()
    }
  }

  /** @param {string} endpoint @param {Iterable<Watcher>} watchers @param {string} bytes */
  function notify (endpoint, watchers, bytes) {
    const count = countsOf(endpoint)
    for (const watcher of watchers) {
      write(watcher, bytes)
      count.events++
    }
  }

  /** @param {StreamingRoute} route @param {number} t @returns {number} when a stream opened at t ends */
  function endOf (route, t) {
    const maxAgeMs = (route.stream.maxStreamAgeSec || 0) * 1000
    return maxAgeMs > 0 ? t + maxAgeMs * (1 - AGE_SPREAD * random()) : Infinity
  }

  /**
   * Starts an endpoint's heartbeats with its first stream: one slot a tick; ends the old ones.
   * @param {StreamingRoute} route
   */
  function beat (route) {
    if (heartbeats.has(route.name)) return
    let slot = 0
    const timer = setInterval(() => {
      const t = now()
      /** @type {Watcher[]} */
      const aged = []
      for (const watcher of registry.slot(route.name, slot)) {
        if (watcher.endsAt <= t) aged.push(watcher)
        else write(watcher, HEARTBEAT)
      }
      for (const watcher of aged) {
        write(watcher, reconnectBytes(retryMs()))
        watcher.res.end()
        countsOf(route.name).aged++
      }
      slot = (slot + 1) % SLOTS
    }, Math.max(1, Math.floor(route.stream.heartbeatMs / SLOTS)))
    timer.unref()
    heartbeats.set(route.name, timer)
  }

  return {
    /**
     * Opens the change stream of `id` on `res` (the caller has checked the request) and writes
     * its first bytes: the reconnection delay, a stamp, and a refetchEvaluation if its client
     * may have missed a change. Past the endpoint's cap nothing is written.
     * @param {StreamingRoute} route
     * @param {string} id
     * @param {import('http').IncomingMessage} req
     * @param {import('http').ServerResponse} res
     * @param {Record<string, string>} headers the stream's response headers
     * @param {string} [client] who opens it (api/public/rate-limit.js clientOf), for its share
     * @returns {'opened'|'full'|'client'|'ended'} full: at the cap, client: at the client's share,
     *   nothing written (the caller refuses);
     *   ended: after close(), or the client is gone: answered with an empty stream
     */
    open (route, id, req, res, headers, client = '') {
      const gone = req.socket.destroyed
      if (closed || gone) {
        if (!gone) res.writeHead(200, headers)
        res.end(gone ? undefined : openingBytes(retryMs(), now()))
        return 'ended'
      }
      const t = now()
      /** @type {Watcher} */
      const watcher = { res, endpoint: route.name, id, endsAt: endOf(route, t) }
      const added = registry.add(route.name, id, watcher, route.stream.maxStreams, client,
        route.stream.maxStreamsPerClient || 0)
      if (added !== 'added') return added
      res.on('close', () => registry.remove(route.name, id, watcher))
      const verdict = changes.missedSince(route.name, id, stampOf(req.headers['last-event-id']), route.configs)
      res.writeHead(200, headers)
      res.write(openingBytes(retryMs(), t) + (verdict.missed ? refetchEvent(t, verdict.changedAt) : ''))
      const count = countsOf(route.name)
      count.opened++
      if (verdict.missed) count.events++
      beat(route)
      return 'opened'
    },

    /**
     * An id's config changed (api/propagation.js): its watchers hear of it now.
     * @param {string} id
     * @param {number|null} [at] when the change was made (epoch ms), when the notice says
     */
    configChanged (id, at = null) {
      changes.noteId(id, at)
      if (closed) return
      let bytes = null
      for (const endpoint of withConfigs) {
        const watchers = registry.watchersOf(endpoint, id)
        if (watchers.size === 0) continue
        if (bytes === null) bytes = refetchEvent(now(), at)
        notify(endpoint, watchers, bytes)
      }
    },

    /**
     * This worker's copy of an endpoint's switch changed (api/propagation.js): its watchers hear
     * of it once every host has applied it.
     * @param {string} name
     */
    endpointSwitched (name) {
      if (!counts.has(name)) return
      changes.noteEndpoint(name)
      if (closed) return
      const tell = () => notify(name, registry.watchersOfEndpoint(name), refetchEvent(now()))
      if (settleMs === 0) return tell()
      const timer = setTimeout(() => {
        settling.delete(timer)
        tell()
      }, settleMs)
      timer.unref()
      settling.add(timer)
    },

    /**
     * Counts a request for a stream that was refused (api/public/ofrep/stream-handler.js).
     * @param {string} name
     * @param {string} code the error code answered
     */
    refused (name, code) {
      const refused = countsOf(name).refused
      refused[code] = (refused[code] || 0) + 1
    },

    /** Ends every stream, now and from now on. Idempotent. */
    close () {
      if (closed) return
      closed = true
      for (const timer of heartbeats.values()) clearInterval(timer)
      for (const timer of settling) clearTimeout(timer)
      settling.clear()
      for (const endpoint of registry.endpoints()) {
        for (const watcher of registry.watchersOfEndpoint(endpoint)) watcher.res.end()
      }
    },

    /**
     * @returns {{ open: Record<string, number>, counts: Record<string, EndpointCounts>, record: { ids: number } }}
     *   open streams and counts per endpoint
     */
    stats () {
      /** @type {Record<string, number>} */
      const open = {}
      /** @type {Record<string, EndpointCounts>} */
      const byEndpoint = {}
      for (const [name, count] of counts) {
        open[name] = registry.count(name)
        byEndpoint[name] = { ...count, refused: { ...count.refused } }
      }
      return { open, counts: byEndpoint, record: { ids: changes.stats().ids } }
    }
  }
}

/**
 * Where a stream's client's knowledge ends: null without a Last-Event-ID (it opens now), 0 for
 * one that is not a stamp of ours (nothing can be vouched for), else the stamp.
 * @param {string|string[]|undefined} header
 * @returns {number|null}
 */
function stampOf (header) {
  return header === undefined ? null : parseStamp(header) ?? 0
}

module.exports = { createStreamHub, RETRY_BASE_MS, RETRY_SPREAD_MS, MAX_BUFFERED_BYTES }
