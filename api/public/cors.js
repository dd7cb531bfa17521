'use strict'

/**
 * CORS for pages that read an endpoint with fetch() (or send it events) from another origin,
 * declared per endpoint: `endpoints.<name>.cors: { origins: [...], maxAgeSeconds }`.
 *
 * Origins are compared exactly (as the browser serializes them: scheme://host[:port]); "*" is
 * honoured only when written out, and then alone (config/load.js). Credentials are never
 * allowed: no `Access-Control-Allow-Credentials`, so a browser never sends cookies along with a
 * cross-origin fetch, and "*" stays a valid answer.
 *
 * An allowed Origin gets `Access-Control-Allow-Origin: <that origin>` and `Vary: Origin` (a
 * shared cache must not hand one origin's answer to another). Every answer of an endpoint with
 * a list of origins carries `Vary: Origin`, also those to requests without one or from another
 * origin. Another origin gets no CORS header at all: the browser keeps the body from the page.
 * The body, Cache-Control, ETag and access log are those of the same request without CORS.
 */

/**
 * @typedef {'allowed'|'denied'} CorsOutcome
 * @typedef {object} CorsPolicy
 * @property {(headers: Record<string, string|number>, origin: string|undefined) => CorsOutcome|null} decorate
 *   adds the CORS headers of an answer to `headers`; null when the request carried no Origin
 * @property {(origin: string|undefined) => boolean} allows
 * @property {(origin: string) => Record<string, string>|null} preflight the headers of a 204
 *   answer to a preflight from `origin`, or null when the origin is not allowed
 */

/**
 * @param {{ origins: string[], maxAgeSeconds: number }|undefined} spec validated settings
 * @param {{ methods: string, headers: string, expose?: string }} allow what a preflight
 *   permits: methods (`GET, HEAD`) and request headers (`If-None-Match`) the path accepts;
 *   expose: response headers an allowed page may read besides the safelisted ones (`ETag`)
 * @returns {CorsPolicy|null} null when the endpoint declares no CORS
 */
function createCorsPolicy (spec, allow) {
  if (!spec) return null
  const any = spec.origins.includes('*')
  const origins = new Set(spec.origins)
  const maxAge = String(spec.maxAgeSeconds)
  const expose = allow.expose || null

  /** @param {string|undefined} origin @returns {boolean} */
  function allows (origin) {
    return any || (typeof origin === 'string' && origins.has(origin))
  }

  /**
   * @param {Record<string, string|number>} headers
   * @param {string|undefined} origin
   * @returns {CorsOutcome|null}
   */
  function decorate (headers, origin) {
    if (any) {
      headers['Access-Control-Allow-Origin'] = '*'
      if (expose !== null) headers['Access-Control-Expose-Headers'] = expose
      return origin === undefined ? null : 'allowed'
    }
    headers.Vary = 'Origin'
    if (origin === undefined) return null
    if (!origins.has(origin)) return 'denied'
    headers['Access-Control-Allow-Origin'] = origin
    if (expose !== null) headers['Access-Control-Expose-Headers'] = expose
    return 'allowed'
  }

  /** @param {string} origin @returns {Record<string, string>|null} */
  function preflight (origin) {
    if (!allows(origin)) return null
    /** @type {Record<string, string>} */
    const headers = {
      'Access-Control-Allow-Origin': any ? '*' : origin,
      'Access-Control-Allow-Methods': allow.methods,
      'Access-Control-Allow-Headers': allow.headers,
      'Access-Control-Max-Age': maxAge,
      'Cache-Control': 'no-store'
    }
    if (!any) headers.Vary = 'Origin'
    return headers
  }

  return { decorate, allows, preflight }
}

/**
 * Whether a request is a CORS preflight: OPTIONS with an Origin and the method it asks for.
 * @param {import('http').IncomingMessage} req
 * @returns {boolean}
 */
function isPreflight (req) {
  return req.method === 'OPTIONS' && req.headers.origin !== undefined &&
    req.headers['access-control-request-method'] !== undefined
}

module.exports = { createCorsPolicy, isPreflight }
