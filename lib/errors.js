'use strict'

/**
 * The one table of coded errors: everything beacon answers (data plane, public and admin HTTP)
 * and every error it raises at start (settings, options). api/error-body.js renders them.
 *
 * Messages are fixed text: an error that reaches a public client never carries client input
 * (not the id, the callback, the path), so a response body can never reflect an attacker's
 * string. A detail is appended only where the reader is the operator: settings and options at
 * start, and the token-guarded admin API (which names the offending key of a body it rejects).
 * The HBase client library (@beacon/hbase-client) keeps its own codes; docs/errors.md lists this table and
 * packages/hbase-client/README.md the client's, and a test (test/docs/readme.unit.test.js) holds them to the code.
 */

/**
 * @typedef {Error & { code: string, statusCode: number }} BeaconError
 * @typedef {{ new (detail?: string, options?: { cause?: unknown }): BeaconError,
 *   code: string, statusCode: number, message: string }} BeaconErrorClass
 */

/**
 * Builds an Error subclass for one code, fastify-style.
 * @param {string} code stable machine-readable code, e.g. 'BAD_ID'
 * @param {string} message fixed human-readable text; never includes request data
 * @param {number} [statusCode] HTTP status the error maps to (500 unless given)
 * @returns {BeaconErrorClass}
 */
function createError (code, message, statusCode = 500) {
  if (typeof code !== 'string' || code === '') throw new TypeError('createError: code must be a non-empty string')
  if (typeof message !== 'string' || message === '') {
    throw new TypeError(`createError(${code}): message must be a non-empty string`)
  }
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) {
    throw new TypeError(`createError(${code}): statusCode must be 400..599`)
  }

  class BeaconCodedError extends Error {
    /**
     * @param {string} [detail] appended to the fixed message (startup errors only)
     * @param {{ cause?: unknown }} [options]
     */
    constructor (detail, options) {
      super(detail ? message + ': ' + detail : message, options)
      this.code = code
      this.statusCode = statusCode
    }
  }
  Object.defineProperty(BeaconCodedError, 'name', { value: code })
  // Stack traces read "BeaconError [BAD_ID]: …", like Node's own coded errors.
  BeaconCodedError.prototype.name = 'BeaconError [' + code + ']'
  BeaconCodedError.code = code
  BeaconCodedError.statusCode = statusCode
  BeaconCodedError.message = message
  return BeaconCodedError
}

/** @type {Readonly<Record<string, BeaconErrorClass>>} code → class */
const ERRORS = Object.freeze({
  BAD_CALLBACK: createError('BAD_CALLBACK', 'callback must be a JavaScript identifier path like EXAMPLE.process', 400),
  CALLBACK_NOT_ALLOWED: createError('CALLBACK_NOT_ALLOWED', 'this callback name is not allowed for this endpoint', 400),
  BAD_ID: createError('BAD_ID', 'id must be letters, digits, _ or - and not longer than the configured limit', 400),
  MISSING_ID: createError('MISSING_ID', 'the id query parameter is required', 400),
  BAD_QUERY: createError('BAD_QUERY', 'the query string has malformed percent-encoding or invalid UTF-8', 400),
  DUPLICATE_PARAM: createError('DUPLICATE_PARAM', 'id and callback may each appear only once', 400),
  BAD_REQUEST: createError('BAD_REQUEST', 'malformed request', 400),
  URL_TOO_LONG: createError('URL_TOO_LONG', 'the request URL is too long', 414),
  // The Allow header names the methods of the path (GET, HEAD on an endpoint; POST on its events).
  METHOD_NOT_ALLOWED: createError('METHOD_NOT_ALLOWED', 'this method is not allowed here: see the Allow header', 405),
  NOT_FOUND: createError('NOT_FOUND', 'no such endpoint', 404),
  // One client past its share (api/public/rate-limit.js): Retry-After says when a token is back.
  RATE_LIMITED: createError(
    'RATE_LIMITED', 'too many requests from this address: retry after the Retry-After seconds', 429
  ),
  // 404, not 503: switching an endpoint off is a deliberate config decision, not an outage. A 503
  // tells clients and load balancers to retry (we add Retry-After to 503s) and pages on-call; a
  // disabled endpoint will not come back by retrying. The distinct code still tells it apart
  // from a mistyped path.
  ENDPOINT_DISABLED: createError('ENDPOINT_DISABLED', 'this endpoint is disabled', 404),
  // Browsers: an Origin the endpoint's `cors.origins` does not list (a preflight, or events).
  ORIGIN_NOT_ALLOWED: createError('ORIGIN_NOT_ALLOWED', 'this origin may not use this endpoint from a browser', 403),
  // Events (POST /api/<name>/events, GET /api/<name>/events.gif).
  BAD_EVENT: createError(
    'BAD_EVENT',
    'events must be objects with an id, an event name this endpoint declares and an optional variant, ' +
      'within its batch limit',
    400
  ),
  UNSUPPORTED_MEDIA_TYPE: createError(
    'UNSUPPORTED_MEDIA_TYPE', 'events must be sent as text/plain or application/json', 415
  ),
  // Change streams (GET /api/<name>/changes, api/public/ofrep/stream-handler.js). An EventSource cannot
  // send headers: a keyed endpoint's stream takes the token of its OFREP answer in the URL.
  STREAM_TOKEN_MISSING: createError(
    'STREAM_TOKEN_MISSING',
    'this change stream needs the token its OFREP answer gives (the eventStreams URL) or an API key',
    401
  ),
  STREAM_TOKEN_WRONG: createError(
    'STREAM_TOKEN_WRONG', 'this token or API key is not valid for this change stream', 403
  ),
  // Capacity, not the client's fault: a 503 with Retry-After, which a load balancer may send elsewhere.
  TOO_MANY_STREAMS: createError(
    'TOO_MANY_STREAMS', 'this worker holds as many change streams as it may; retry shortly', 503
  ),
  // The admin API (token-guarded; ADMIN_PORT).
  UNAUTHORIZED: createError('UNAUTHORIZED', 'a valid bearer token is required', 401),
  // The admin port answers only its own names (api/admin/host-check.js): a rebound name gets this.
  MISDIRECTED_REQUEST: createError(
    'MISDIRECTED_REQUEST',
    'this admin port does not answer that Host: use localhost, its address, or a name in admin.allowedHosts',
    421
  ),
  ADMIN_DISABLED: createError('ADMIN_DISABLED', 'the admin API is off: set BEACON_ADMIN_TOKEN to enable it', 404),
  BAD_BODY: createError('BAD_BODY', 'the body must be valid JSON', 400),
  BODY_TOO_LARGE: createError('BODY_TOO_LARGE', 'the body is too large', 413),
  BAD_CONFIG: createError('BAD_CONFIG', 'the toggles are not valid', 400),
  CONFIG_NOT_FOUND: createError('CONFIG_NOT_FOUND', 'no config stored for this id', 404),
  BAD_ROLLOUT: createError('BAD_ROLLOUT', 'the rollout is not valid', 400),
  ROLLOUT_NOT_FOUND: createError('ROLLOUT_NOT_FOUND', 'this endpoint has no rollout', 404),
  NO_HISTORY: createError('NO_HISTORY', 'no change is kept in the history to go back to', 404),
  FIXED_CONFIG: createError(
    'FIXED_CONFIG', 'this endpoint\'s config is fixed (source: fixed): every id gets it, so it has no rollout', 409
  ),
  STORE_UNAVAILABLE: createError('STORE_UNAVAILABLE', 'the config store is unavailable; retry shortly', 503),
  CONFIG_UNAVAILABLE: createError('CONFIG_UNAVAILABLE', 'the configuration store is unavailable; retry shortly', 503),
  // Internal: the config source fails reads fast while the store keeps failing (answered as
  // CONFIG_UNAVAILABLE when nothing is cached).
  CIRCUIT_OPEN: createError(
    'CIRCUIT_OPEN', 'config reads fail fast for a moment: the store failed repeatedly and is being probed', 503
  ),
  // Internal: a lookup queued behind reads in flight until its request deadline had passed.
  LOOKUP_TIMEOUT: createError('LOOKUP_TIMEOUT', 'the config read did not finish within the request deadline', 503),
  // Reading the access log back (GET /admin/log/scan and /admin/log/count; logging/query/). The
  // detail names the parameter, never its value.
  BAD_TIME: createError(
    'BAD_TIME',
    'a time is invalid: give ISO-8601 (2026-01-31T12:00:00Z), 13-digit epoch ms, or a time relative to now ' +
      '(-30s, -15m, -2h, -1d, -1w, now)',
    400
  ),
  BAD_TIME_RANGE: createError('BAD_TIME_RANGE', 'the time range is empty: from must be before to', 400),
  BAD_LOG_QUERY: createError('BAD_LOG_QUERY', 'the access-log query has an invalid parameter', 400),
  TOO_MANY_IDS: createError('TOO_MANY_IDS', 'the unique count holds more distinct ids than it may', 422),
  BAD_AUDIT_QUERY: createError('BAD_AUDIT_QUERY', 'the audit query has an invalid parameter', 400),
  LOG_NOT_CONFIGURED: createError('LOG_NOT_CONFIGURED', 'no HBase access log is configured on this host', 404),
  LOG_UNAVAILABLE: createError('LOG_UNAVAILABLE', 'the access log cannot be read now; retry shortly', 503),
  // PUT /admin/log/retention: the detail names the key, never its value.
  BAD_RETENTION: createError(
    'BAD_RETENTION',
    'a retention must be a duration like 30s, 15m, 12h, 90d or 2w (at least 1s, under 68 years), or "forever"',
    400
  ),
  CONFIG_INVALID: createError('CONFIG_INVALID', 'invalid settings', 500),
  // A module was built with options it cannot work with: a bug in the caller, caught at start.
  INVALID_OPTION: createError('INVALID_OPTION', 'invalid option', 500),
  INTERNAL: createError('INTERNAL', 'internal error', 500)
})

module.exports = { createError, ERRORS }
