'use strict'

const { Connection } = require('./connection')
const { METHODS } = require('./protocol')
const { clientClosed } = require('./errors')
const { Traffic } = require('./traffic')

/**
 * @typedef {{ method: string, server: string, ms: number, error?: Error }} RpcEvent
 */

/** A server address as this client takes it: "host:port". */
const ADDRESS = /^[^\s:]+:\d{1,5}$/

/**
 * @param {string} address "host:port"
 * @returns {{ host: string, port: number }}
 */
function splitAddress (address) {
  const at = address.lastIndexOf(':')
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) }
}

/**
 * One multiplexed Connection per server and service, made on first use and again after it
 * died. Every RPC goes through `call` (no retries), which reports to the `onRpc` observer.
 */
class ConnectionPool {
  /**
   * @param {object} options
   * @param {string} options.user effective user sent in each connection header
   * @param {number} options.connectTimeout ms
   * @param {boolean} [options.cellBlocks] ClientService connections name KeyValueCodec: cells
   *   travel in cell blocks (see cell-block.js)
   * @param {number} [options.maxFrameBytes] the largest response frame a connection takes
   * @param {((event: RpcEvent) => void)|null} [options.onRpc] observer, called once per RPC
   * @param {(address: string) => void} [options.onServerLost] called by `invoke` when a
   *   connection to `address` failed (the locator forgets what that server held)
   */
  constructor ({ user, connectTimeout, cellBlocks = false, maxFrameBytes, onRpc, onServerLost }) {
    this._user = user
    this._maxFrameBytes = maxFrameBytes
    this._connectTimeout = connectTimeout
    this._cellBlocks = cellBlocks
    this._onRpc = onRpc || null
    this._onServerLost = onServerLost || (() => {})
    /** @type {Map<string, Connection>} service@address → connection */
    this._connections = new Map()
    this.traffic = new Traffic()
    this.closed = false
  }

  /**
   * One RPC, no retries. Rejects with HBASE_CLIENT_CLOSED once the pool is closed.
   * @param {string} address "host:port"
   * @param {string} service e.g. "ClientService"
   * @param {string} method wire name, e.g. "Get"
   * @param {object} request plain object of the request type
   * @param {number} timeoutMs
   * @param {string} [kind] the caller's tag: the RPC is counted under it (traffic.js)
   * @param {boolean} [coalesce] the frame may wait for the loop's check phase to share a socket write (connection.js)
   * @returns {Promise<any>} the decoded response
   */
  call (address, service, method, request, timeoutMs, kind, coalesce = false) {
    if (this.closed) return Promise.reject(clientClosed())
    const conn = this._connection(address, service)
    const promise = conn.call(METHODS[service][method], request, timeoutMs, this.traffic.kind(kind), coalesce)
    const onRpc = this._onRpc
    if (!onRpc) return promise
    const started = performance.now()
    return promise.then((res) => {
      onRpc({ method, server: address, ms: performance.now() - started })
      return res
    }, (err) => {
      onRpc({ method, server: address, ms: performance.now() - started, error: err })
      throw err
    })
  }

  /**
   * Like `call`, and tells `onServerLost` when the connection failed (HBASE_CONNECTION).
   * @param {string} address
   * @param {string} service
   * @param {string} method
   * @param {object} request
   * @param {number} timeoutMs
   * @param {string} [kind]
   * @param {boolean} [coalesce]
   * @returns {Promise<any>}
   */
  invoke (address, service, method, request, timeoutMs, kind, coalesce = false) {
    return this.call(address, service, method, request, timeoutMs, kind, coalesce).catch((err) => {
      if (err.code === 'HBASE_CONNECTION') this._onServerLost(address)
      throw err
    })
  }

  /**
   * Refuses new calls at once, lets the calls already sent be answered or time out, then
   * closes every connection. Idempotent.
   * @returns {Promise<void>}
   */
  async close () {
    this.closed = true
    const connections = [...this._connections.values()]
    await Promise.all(connections.map((conn) => conn.end()))
    this._connections.clear()
  }

  /**
   * Closes every connection now: pending calls reject with HBASE_CLIENT_CLOSED. Idempotent.
   * @returns {void}
   */
  destroy () {
    this.closed = true
    const reason = clientClosed()
    for (const conn of this._connections.values()) conn.close(reason)
    this._connections.clear()
  }

  /**
   * @param {string} address
   * @param {string} service
   * @returns {Connection}
   */
  _connection (address, service) {
    const key = service + '@' + address
    const existing = this._connections.get(key)
    if (existing && !existing.closed) return existing
    const { host, port } = splitAddress(address)
    // Only ClientService carries cells (Get, Mutate, Scan, Multi).
    const cellBlocks = this._cellBlocks && service === 'ClientService'
    const tally = this.traffic.connection(key, address, service)
    const conn = new Connection({
      host,
      port,
      service,
      user: this._user,
      connectTimeout: this._connectTimeout,
      cellBlocks,
      maxFrameBytes: this._maxFrameBytes,
      tally
    })
    conn.once('close', () => {
      if (this._connections.get(key) === conn) this._connections.delete(key)
    })
    this._connections.set(key, conn)
    return conn
  }
}

module.exports = { ConnectionPool, ADDRESS }
