'use strict'

const { clientKey } = require('./rate-limit')

/**
 * One client's share of a worker's connections on the public port (settings
 * `http.maxConnectionsPerClient`): an address that opens more than its share is still accepted
 * (a refusal at accept would tell it nothing), but every request on a connection past the share
 * is answered 429 with `Connection: close` (api/public/data-plane.js), so it cannot hold the sockets
 * and file descriptors that everyone else's requests and the journals need. A trusted proxy
 * (api/public/trusted-proxies.js) carries many clients' connections and has no share.
 */

/**
 * @param {{ maxPerClient: number, isTrusted: (peer: string) => boolean }} options maxPerClient 0: no share
 * @returns {{ admit: (socket: import('node:net').Socket) => void,
 *   overShare: (socket: object) => boolean, clients: () => number }} admit: the server's
 *   'connection' listener; overShare: whether a socket is one past its client's share
 */
function createConnectionShare ({ maxPerClient, isTrusted }) {
  /** @type {Map<string, number>} open connections per client */
  const held = new Map()
  /** @type {WeakSet<object>} */
  const over = new WeakSet()

  /** @param {import('node:net').Socket} socket */
  function admit (socket) {
    const peer = socket.remoteAddress || ''
    if (maxPerClient === 0 || isTrusted(peer)) return
    const client = clientKey(peer)
    const count = (held.get(client) || 0) + 1
    held.set(client, count)
    if (count > maxPerClient) over.add(socket)
    socket.once('close', () => {
      const left = /** @type {number} */ (held.get(client)) - 1 // set above, until this close
      if (left === 0) held.delete(client)
      else held.set(client, left)
    })
  }

  return { admit, overShare: (socket) => over.has(socket), clients: () => held.size }
}

module.exports = { createConnectionShare }
