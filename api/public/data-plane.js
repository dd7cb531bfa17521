'use strict'

const { parseBeaconQuery } = require('./query')
const { renderBody, renderError, contentType } = require('./jsonp')
const { ERRORS } = require('../../lib/errors')
const { isPreflight } = require('./cors')
const { createViews, createLookupWarning } = require('./view')
const { matchOfrepRoute } = require('./ofrep/routes')
const { OFREP_ERRORS } = require('./ofrep/errors')

const JS_TYPE = contentType(true)
const JSON_TYPE = contentType(false)
// Error bodies depend on the code only: one shared instance each, no stack capture per request.
const FAIL = Object.freeze({
  METHOD_NOT_ALLOWED: Object.freeze(new ERRORS.METHOD_NOT_ALLOWED()),
  URL_TOO_LONG: Object.freeze(new ERRORS.URL_TOO_LONG()),
  ENDPOINT_DISABLED: Object.freeze(new ERRORS.ENDPOINT_DISABLED()),
  CALLBACK_NOT_ALLOWED: Object.freeze(new ERRORS.CALLBACK_NOT_ALLOWED()),
  ORIGIN_NOT_ALLOWED: Object.freeze(new ERRORS.ORIGIN_NOT_ALLOWED()),
  CONFIG_UNAVAILABLE: Object.freeze(new ERRORS.CONFIG_UNAVAILABLE()),
  RATE_LIMITED: Object.freeze(new ERRORS.RATE_LIMITED())
})
const OFREP_RATE_LIMITED = JSON.stringify({
  errorCode: OFREP_ERRORS.RATE_LIMITED.errorCode,
  errorDetails: OFREP_ERRORS.RATE_LIMITED.errorDetails
})

/**
 * The data plane: answers the declared JSONP endpoints straight on node:http (express on this
 * path measured 3–5x slower) and hands every other request to `fallback` (the express app).
 *
 * Per request it does one Map lookup for the path, a hand-rolled query parse, a config lookup
 * (synchronous on cache hits) and string concatenation around JSON serialized once per config
 * version. The access-log entry is handed to the sinks after the response is written (before
 * it, when a sink is durable); sinks never touch the network on this stack, and only a durable
 * sink's write-ahead log touches the disk.
 *
 * @param {object} options
 * @param {Map<string, object>} options.endpoints path → endpoint (api/public/endpoints.js)
 * @param {{ maxIdLength: number, maxCallbackLength: number }} options.limits
 * @param {number} options.maxUrlLength
 * @param {(req: import('http').IncomingMessage, res: import('http').ServerResponse) => void} options.fallback
 * @param {Map<string, import('./events').EventRoute>} [options.eventRoutes] path → event route
 *   (api/public/endpoints.js buildEventRoutes), answered by `handleEvents`
 * @param {(route: import('./events').EventRoute, req: import('http').IncomingMessage,
 *   res: import('http').ServerResponse) => void} [options.handleEvents]
 * @param {Map<string, import('./ofrep/routes').OfrepRoute>} [options.ofrepRoutes] endpoint base
 *   (`/api/<name>`) → OFREP route (api/public/ofrep/routes.js), answered by `handleOfrep`
 * @param {(match: import('./ofrep/routes').OfrepMatch, req: import('http').IncomingMessage,
 *   res: import('http').ServerResponse) => void} [options.handleOfrep]
 * @param {(endpoint: string, status: number, seconds: number) => void} [options.onResponse] metrics hook
 * @param {(endpoint: string, outcome: string) => void} [options.onCors] metrics hook: allowed,
 *   denied, preflight, preflight_denied
 * @param {{ limiters: Map<string, import('./rate-limit').RateLimiter>, clientOf: (req: any) => string }} [options.rateLimits]
 *   per-client limits by endpoint name (api/public/rate-limit.js); a request past its client's share is
 *   answered 429 before anything else is read of it, and is no view (no access-log entry)
 * @param {(socket: object) => boolean} [options.overShare] whether a connection is past its
 *   client's share (api/public/connection-share.js): its requests are answered 429 and it is closed
 * @param {(endpoint: string) => void} [options.onRateLimited] metrics hook
 * @param {(endpoint: string, reason: 'client_error'|'unknown_id') => void} [options.onCountedOnly] metrics hook
 * @param {{ warn: Function }} [options.logger]
 * @returns {(req: import('http').IncomingMessage, res: import('http').ServerResponse) => void}
 */
function createDataPlane ({
  endpoints, limits, maxUrlLength, fallback, eventRoutes = new Map(), handleEvents, ofrepRoutes = new Map(), handleOfrep,
  onResponse, onCors, onCountedOnly, rateLimits, overShare, onRateLimited, logger
}) {
  const buckets = rateLimits && rateLimits.limiters.size > 0 ? rateLimits.limiters : null
  // false: nothing to check, the hot path asks nothing
  const guarded = buckets !== null || overShare !== undefined

  /**
   * Answers 429 when the request's connection is past its client's share, or its client is
   * past its share of this endpoint's requests.
   * @param {string} name the endpoint's
   * @param {'jsonp'|'json'|'ofrep'} kind what body the refusal takes
   * @returns {boolean} refused
   */
  function limited (name, req, res, kind) {
    const closing = overShare !== undefined && overShare(req.socket)
    let wait = 1
    if (!closing) {
      const limiter = buckets === null ? undefined : buckets.get(name)
      if (limiter === undefined) return false
      wait = limiter.take(rateLimits.clientOf(req))
      if (wait === 0) return false
    }
    if (onRateLimited) onRateLimited(name)
    const body = kind === 'ofrep' ? OFREP_RATE_LIMITED : renderError(FAIL.RATE_LIMITED, { scriptContext: kind === 'jsonp' })
    /** @type {Record<string, string|number>} */
    const headers = {
      'Content-Type': kind === 'jsonp' ? JS_TYPE : JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'Retry-After': String(wait)
    }
    if (closing) headers.Connection = 'close'
    res.writeHead(429, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
    return true
  }

  const warnLookupFailure = createLookupWarning(logger)
  // An OFREP evaluation is a view of the same id: written, logged and counted the same way.
  const { finish } = createViews({ onResponse, onCors, onCountedOnly })

  function fail (endpoint, req, res, started, err, callback, scriptContext, id) {
    const headers = {
      'Content-Type': scriptContext ? JS_TYPE : JSON_TYPE,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store'
    }
    if (err.statusCode === 503) headers['Retry-After'] = '1'
    if (err.statusCode === 405) headers.Allow = endpoint.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD'
    finish(endpoint, req, res, started, err.statusCode, id, headers, renderError(err, { callback, scriptContext }))
  }

  // A preflight is not a page view: counted in the CORS metrics, not in the access log.
  function preflight (endpoint, req, res) {
    const headers = endpoint.cors.preflight(req.headers.origin)
    if (onCors) onCors(endpoint.name, headers ? 'preflight' : 'preflight_denied')
    if (headers !== null) {
      res.writeHead(204, headers)
      res.end()
      return
    }
    const body = renderError(FAIL.ORIGIN_NOT_ALLOWED)
    res.writeHead(403, {
      'Content-Type': JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      Vary: 'Origin'
    })
    res.end(body)
  }

  function answer (endpoint, req, res, started, id, callback, entry) {
    const ifNoneMatch = req.headers['if-none-match']
    if (ifNoneMatch !== undefined && ifNoneMatch === entry.etag) {
      finish(endpoint, req, res, started, 304, id, { ETag: entry.etag, 'Cache-Control': endpoint.cacheControl }, undefined, !entry.found)
      return
    }
    const body = renderBody({ id, isDefault: !entry.found, configJson: entry.json, callback })
    finish(endpoint, req, res, started, 200, id, {
      'Content-Type': callback ? JS_TYPE : JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': endpoint.cacheControl,
      ETag: entry.etag
    }, body, !entry.found)
  }

  return function handle (req, res) {
    const url = req.url
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    const endpoint = endpoints.get(path)
    if (endpoint === undefined) {
      const route = eventRoutes.get(path)
      const ofrep = route === undefined && ofrepRoutes.size > 0 ? matchOfrepRoute(ofrepRoutes, path) : null
      if (route !== undefined) {
        if (!guarded || !limited(route.endpoint.name, req, res, 'json')) handleEvents(route, req, res)
      } else if (ofrep !== null) {
        if (!guarded || !limited(ofrep.route.name, req, res, 'ofrep')) handleOfrep(ofrep, req, res)
      } else {
        fallback(req, res)
      }
      return
    }
    const started = performance.now()
    const query = q < 0 ? '' : url.slice(q + 1)
    // A script tag context is assumed whenever a callback param was sent, even an invalid one,
    // so the error body is JavaScript the page can load without a syntax error.
    const scriptContext = query.includes('callback')
    if (guarded && limited(endpoint.name, req, res, scriptContext ? 'jsonp' : 'json')) return
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (endpoint.cors && isPreflight(req)) preflight(endpoint, req, res)
      else fail(endpoint, req, res, started, FAIL.METHOD_NOT_ALLOWED, null, scriptContext, null)
      return
    }
    if (url.length > maxUrlLength) {
      fail(endpoint, req, res, started, FAIL.URL_TOO_LONG, null, scriptContext, null)
      return
    }
    const { id, callback, error } = parseBeaconQuery(query, limits)
    if (error) {
      fail(endpoint, req, res, started, error, null, scriptContext, null)
      return
    }
    if (callback !== null && endpoint.allowsCallback && !endpoint.allowsCallback(callback)) {
      fail(endpoint, req, res, started, FAIL.CALLBACK_NOT_ALLOWED, null, scriptContext, id)
      return
    }
    if (!endpoint.enabled) {
      fail(endpoint, req, res, started, FAIL.ENDPOINT_DISABLED, null, scriptContext, id)
      return
    }
    let result
    try {
      result = endpoint.lookup(id)
    } catch (err) {
      result = Promise.reject(err)
    }
    if (typeof result.then !== 'function') {
      answer(endpoint, req, res, started, id, callback, result)
      return
    }
    result.then(
      (entry) => answer(endpoint, req, res, started, id, callback, entry),
      (err) => {
        // The store is unreachable and nothing usable is cached: a clear, retryable 503.
        warnLookupFailure(endpoint.name, err)
        fail(endpoint, req, res, started, FAIL.CONFIG_UNAVAILABLE, callback, scriptContext, id)
      }
    )
  }
}

module.exports = { createDataPlane }
