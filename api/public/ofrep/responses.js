'use strict'

const { serializeConfig } = require('../../../lib/toggles/script-json')
const { etagOf, ifNoneMatch } = require('./etag')

/**
 * The answers of the OFREP paths as `{ status, headers, body }` (body a string, or null for a
 * 304), for the HTTP layer to write as they are (docs/openfeature.md, "Responses"):
 *
 * - bulk (`POST …/ofrep/v1/evaluate/flags`): 200 `{"flags":[…],"metadata":{…}}` with an ETag,
 *   or 304 without a body when If-None-Match matches it;
 * - one flag (`POST …/flags/{key}`): 200 `{key, value?, reason}`;
 * - errors (api/public/ofrep/errors.js): `{errorCode, errorDetails}` on the bulk path, and
 *   `{key, errorCode, errorDetails}` on the single-flag path, where the JS providers read a
 *   failure only if it names the key.
 *
 * Every body is JSON in the script-safe form beacon serves configs in (lib/toggles/script-json.js:
 * `<`, `>`, `&` escaped, `__proto__` members left out), so a flag value is written the way the
 * JSONP answer writes it. `Cache-Control: no-store`: answers depend on the POSTed context, and
 * revalidation is the client's own If-None-Match, which needs no HTTP cache.
 */

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * @typedef {{ status: number, headers: Record<string, string|number>, body: string|null }} OfrepResponse
 * @typedef {{ body: string, etag: string }} RenderedBulk
 * @typedef {{ endpoint: string, version?: string|number|null }} FlagSetInfo
 */

/**
 * @param {number} status
 * @param {string} body
 * @param {Readonly<Record<string, string>>} [extra]
 * @returns {OfrepResponse}
 */
function json (status, body, extra) {
  return {
    status,
    headers: {
      'Content-Type': JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...extra
    },
    body
  }
}

/**
 * The flag-set metadata: primitives only (OFREP's `metadata` allows nothing else). `version`
 * (the config version, when the source knows one) is left out when unknown.
 * @param {FlagSetInfo} info
 * @returns {Record<string, string|number>}
 */
function flagSetMetadata ({ endpoint, version }) {
  /** @type {Record<string, string|number>} */
  const metadata = { endpoint }
  if (typeof version === 'string' || (typeof version === 'number' && Number.isFinite(version))) {
    metadata.version = version
  }
  return metadata
}

/**
 * A bulk answer's body and ETag. The same items and info give the same bytes and tag, so the
 * caller may keep the result per config version (ConfigEntry objects are frozen and shared:
 * a WeakMap keyed by them) and serve every request of that version from it.
 * @param {import('./evaluate').EvaluationItem[]} items from evaluateAll or disabledItems
 * @param {FlagSetInfo} info
 * @returns {Readonly<RenderedBulk>}
 */
function renderBulk (items, info) {
  const body = serializeConfig({ flags: items, metadata: flagSetMetadata(info) })
  return Object.freeze({ body, etag: etagOf(body) })
}

/**
 * A bulk answer with its `eventStreams` member (api/public/ofrep/stream-link.js), which names the id
 * (and, on a keyed endpoint, carries a token): the same flags give another body for another
 * id, so the ETag is that of the whole body, as RFC 9110 wants of a strong one.
 * @param {Readonly<RenderedBulk>} rendered from renderBulk
 * @param {string} streamsJson the JSON of the eventStreams array
 * @returns {Readonly<RenderedBulk>}
 */
function withEventStreams (rendered, streamsJson) {
  const body = rendered.body.slice(0, -1) + ',"eventStreams":' + streamsJson + '}'
  return Object.freeze({ body, etag: etagOf(body) })
}

/**
 * The bulk answer to one request: 304 when its If-None-Match matches, else 200.
 * @param {Readonly<RenderedBulk>} rendered from renderBulk
 * @param {string|string[]|undefined} ifNoneMatchHeader the request's If-None-Match
 * @returns {OfrepResponse}
 */
function bulkResponse (rendered, ifNoneMatchHeader) {
  if (ifNoneMatch(ifNoneMatchHeader, rendered.etag)) {
    return { status: 304, headers: { ETag: rendered.etag, 'Cache-Control': 'no-store' }, body: null }
  }
  return json(200, rendered.body, { ETag: rendered.etag })
}

/**
 * A single-flag answer.
 * @param {import('./evaluate').EvaluationItem} item from evaluateOne or disabledItem
 * @returns {OfrepResponse}
 */
function flagResponse (item) {
  return json(200, serializeConfig(item))
}

/**
 * An error answer from the table: the bulk form, or the single-flag form when `key` is given.
 * @param {Readonly<import('./errors').OfrepError>} error an entry of OFREP_ERRORS
 * @param {string} [key] the flag key asked for (single-flag path only)
 * @returns {OfrepResponse}
 */
function errorResponse (error, key) {
  const { errorCode, errorDetails } = error
  const body = key === undefined ? { errorCode, errorDetails } : { key, errorCode, errorDetails }
  return json(error.status, serializeConfig(body), error.headers)
}

module.exports = { renderBulk, withEventStreams, bulkResponse, flagResponse, errorResponse, flagSetMetadata }
