'use strict'

const { isPreflight } = require('../cors')
const { errorBody } = require('../../error-body')
const { ERRORS } = require('../../../lib/errors')
const { isSafeName } = require('../../../lib/names')
const { matchApiKey } = require('./api-key')
const { checkStreamToken } = require('./stream-token')
const { clientKey } = require('../rate-limit')

/**
 * Answers `GET /api/<name>/changes?id=<id>[&token=<token>]`, an endpoint's change stream
 * (docs/openfeature.md, "Change stream"), checking, in order, each before what it would cost:
 *
 * 1. method: GET; OPTIONS answers a CORS preflight when the endpoint declares origins;
 * 2. the URL's length;
 * 3. the Origin: a browser page of an origin the endpoint's `cors` does not list could not read
 *    the stream, so it is refused rather than held open for nothing;
 * 4. the query: `id` once, a valid beacon id; other parameters are ignored;
 * 5. on an endpoint with API keys: a key (X-API-Key or Bearer, for clients that can send
 *    headers) or the stream token its OFREP answer gave (api/public/ofrep/stream-token.js);
 * 6. the worker's cap for the endpoint (api/public/ofrep/stream-hub.js).
 *
 * Refusals are beacon's errors (lib/errors.js) as JSON, like the JSONP path's. A stream carries
 * no config, only the news that one changed, so it reads nothing from HBase, and it is not a
 * view: not in the access log (its refetches are).
 */

const FAIL = Object.freeze({
  METHOD_NOT_ALLOWED: Object.freeze(new ERRORS.METHOD_NOT_ALLOWED()),
  URL_TOO_LONG: Object.freeze(new ERRORS.URL_TOO_LONG()),
  ORIGIN_NOT_ALLOWED: Object.freeze(new ERRORS.ORIGIN_NOT_ALLOWED()),
  MISSING_ID: Object.freeze(new ERRORS.MISSING_ID()),
  BAD_ID: Object.freeze(new ERRORS.BAD_ID()),
  DUPLICATE_PARAM: Object.freeze(new ERRORS.DUPLICATE_PARAM()),
  STREAM_TOKEN_MISSING: Object.freeze(new ERRORS.STREAM_TOKEN_MISSING()),
  STREAM_TOKEN_WRONG: Object.freeze(new ERRORS.STREAM_TOKEN_WRONG()),
  TOO_MANY_STREAMS: Object.freeze(new ERRORS.TOO_MANY_STREAMS()),
  RATE_LIMITED: Object.freeze(new ERRORS.RATE_LIMITED())
})

// no-store: a stream is never cached; X-Accel-Buffering: nginx would otherwise hold events back;
// Connection: close: when the stream ends, the client's reconnect opens a new connection, which
// reaches a worker that is still serving, not the one that ended it.
const STREAM_HEADERS = Object.freeze({
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Accel-Buffering': 'no',
  Connection: 'close'
})
const RETRY_AFTER_FULL = '5'

/**
 * @typedef {{ id: string, token: string|null, error: null }
 *   | { id: null, token: null, error: import('../../../lib/errors').BeaconError }} StreamQuery
 *   id is set when error is null
 */

/**
 * The stream's query: `id` exactly once, a valid id after percent-decoding; `token` at most once
 * (a second one makes it invalid). URLSearchParams never throws: a malformed escape stays as
 * it is and fails the id rule.
 * @param {string} query the part of the URL after `?`
 * @param {number} maxIdLength
 * @returns {StreamQuery}
 */
function parseStreamQuery (query, maxIdLength) {
  const params = new URLSearchParams(query)
  const ids = params.getAll('id')
  if (ids.length === 0) return failed(FAIL.MISSING_ID)
  if (ids.length > 1) return failed(FAIL.DUPLICATE_PARAM)
  if (!isSafeName(ids[0], maxIdLength)) return failed(FAIL.BAD_ID)
  const tokens = params.getAll('token')
  return { id: ids[0], token: tokens.length === 0 ? null : tokens.length === 1 ? tokens[0] : '', error: null }
}

/**
 * @param {import('../../../lib/errors').BeaconError} error
 * @returns {StreamQuery}
 */
function failed (error) {
  return { id: null, token: null, error }
}

/**
 * @param {import('http').IncomingHttpHeaders} headers
 * @param {readonly string[]} keys the endpoint's API keys
 * @param {string} endpoint
 * @param {{ id: string, token: string|null }} query
 * @returns {import('../../../lib/errors').BeaconError|null} null: authorised
 */
function authorize (headers, keys, endpoint, query) {
  const { outcome } = matchApiKey(headers, keys)
  if (outcome === 'ok') return null
  if (outcome === 'wrong') return FAIL.STREAM_TOKEN_WRONG
  if (query.token === null) return FAIL.STREAM_TOKEN_MISSING
  return checkStreamToken(query.token, keys, endpoint, query.id) ? null : FAIL.STREAM_TOKEN_WRONG
}

/**
 * @param {object} options
 * @param {ReturnType<typeof import('./stream-hub').createStreamHub>} options.hub
 * @param {number} options.maxIdLength settings `limits.maxIdLength`
 * @param {(endpoint: string, outcome: string) => void} [options.onCors] metrics
 * @param {(req: import('http').IncomingMessage) => string} [options.clientOf] the client a stream
 *   counts for, for its share (api/public/rate-limit.js; default: its socket's address)
 * @returns {(route: import('./routes').OfrepRoute, req: import('http').IncomingMessage,
 *   res: import('http').ServerResponse) => void}
 */
function createStreamHandler ({
  hub,
  maxIdLength,
  onCors,
  clientOf = (req) => clientKey(req.socket.remoteAddress || '')
}) {
  /** @typedef {import('./routes').OfrepRoute & { stream: import('./routes').StreamSettings }} StreamingRoute */

  /**
   * @param {StreamingRoute} route
   * @param {import('http').IncomingMessage} req
   * @param {Record<string, string|number>} headers
   */
  function decorate (route, req, headers) {
    const { cors } = route.stream
    if (cors === null) return
    const outcome = cors.decorate(headers, req.headers.origin)
    if (outcome !== null && onCors) onCors(route.name, outcome)
  }

  /**
   * @param {StreamingRoute} route
   * @param {import('http').IncomingMessage} req
   * @param {import('http').ServerResponse} res
   * @param {import('../../../lib/errors').BeaconError} error
   * @param {Record<string, string>} [extra]
   */
  function refuse (route, req, res, error, extra = {}) {
    hub.refused(route.name, error.code)
    const body = errorBody(error)
    /** @type {Record<string, string|number>} */
    const headers = {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...extra
    }
    decorate(route, req, headers)
    res.writeHead(error.statusCode, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  /**
   * Only called when the stream declares `cors` and the request is a preflight (it has an Origin).
   * @param {StreamingRoute} route
   * @param {import('http').IncomingMessage} req
   * @param {import('http').ServerResponse} res
   */
  function preflight (route, req, res) {
    const cors = /** @type {import('../cors').CorsPolicy} */ (route.stream.cors)
    const headers = cors.preflight(/** @type {string} */ (req.headers.origin))
    if (onCors) onCors(route.name, headers ? 'preflight' : 'preflight_denied')
    if (headers === null) return refuse(route, req, res, FAIL.ORIGIN_NOT_ALLOWED, { Vary: 'Origin' })
    res.writeHead(204, headers)
    res.end()
  }

  return function handleStream (anyRoute, req, res) {
    // Only routes with a change stream are routed here (api/public/ofrep/routes.js).
    const route = /** @type {StreamingRoute} */ (anyRoute)
    const { stream } = route
    // An http.Server request always has a url.
    const url = /** @type {string} */ (req.url)
    if (stream.cors !== null && isPreflight(req)) return preflight(route, req, res)
    if (req.method !== 'GET') {
      return refuse(route, req, res, FAIL.METHOD_NOT_ALLOWED, { Allow: stream.cors ? 'GET, OPTIONS' : 'GET' })
    }
    if (url.length > stream.maxUrlLength) return refuse(route, req, res, FAIL.URL_TOO_LONG)
    const origin = req.headers.origin
    if (stream.cors !== null && origin !== undefined && !stream.cors.allows(origin)) {
      return refuse(route, req, res, FAIL.ORIGIN_NOT_ALLOWED)
    }
    const q = url.indexOf('?')
    const query = parseStreamQuery(q < 0 ? '' : url.slice(q + 1), maxIdLength)
    if (query.error !== null) return refuse(route, req, res, query.error)
    const denied = route.apiKeys === null ? null : authorize(req.headers, route.apiKeys, route.name, query)
    // RFC 9110 wants a challenge with every 401.
    if (denied !== null) {
      return refuse(route, req, res, denied, denied.statusCode === 401 ? { 'WWW-Authenticate': 'Bearer' } : {})
    }
    const headers = { ...STREAM_HEADERS }
    decorate(route, req, headers)
    const opened = hub.open(route, query.id, req, res, headers, clientOf(req))
    if (opened === 'full') refuse(route, req, res, FAIL.TOO_MANY_STREAMS, { 'Retry-After': RETRY_AFTER_FULL })
    // Past its client's share: a 429, the back-off both released OFREP providers honour.
    else if (opened === 'client') refuse(route, req, res, FAIL.RATE_LIMITED, { 'Retry-After': RETRY_AFTER_FULL })
  }
}

module.exports = { createStreamHandler, parseStreamQuery }
