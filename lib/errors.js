'use strict'

/**
 * The one table of coded errors. Messages are fixed text: an error that reaches a client never
 * carries client input (not the id, the callback, the path), so a response body can never
 * reflect an attacker's string. Only startup errors (CONFIG_INVALID) take a detail, written by
 * the operator's own config.
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
  if (typeof message !== 'string' || message === '') throw new TypeError(`createError(${code}): message must be a non-empty string`)
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) throw new TypeError(`createError(${code}): statusCode must be 400..599`)

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
  METHOD_NOT_ALLOWED: createError('METHOD_NOT_ALLOWED', 'only GET and HEAD are allowed', 405),
  NOT_FOUND: createError('NOT_FOUND', 'no such endpoint', 404),
  // 404, not 503: switching an endpoint off is a deliberate config decision, not an outage. A 503
  // tells clients and load balancers to retry (we add Retry-After to 503s) and pages on-call; a
  // disabled endpoint will not come back by retrying. The distinct code still tells it apart
  // from a mistyped path.
  ENDPOINT_DISABLED: createError('ENDPOINT_DISABLED', 'this endpoint is disabled', 404),
  CONFIG_UNAVAILABLE: createError('CONFIG_UNAVAILABLE', 'the configuration store is unavailable; retry shortly', 503),
  CONFIG_INVALID: createError('CONFIG_INVALID', 'invalid settings', 500),
  INTERNAL: createError('INTERNAL', 'internal error', 500)
})

module.exports = { createError, ERRORS }
