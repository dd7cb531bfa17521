'use strict'

const { parseBeaconQuery } = require('./query')
const { renderBody, renderError, contentType } = require('./jsonp')
const { ERRORS } = require('../../lib/errors')
const { isPreflight } = require('./cors')
const { createViews, createLookupWarning } = require('./view')
const { matchOfrepRoute } = require('./ofrep/routes')
const { OFREP_ERRORS } = require('./ofrep/errors')

/**
 * @typedef {import('./endpoints').Endpoint} Endpoint
 *
 * @typedef {import('./view').ViewContext &
 *   { view: Endpoint, callback: string|null, scriptContext: boolean }} RequestContext
 *   one JSONP request: `callback` once it passed the endpoint's checks; `scriptContext` when a
 *   callback param was sent at all (the error body is then JavaScript)
 */

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
 * path is several times slower: docs/architecture.md) and hands every other request to `fallback` (the express app).
 *
 * Per request it does one Map lookup for the path, a hand-rolled query parse, a config lookup
 * (synchronous on cache hits) and string concatenation around JSON serialized once per config
 * version. The access-log entry is handed to the sinks after the response is written (before
 * it, when a sink is durable); sinks never touch the network on this stack, and only a durable
 * sink's write-ahead log touches the disk.
 *
 * @param {object} options
 * @param {Map<string, Endpoint>} options.endpoints path → endpoint (api/public/endpoints.js)
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
 * @param {{ limiters: Map<string, import('./rate-limit').RateLimiter>,
 *   clientOf: (req: import('http').IncomingMessage) => string }} [options.rateLimits]
 *   per-client limits by endpoint name (api/public/rate-limit.js); a request past its client's share is
 *   answered 429 before anything else is read of it, and is no view (no access-log entry)
 * @param {(socket: object) => boolean} [options.overShare] whether a connection is past its
 *   client's share (api/public/connection-share.js): its requests are answered 429 and it is closed
 * @param {(endpoint: string) => void} [options.onRateLimited] metrics hook
 * @param {(endpoint: string, reason: 'client_error'|'unknown_id') => void} [options.onCountedOnly] metrics hook
 * @param {import('../../logging/group-commit').GroupCommit} [options.groupCommit] holds the answers
 *   of views a durable sink took until their entries are written
 * @param {{ warn: Function }} [options.logger]
 * @returns {(req: import('http').IncomingMessage, res: import('http').ServerResponse) => void}
 */
function createDataPlane ({
  endpoints, limits, maxUrlLength, fallback, eventRoutes = new Map(), handleEvents,
  ofrepRoutes = new Map(), handleOfrep,
  onResponse, onCors, onCountedOnly, rateLimits, overShare, onRateLimited, groupCommit, logger
}) {
  const buckets = rateLimits && rateLimits.limiters.size > 0 ? rateLimits.limiters : null
  // false: nothing to check, the hot path asks nothing
  const guarded = buckets !== null || overShare !== undefined

  /**
   * Answers 429 when the request's connection is past its client's share, or its client is
   * past its share of this endpoint's requests.
   * @param {string} name the endpoint's
   * @param {import('http').IncomingMessage} req
   * @param {import('http').ServerResponse} res
   * @param {'jsonp'|'json'|'ofrep'} kind what body the refusal takes
   * @returns {boolean} refused
   */
  function limited (name, req, res, kind) {
    const closing = overShare !== undefined && overShare(req.socket)
    let wait = 1
    if (!closing) {
      const limiter = buckets === null ? undefined : buckets.get(name)
      if (limiter === undefined) return false
      wait = limiter.take(/** @type {NonNullable<typeof rateLimits>} */ (rateLimits).clientOf(req))
      if (wait === 0) return false
    }
    if (onRateLimited) onRateLimited(name)
    const body = kind === 'ofrep'
      ? OFREP_RATE_LIMITED
      : renderError(FAIL.RATE_LIMITED, { scriptContext: kind === 'jsonp' })
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
  const { finish } = createViews({ onResponse, onCors, onCountedOnly, groupCommit })

  /**
   * Answers the request with a coded error (lib/errors.js), as a view of its endpoint.
   * @param {RequestContext} ctx
   * @param {import('../../lib/errors').BeaconError} err
   */
  function fail (ctx, err) {
    /** @type {Record<string, string>} */
    const headers = {
      'Content-Type': ctx.scriptContext ? JS_TYPE : JSON_TYPE,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store'
    }
    if (err.statusCode === 503) headers['Retry-After'] = '1'
    if (err.statusCode === 405) headers.Allow = ctx.view.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD'
    finish(ctx, err.statusCode, headers, renderError(err, { callback: ctx.callback, scriptContext: ctx.scriptContext }))
  }

  /**
   * A preflight is not a page view: counted in the CORS metrics, not in the access log. Only
   * called for an endpoint with `cors` and a request with an Origin (isPreflight).
   * @param {Endpoint} endpoint
   * @param {import('http').IncomingMessage} req
   * @param {import('http').ServerResponse} res
   */
  function preflight (endpoint, req, res) {
    const cors = /** @type {import('./cors').CorsPolicy} */ (endpoint.cors)
    const headers = cors.preflight(/** @type {string} */ (req.headers.origin))
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

  /**
   * Answers the config of the request's id (200, or 304 when the page has this version).
   * @param {RequestContext} ctx
   * @param {import('../../lib/toggles/entry').ConfigEntry} entry
   */
  function answer (ctx, entry) {
    const { view: endpoint, callback } = ctx
    ctx.served = entry
    const ifNoneMatch = ctx.req.headers['if-none-match']
    if (ifNoneMatch !== undefined && ifNoneMatch === entry.etag) {
      finish(ctx, 304, { ETag: entry.etag, 'Cache-Control': endpoint.cacheControl }, undefined, !entry.found)
      return
    }
    // ctx.id is set before the lookup whose entry this is.
    const body = renderBody({
      id: /** @type {string} */ (ctx.id),
      isDefault: !entry.found,
      configJson: entry.json,
      callback,
      variant: entry.variant
    })
    finish(ctx, 200, {
      'Content-Type': callback ? JS_TYPE : JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': endpoint.cacheControl,
      ETag: entry.etag
    }, body, !entry.found)
  }

  return function handle (req, res) {
    // An http.Server request always has a url.
    const url = /** @type {string} */ (req.url)
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    const endpoint = endpoints.get(path)
    if (endpoint === undefined) {
      const route = eventRoutes.get(path)
      const ofrep = route === undefined && ofrepRoutes.size > 0 ? matchOfrepRoute(ofrepRoutes, path) : null
      if (route !== undefined) {
        // eventRoutes and ofrepRoutes come with their handlers (api/public/app.js).
        if (!guarded || !limited(route.endpoint.name, req, res, 'json')) {
          /** @type {NonNullable<typeof handleEvents>} */ (handleEvents)(route, req, res)
        }
      } else if (ofrep !== null) {
        if (!guarded || !limited(ofrep.route.name, req, res, 'ofrep')) {
          /** @type {NonNullable<typeof handleOfrep>} */ (handleOfrep)(ofrep, req, res)
        }
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
    /** @type {RequestContext} */
    const ctx = { view: endpoint, req, res, started, id: null, served: null, callback: null, scriptContext }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (endpoint.cors && isPreflight(req)) preflight(endpoint, req, res)
      else fail(ctx, FAIL.METHOD_NOT_ALLOWED)
      return
    }
    if (url.length > maxUrlLength) {
      fail(ctx, FAIL.URL_TOO_LONG)
      return
    }
    const { id, callback, error } = parseBeaconQuery(query, limits)
    if (error) {
      fail(ctx, error)
      return
    }
    ctx.id = id
    if (callback !== null && endpoint.allowsCallback && !endpoint.allowsCallback(callback)) {
      fail(ctx, FAIL.CALLBACK_NOT_ALLOWED)
      return
    }
    if (!endpoint.enabled) {
      fail(ctx, FAIL.ENDPOINT_DISABLED)
      return
    }
    ctx.callback = callback
    let result
    try {
      result = endpoint.lookup(id)
    } catch (err) {
      result = Promise.reject(err)
    }
    if (!isThenable(result)) {
      answer(ctx, result)
      return
    }
    result.then(
      (entry) => answer(ctx, entry),
      (err) => {
        // The store is unreachable and nothing usable is cached: a clear, retryable 503.
        warnLookupFailure(endpoint.name, err)
        fail(ctx, FAIL.CONFIG_UNAVAILABLE)
      }
    )
  }
}

/**
 * @template T
 * @param {T|Promise<T>} value
 * @returns {value is Promise<T>}
 */
function isThenable (value) {
  return typeof (/** @type {{ then?: unknown }} */ (value)).then === 'function'
}

module.exports = { createDataPlane }
