'use strict'

/**
 * The bytes of an endpoint's change stream (`GET /api/<name>/changes`, docs/openfeature.md):
 * server-sent events (HTML, "Server-sent events") in the shape OFREP 0.3.0 gives its event
 * streams (`sseEvent`, `sseEventData`): `data` a JSON object whose `type` is
 * `refetchEvaluation`, an optional `lastModified` in epoch seconds, and an `id`.
 *
 * No `event:` field: a block without one is dispatched as `message`, the type OFREP prescribes
 * and the only one the web provider listens to, so the field would be bytes for nothing.
 *
 * Event ids are stamps: the sender's clock in epoch milliseconds, in decimal. An id says when the
 * client last heard from a stream, so a reconnecting client's `Last-Event-ID` tells any worker,
 * of any host, from when it must be told of changes (api/public/ofrep/change-record.js). A block with an
 * `id` and no `data` sets the client's last event id without dispatching anything: the stream
 * opens with one, so even a client that never got an event reconnects with a stamp.
 */

const REFETCH_TYPE = 'refetchEvaluation'
// A comment line and the blank line that ends the block: keeps proxies and NATs from taking the
// connection for idle, and shows a dead client by a failed write. Dispatches nothing.
const HEARTBEAT = ':\n\n'
// Epoch milliseconds in decimal, with room to spare: the bound keeps the parse cheap.
const STAMP_RE = /^[0-9]{1,15}$/

/**
 * @param {number} ms epoch milliseconds
 * @returns {string} an event id
 */
function stampOf (ms) {
  return String(Math.floor(ms))
}

/**
 * The stamp of a `Last-Event-ID` header, or null when there is none or it is not a stamp of
 * ours (another server's, a client's own, garbage).
 * @param {string|string[]|undefined} header
 * @returns {number|null} epoch milliseconds
 */
function parseStamp (header) {
  if (typeof header !== 'string') return null
  const value = header.trim()
  return STAMP_RE.test(value) ? Number(value) : null
}

/**
 * The first bytes of a stream: the reconnection delay for this client and a stamp for its
 * `Last-Event-ID`.
 * @param {number} retryMs how long the client waits before reconnecting when the stream ends
 * @param {number} nowMs
 * @returns {string}
 */
function openingBytes (retryMs, nowMs) {
  return 'retry: ' + Math.floor(retryMs) + '\nid: ' + stampOf(nowMs) + '\n\n'
}

/**
 * The last bytes of a stream that reached its maximum age: a comment that says why and the
 * delay after which its client reconnects (to whichever host its balancer picks), with its
 * Last-Event-ID, so it misses nothing.
 * @param {number} retryMs
 * @returns {string}
 */
function reconnectBytes (retryMs) {
  return ': reconnect\nretry: ' + Math.floor(retryMs) + '\n\n'
}

/**
 * A refetchEvaluation event, built once and written to every watcher it is for.
 * @param {number} nowMs the stamp (event id)
 * @param {number|null} [changedAtMs] when the change was made, when known: sent as
 *   `lastModified` (epoch seconds), which the web provider sends back as
 *   `flagConfigLastModified` on the refetch it triggers (api/public/ofrep/refetch.js)
 * @returns {string}
 */
function refetchEvent (nowMs, changedAtMs = null) {
  const data = changedAtMs === null || !Number.isFinite(changedAtMs)
    ? '{"type":"' + REFETCH_TYPE + '"}'
    : '{"type":"' + REFETCH_TYPE + '","lastModified":' + Math.floor(changedAtMs / 1000) + '}'
  return 'id: ' + stampOf(nowMs) + '\ndata: ' + data + '\n\n'
}

module.exports = { HEARTBEAT, REFETCH_TYPE, stampOf, parseStamp, openingBytes, reconnectBytes, refetchEvent }
