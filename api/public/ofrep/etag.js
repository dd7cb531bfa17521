'use strict'

const crypto = require('node:crypto')

/**
 * The ETag of a bulk answer and the If-None-Match test (RFC 9110 §8.8.3, §13.1.2).
 *
 * The tag is a hash of the exact body bytes (flags and flag-set metadata), not the config
 * version: the web provider keeps its ETag when the context changes but the targetingKey does
 * not, so the tag must change whenever the answer does, and only then. The same config served
 * to two ids gives the same tag, which is right: the answer is the same.
 *
 * Strong (no `W/`): the bytes are the identity. 22 base64url characters of SHA-256 are 132
 * bits, far past any chance of two answers sharing a tag.
 */

const TAG_LENGTH = 22
// An entity-tag in a list: optional W/, then a quoted opaque tag (no `"` inside, RFC 9110).
const ENTITY_TAG_RE = /(W\/)?"([^"]*)"/g

/**
 * @param {string} body the response body, exactly as sent
 * @returns {string} a strong ETag, quotes included
 */
function etagOf (body) {
  return '"' + crypto.createHash('sha256').update(body).digest('base64url').slice(0, TAG_LENGTH) + '"'
}

/**
 * Whether a request's If-None-Match matches the current ETag, so the answer is 304: `*`, or
 * any tag of the list equal to it by the weak comparison RFC 9110 prescribes for
 * If-None-Match (the opaque tags are equal, `W/` or not). Anything that is not a quoted tag is
 * ignored; an absent or empty header never matches.
 * @param {string|string[]|undefined} header the If-None-Match value (node gives a string)
 * @param {string} etag the current ETag, quoted, as etagOf returns it
 * @returns {boolean}
 */
function ifNoneMatch (header, etag) {
  if (typeof header !== 'string' || header === '') return false
  if (header.trim() === '*') return true
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag
  for (const [, , tag] of header.matchAll(ENTITY_TAG_RE)) if ('"' + tag + '"' === opaque) return true
  return false
}

module.exports = { etagOf, ifNoneMatch }
