'use strict'

const crypto = require('node:crypto')

/**
 * The optional API key of the OFREP paths, as OFREP 0.3.0 defines it: `X-API-Key: <key>` or
 * `Authorization: Bearer <key>` (both security schemes of the spec). The JS providers send
 * whatever static headers or headersFactory the application configures.
 *
 * Keys are compared as SHA-256 digests with crypto.timingSafeEqual: digests always have the
 * same length (timingSafeEqual throws on a length mismatch, and comparing raw keys would leak
 * their length), and every configured key is compared, so the time does not say which one
 * matched or how far a guess got.
 */

const BEARER_RE = /^Bearer +(\S+) *$/i

// Digests of the configured keys, once per list: settings are frozen, so the list a caller
// passes is the same array on every request.
/** @type {WeakMap<readonly string[], Buffer[]>} */
const DIGESTS = new WeakMap()

/** @param {string} key @returns {Buffer} */
function digest (key) {
  return crypto.createHash('sha256').update(key, 'utf8').digest()
}

/**
 * @param {readonly string[]} keys
 * @returns {Buffer[]}
 */
function digestsOf (keys) {
  let digests = DIGESTS.get(keys)
  if (digests === undefined) {
    digests = keys.map(digest)
    DIGESTS.set(keys, digests)
  }
  return digests
}

/**
 * The keys a request presents: X-API-Key, and the token of an `Authorization: Bearer`. Another
 * Authorization scheme (Basic) presents no key.
 * @param {import('http').IncomingHttpHeaders} headers
 * @returns {string[]}
 */
function presentedKeys (headers) {
  const presented = []
  const apiKey = headers['x-api-key']
  if (typeof apiKey === 'string' && apiKey.trim() !== '') presented.push(apiKey.trim())
  const bearer = typeof headers.authorization === 'string' ? BEARER_RE.exec(headers.authorization) : null
  if (bearer !== null) presented.push(bearer[1])
  return presented
}

/**
 * Which of the endpoint's API keys a request carries. When it presents two (X-API-Key and a
 * Bearer token, e.g. a proxy's own token beside the key), one match is enough.
 *
 * An empty `keys` matches nothing (fail closed): an endpoint that needs no key is one where
 * the wiring does not call this at all.
 * @param {import('http').IncomingHttpHeaders} headers the request's headers (lower-case names)
 * @param {readonly string[]} keys the endpoint's keys; pass the same (frozen) array every time
 * @returns {{ outcome: 'ok'|'missing'|'wrong', key: string|null }} missing → 401, wrong → 403;
 *   key: the configured key that matched (the change stream's token is signed with it)
 */
function matchApiKey (headers, keys) {
  const presented = presentedKeys(headers)
  if (presented.length === 0) return { outcome: 'missing', key: null }
  const expected = digestsOf(keys)
  let matched = -1
  for (const key of presented) {
    const d = digest(key)
    expected.forEach((e, i) => { if (crypto.timingSafeEqual(d, e)) matched = i })
  }
  return matched < 0 ? { outcome: 'wrong', key: null } : { outcome: 'ok', key: keys[matched] }
}

/**
 * Whether a request carries one of the endpoint's API keys (matchApiKey's outcome).
 * @param {import('http').IncomingHttpHeaders} headers
 * @param {readonly string[]} keys
 * @returns {'ok'|'missing'|'wrong'} missing → 401, wrong → 403
 */
function checkApiKey (headers, keys) {
  return matchApiKey(headers, keys).outcome
}

module.exports = { checkApiKey, matchApiKey }
