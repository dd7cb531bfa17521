'use strict'

const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')

/**
 * An http.Server tuned for many small keep-alive requests, with bounded timeouts so slow or
 * stuck clients are cut, and a graceful close that drains in-flight requests.
 * @param {(req: http.IncomingMessage, res: http.ServerResponse) => void} handler
 * @param {{ keepAliveTimeoutMs: number, headersTimeoutMs: number, requestTimeoutMs: number,
 *   maxHeaderSize: number, maxConnections: number, maxRequestsPerSocket?: number }} httpSettings
 * @returns {http.Server & { drain: (timeoutMs: number) => Promise<{ forced: boolean }> }}
 */
function createHttpServer (handler, httpSettings) {
  const server = /** @type {http.Server & { drain: (timeoutMs: number) => Promise<{ forced: boolean }> }} */ (
    http.createServer({
      maxHeaderSize: httpSettings.maxHeaderSize,
      requestTimeout: httpSettings.requestTimeoutMs,
      headersTimeout: httpSettings.headersTimeoutMs,
      keepAliveTimeout: httpSettings.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingInterval(httpSettings),
      noDelay: true
    }, withRequestCap(handler, httpSettings.maxRequestsPerSocket || 0))
  )
  if (httpSettings.maxConnections > 0) server.maxConnections = httpSettings.maxConnections
  // Malformed HTTP from a client: answer 400 and drop the socket, never crash.
  server.on('clientError', (/** @type {Error & { code?: string }} */ err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy()
      return
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : '400 Bad Request'
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
  })

  /**
   * Stops accepting, lets in-flight requests finish, closes keep-alive connections as soon as
   * they are idle, and after `timeoutMs` cuts whatever is left. No per-request bookkeeping:
   * node knows which connections are idle, and 'close' fires when the last one is gone.
   */
  server.drain = async function drain (timeoutMs) {
    const state = { closed: false }
    /** @type {Promise<void>} */
    const whenClosed = new Promise((resolve) => server.close(() => { state.closed = true; resolve() }))
    const deadline = Date.now() + timeoutMs
    while (!state.closed && Date.now() < deadline) {
      server.closeIdleConnections()
      await sleep(10)
    }
    const forced = !state.closed
    if (forced) server.closeAllConnections()
    await whenClosed
    return { forced }
  }
  return server
}

const SERVED = Symbol('beacon.requestsServed')

/**
 * The last request a connection may serve is answered with `Connection: close`, and node then
 * closes it, so the client's next request opens a new connection, which may land on another
 * worker or host. (node's own `maxRequestsPerSocket` writes the header but leaves the socket
 * open until its keep-alive timeout.)
 * @param {(req: http.IncomingMessage, res: http.ServerResponse) => void} handler
 * @param {number} max 0: no cap
 * @returns {(req: http.IncomingMessage, res: http.ServerResponse) => void}
 */
function withRequestCap (handler, max) {
  if (max === 0) return handler
  return function capped (req, res) {
    const socket = /** @type {import('node:net').Socket & { [SERVED]?: number }} */ (req.socket)
    const served = (socket[SERVED] || 0) + 1
    socket[SERVED] = served
    if (served >= max) res.setHeader('Connection', 'close')
    handler(req, res)
  }
}

/**
 * How often node sweeps connections for expired headers/request timeouts. Node only checks on
 * this interval (default 30 s), so a slowloris client outlives a 10 s headersTimeout by up to
 * 30 s; sweeping at half the shortest timeout (at most once a second) cuts it within 1.5x the
 * timeout. The sweep walks the connection list, so once a second is cheap.
 * @param {{ headersTimeoutMs: number, requestTimeoutMs: number }} timeouts
 * @returns {number} milliseconds
 */
function checkingInterval ({ headersTimeoutMs, requestTimeoutMs }) {
  const timeouts = [headersTimeoutMs, requestTimeoutMs].filter((ms) => ms > 0)
  if (timeouts.length === 0) return 30000 // node's default; nothing to enforce
  return Math.max(100, Math.min(1000, Math.floor(Math.min(...timeouts) / 2)))
}

/**
 * @param {http.Server} server
 * @param {number} port
 * @param {string} host
 * @returns {Promise<number>} the bound port
 */
function listen (server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve(/** @type {import('node:net').AddressInfo} */ (server.address()).port)
    })
  })
}

module.exports = { createHttpServer, listen }
