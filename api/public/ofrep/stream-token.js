'use strict'

const crypto = require('node:crypto')

/**
 * The token of a keyed endpoint's change stream. A browser's EventSource cannot send headers,
 * so the stream of an endpoint with API keys takes its authority in the URL; never the key
 * itself (URLs end up in proxy logs and browser history), but a token derived from it:
 *
 *   base64url(HMAC-SHA256(key, "beacon-changes\0<endpoint>\0<id>")), its first TOKEN_LENGTH characters
 *
 * The bulk answer hands it out in its `eventStreams` URL, signed with the key the request was
 * authorised with. It is good for one id of one endpoint only, reveals nothing of the key, and
 * is valid exactly as long as that key is configured: rotating the key out revokes its tokens.
 * It needs no expiry to be safe, and an expiry would change the bulk answer (and its ETag) as
 * time passes, so the web provider could never be answered 304.
 */

const TOKEN_LENGTH = 32
const TOKEN_RE = /^[A-Za-z0-9_-]{32}$/

/**
 * @param {string} key an API key of the endpoint
 * @param {string} endpoint
 * @param {string} id
 * @returns {string}
 */
function streamToken (key, endpoint, id) {
  return crypto.createHmac('sha256', key)
    .update('beacon-changes\0' + endpoint + '\0' + id)
    .digest('base64url')
    .slice(0, TOKEN_LENGTH)
}

/**
 * Whether `token` was signed for this endpoint and id with one of `keys`. Every key is tried
 * and compared in constant time, so the time taken says nothing of which key or how close.
 * @param {string} token
 * @param {readonly string[]} keys
 * @param {string} endpoint
 * @param {string} id
 * @returns {boolean}
 */
function checkStreamToken (token, keys, endpoint, id) {
  if (!TOKEN_RE.test(token)) return false
  const presented = Buffer.from(token)
  let match = false
  for (const key of keys) {
    match = crypto.timingSafeEqual(presented, Buffer.from(streamToken(key, endpoint, id))) || match
  }
  return match
}

module.exports = { streamToken, checkStreamToken, TOKEN_LENGTH }
