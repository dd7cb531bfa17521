'use strict'

/**
 * What the client sends to and reads from HBase, counted as it happens: per connection
 * (server and service) the frames, bytes and socket writes and reads; per kind (an opaque tag
 * the caller gives each operation) the RPCs by method, and their request and response bytes.
 *
 * Everything is a plain number on an object made once per connection key or kind, so counting
 * costs a few additions per RPC and allocates nothing; `snapshot()` builds the plain copy a
 * caller reads.
 */

/** The kind of an operation whose caller named none. */
const UNTAGGED = 'other'
/** The client's own calls: region lookups in meta, and master/admin operations. */
const META_KIND = 'meta'
const ADMIN_KIND = 'admin'

/** One kind's RPCs. */
class KindTally {
  constructor () {
    /** @type {Record<string, number>} method → RPCs sent */
    this.calls = {}
    this.requestFrames = 0
    this.requestBytes = 0
    this.responseFrames = 0
    this.responseBytes = 0
  }

  /**
   * @param {string} method wire name
   * @param {number} bytes the frame, length prefix included
   */
  sent (method, bytes) {
    this.calls[method] = (this.calls[method] || 0) + 1
    this.requestFrames++
    this.requestBytes += bytes
  }

  /** @param {number} bytes the frame, length prefix included */
  answered (bytes) {
    this.responseFrames++
    this.responseBytes += bytes
  }
}

/** One server and service, over every connection the pool made to it. */
class ConnectionTally {
  /**
   * @param {string} server "host:port"
   * @param {string} service
   */
  constructor (server, service) {
    this.server = server
    this.service = service
    this.connects = 0
    this.requestFrames = 0
    this.requestBytes = 0
    // Buffers handed to the socket: one per event-loop turn that sent calls (frames corked
    // together go in one write), plus each connection's preamble.
    this.socketWrites = 0
    this.socketReads = 0 // 'data' events: chunks read from the socket
    this.responseFrames = 0
    this.responseBytes = 0
  }
}

/** Every tally of one client. */
class Traffic {
  constructor () {
    /** @type {Map<string, KindTally>} */
    this._kinds = new Map()
    /** @type {Map<string, ConnectionTally>} service@address → tally */
    this._connections = new Map()
  }

  /**
   * The tally of a kind, made on first use.
   * @param {string|undefined} kind
   * @returns {KindTally}
   */
  kind (kind) {
    const name = kind || UNTAGGED
    let tally = this._kinds.get(name)
    if (tally === undefined) this._kinds.set(name, (tally = new KindTally()))
    return tally
  }

  /**
   * The tally of a server and service, made on first use; it outlives each connection.
   * @param {string} key service@address
   * @param {string} server
   * @param {string} service
   * @returns {ConnectionTally}
   */
  connection (key, server, service) {
    let tally = this._connections.get(key)
    if (tally === undefined) this._connections.set(key, (tally = new ConnectionTally(server, service)))
    return tally
  }

  /**
   * A plain copy of every count so far (monotonic since the client was made).
   * @returns {TrafficStats}
   */
  snapshot () {
    /** @type {TrafficStats['kinds']} */
    const kinds = {}
    for (const [name, t] of this._kinds) {
      kinds[name] = {
        calls: { ...t.calls },
        requestFrames: t.requestFrames,
        requestBytes: t.requestBytes,
        responseFrames: t.responseFrames,
        responseBytes: t.responseBytes
      }
    }
    const connections = [...this._connections.values()].map((t) => ({ ...t }))
    return { kinds, connections }
  }
}

/**
 * @typedef {object} TrafficStats
 * @property {Record<string, { calls: Record<string, number>, requestFrames: number,
 *   requestBytes: number, responseFrames: number, responseBytes: number }>} kinds per kind: RPCs
 *   by method, request frames (one per RPC) and bytes, response frames and bytes
 *   (answers that came after their call had timed out are counted on the connection only)
 * @property {Array<{ server: string, service: string, connects: number, requestFrames: number,
 *   requestBytes: number, socketWrites: number, socketReads: number, responseFrames: number,
 *   responseBytes: number }>} connections per server and service: socketWrites counts buffers
 *   handed to the socket (a turn's corked frames go in one write)
 */

module.exports = { Traffic, KindTally, ConnectionTally, UNTAGGED, META_KIND, ADMIN_KIND }
