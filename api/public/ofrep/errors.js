'use strict'

/**
 * The one table of what beacon answers on its OFREP paths when it does not answer flags: the
 * HTTP status, the OFREP `errorCode`, the fixed `errorDetails` text and any extra headers.
 * docs/openfeature.md lists it (a test holds the page to this table).
 *
 * A separate table from lib/errors.js because the wire format is the protocol's, not beacon's:
 * OFREP clients read `{errorCode, errorDetails}` (and `key` on the single-flag path), and one
 * OFREP code stands for several cases (PARSE_ERROR is a bad media type, bad JSON or, with 413,
 * a body over the cap), which the names of this table tell apart for logs and metrics.
 *
 * Details are fixed text: nothing of the request (body, context, key, headers) is ever written
 * into them. The only input an OFREP body carries back is the flag key in `key`, which the
 * protocol requires and which the client itself chose to send.
 *
 * Why these statuses: the JS providers read a failure body only on 400, 404 and 500 and throw
 * on 401/403 (fatal: they stop polling) and on any other status; the outcome of a throw and of
 * a read failure is the same for the application (its code default and an error). 413 and 503
 * are not in OFREP 0.3.0; both say what happened to anyone else (a proxy, a person with curl),
 * and 503 with Retry-After tells them the outage will pass, as beacon's JSONP 503 does.
 */

/**
 * @typedef {object} OfrepError
 * @property {string} name this table's key: the case (BAD_JSON, BODY_TOO_LARGE, ...)
 * @property {number} status HTTP status
 * @property {string} errorCode the OFREP error code sent
 * @property {string} errorDetails fixed text sent as errorDetails
 * @property {Readonly<Record<string, string>>} headers sent besides the JSON ones
 */

const NO_HEADERS = Object.freeze({})

/**
 * @param {string} name
 * @param {number} status
 * @param {string} errorCode
 * @param {string} errorDetails
 * @param {Record<string, string>} [headers]
 * @returns {Readonly<OfrepError>}
 */
function ofrepError (name, status, errorCode, errorDetails, headers = NO_HEADERS) {
  return Object.freeze({ name, status, errorCode, errorDetails, headers: Object.freeze(headers) })
}

/** @type {Readonly<Record<string, Readonly<OfrepError>>>} */
const OFREP_ERRORS = Object.freeze({
  BAD_MEDIA_TYPE: ofrepError(
    'BAD_MEDIA_TYPE', 400, 'PARSE_ERROR', 'the body must be sent as application/json in UTF-8'
  ),
  BAD_JSON: ofrepError(
    'BAD_JSON', 400, 'PARSE_ERROR', 'the body must be a JSON object like {"context":{"targetingKey":"42"}}'
  ),
  BODY_TOO_LARGE: ofrepError('BODY_TOO_LARGE', 413, 'PARSE_ERROR', 'the body is too large'),
  BAD_KEY_ENCODING: ofrepError(
    'BAD_KEY_ENCODING', 400, 'PARSE_ERROR', 'the flag key in the path has malformed percent-encoding'
  ),
  BAD_CONTEXT: ofrepError('BAD_CONTEXT', 400, 'INVALID_CONTEXT', 'context must be a JSON object'),
  TARGETING_KEY_MISSING: ofrepError(
    'TARGETING_KEY_MISSING', 400, 'TARGETING_KEY_MISSING',
    'context.targetingKey is required: it is the beacon id to evaluate for'
  ),
  BAD_TARGETING_KEY: ofrepError(
    'BAD_TARGETING_KEY', 400, 'INVALID_CONTEXT',
    'context.targetingKey must be a beacon id: letters, digits, _ or -, not longer than the configured limit'
  ),
  FLAG_NOT_FOUND: ofrepError('FLAG_NOT_FOUND', 404, 'FLAG_NOT_FOUND', 'no flag with this key in the config of this id'),
  // Not OFREP's (its clients always POST): for people with curl. The handler adds `Allow`,
  // which depends on whether the endpoint answers preflights.
  METHOD_NOT_ALLOWED: ofrepError('METHOD_NOT_ALLOWED', 405, 'GENERAL', 'evaluations are sent with POST'),
  // A preflight from an origin the endpoint does not list; the evaluation itself is answered
  // without CORS headers instead (the browser keeps it from the page), as the JSONP path does.
  ORIGIN_NOT_ALLOWED: ofrepError(
    'ORIGIN_NOT_ALLOWED', 403, 'GENERAL', 'pages of this origin may not read this endpoint'
  ),
  // RFC 9110 requires a challenge with every 401; Bearer is the scheme a browser-less client
  // can use (X-API-Key works too).
  API_KEY_MISSING: ofrepError(
    'API_KEY_MISSING', 401, 'GENERAL', 'an API key is required: X-API-Key or Authorization: Bearer',
    { 'WWW-Authenticate': 'Bearer' }
  ),
  API_KEY_WRONG: ofrepError('API_KEY_WRONG', 403, 'GENERAL', 'this API key is not valid for this endpoint'),
  // Integer seconds: the JS providers read Retry-After with parseInt first, so a date would be
  // taken for a number of seconds.
  // The one back-off signal both released OFREP providers honour: a 429 with Retry-After (added
  // by the data plane, in whole seconds).
  RATE_LIMITED: ofrepError(
    'RATE_LIMITED', 429, 'GENERAL', 'too many requests from this address: retry after the Retry-After seconds'
  ),
  CONFIG_UNAVAILABLE: ofrepError(
    'CONFIG_UNAVAILABLE', 503, 'GENERAL', 'the configuration store is unavailable; retry shortly',
    { 'Retry-After': '1' }
  )
})

module.exports = { OFREP_ERRORS }
