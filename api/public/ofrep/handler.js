'use strict'

const { isPreflight } = require('../cors')
const { readBody } = require('../read-body')
const { createViews, createLookupWarning } = require('../view')
const { errorBody } = require('../../error-body')
const { ERRORS } = require('../../../lib/errors')
const { matchApiKey } = require('./api-key')
const { OFREP_ERRORS } = require('./errors')
const { parseEvaluationRequest, parseFlagKey, isJsonMediaType } = require('./request')
const { bulkResponse, flagResponse, errorResponse } = require('./responses')
const { eventStreamsJson } = require('./stream-link')
const { lastModifiedOf } = require('./refetch')

/**
 * Answers the OFREP paths of an endpoint (api/public/ofrep/routes.js) over node:http: the protocol
 * modules of this folder, wired in the order docs/openfeature.md gives, each check before
 * anything it would cost:
 *
 * 1. method: POST; OPTIONS answers a CORS preflight when the endpoint declares origins;
 * 2. API key, when the endpoint has keys: before the body is read or HBase is asked;
 * 3. the flag key of the single-flag path;
 * 4. media type, before the body is read;
 * 5. the body, read with the cap (413 past it, unread);
 * 6. the evaluation request (strict JSON, the targetingKey is the beacon id);
 * 7. the endpoint's runtime switch: a disabled endpoint answers DISABLED items;
 * 8. the endpoint's lookup (cache + source, as the JSONP path uses it), then the flags; the
 *    refetch a change event triggers reads the id past the cache (api/public/ofrep/refetch.js).
 *
 * A bulk answer names the id's change stream in `eventStreams` when the endpoint has one; the
 * stream itself (`GET <base>/changes`) is `handleStream`'s (api/public/ofrep/stream-handler.js).
 *
 * Every answer but a preflight is a view of the endpoint (api/public/view.js): one access-log entry
 * with the HTTP status and the id (null until the body named one), one count in the request
 * metrics, CORS headers for a listed origin. An error answered before the body was read closes
 * the connection after it, so a body nobody reads is never drained.
 *
 * @param {object} options
 * @param {{ onResponse?: (endpoint: string, status: number, seconds: number) => void,
 *   onCors?: (endpoint: string, outcome: string) => void }} [options.hooks] metrics
 * @param {{ warn: Function }} [options.logger]
 * @param {(route: import('./routes').OfrepRoute, req: import('http').IncomingMessage,
 *   res: import('http').ServerResponse) => void} [options.handleStream] the change streams;
 *   without it, their paths answer 404
 * @param {import('../../../logging/group-commit').GroupCommit} [options.groupCommit] holds the answers
 *   of views a durable sink took until their entries are written
 * @returns {(match: import('./routes').OfrepMatch, req: import('http').IncomingMessage,
 *   res: import('http').ServerResponse) => void}
 */
function createOfrepHandler ({ hooks = {}, logger, handleStream = noStream, groupCommit } = {}) {
  /** @typedef {import('./routes').OfrepRoute} OfrepRoute */
  /** @typedef {import('../view').ViewContext & { view: OfrepRoute }} OfrepContext */
  /** @typedef {import('http').IncomingMessage} Req */
  /** @typedef {import('http').ServerResponse} Res */
  /** @typedef {Readonly<import('./errors').OfrepError>} OfrepError */

  const { onCors } = hooks
  const { finish } = createViews({ ...hooks, groupCommit })
  const warnLookupFailure = createLookupWarning(logger)

  /**
   * An OFREP answer ({status, headers, body} from responses.js) as a view of the endpoint.
   * @param {import('../view').ViewContext} ctx
   * @param {{ status: number, headers: Record<string, string|number>, body: string|null }} answer
   * @param {boolean} [unread] the request's body was not read: close the connection after
   * @param {boolean} [unknown] the id has no config
   */
  function send (ctx, answer, unread = false, unknown = false) {
    if (unread) answer.headers.Connection = 'close'
    finish(ctx, answer.status, answer.headers, answer.body, unknown)
  }

  /**
   * Only called with `cors` declared and a request with an Origin (isPreflight).
   * @param {OfrepRoute} route
   * @param {Req} req
   * @param {Res} res
   */
  function preflight (route, req, res) {
    const cors = /** @type {import('../cors').CorsPolicy} */ (route.cors)
    const headers = cors.preflight(/** @type {string} */ (req.headers.origin))
    if (onCors) onCors(route.name, headers ? 'preflight' : 'preflight_denied')
    // Not a view (no config is read): counted in the CORS metrics only, as for the JSONP path.
    const answer = headers ? { status: 204, headers, body: null } : errorResponse(OFREP_ERRORS.ORIGIN_NOT_ALLOWED)
    if (!headers) answer.headers.Vary = 'Origin'
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body === null ? undefined : answer.body)
  }

  /**
   * @param {OfrepContext} ctx
   * @param {string|null} key the single flag's; null: the bulk path
   * @param {{ id: string }} parsed the evaluation request
   * @param {string|null} apiKey the key the request carried, when the endpoint has keys
   */
  function evaluate (ctx, key, parsed, apiKey) {
    const { view: route, req } = ctx
    const { flagSets, endpoint } = route
    const { id } = parsed
    ctx.id = id
    const streams = key === null ? eventStreamsJson(route, id, apiKey) : null
    if (!endpoint.enabled) {
      const ifNoneMatch = req.headers['if-none-match']
      const answer = key === null
        ? bulkResponse(flagSets.disabledBulk(streams), ifNoneMatch)
        : flagResponse(flagSets.disabledFlag(key))
      return send(ctx, answer)
    }
    const answerWith = (/** @type {import('./refetch').ConfigEntry} */ entry) => {
      const unknown = !entry.found
      ctx.served = entry
      if (key === null) {
        return send(ctx, bulkResponse(flagSets.bulk(entry, streams), req.headers['if-none-match']), false, unknown)
      }
      const item = flagSets.flag(entry, key)
      const answer = item === null ? errorResponse(OFREP_ERRORS.FLAG_NOT_FOUND, key) : flagResponse(item)
      send(ctx, answer, false, unknown)
    }
    /** @type {import('./refetch').Looked} */
    let result
    try {
      // An http.Server request always has a url.
      const url = /** @type {string} */ (req.url)
      result = key === null && route.configs
        ? route.refetch.lookup(endpoint, id, lastModifiedIn(url))
        : endpoint.lookup(id)
    } catch (err) {
      result = Promise.reject(err)
    }
    if (typeof (/** @type {{ then?: unknown }} */ (result)).then !== 'function') {
      return answerWith(/** @type {import('./refetch').ConfigEntry} */ (result))
    }
    const pending = /** @type {Promise<import('./refetch').ConfigEntry>} */ (result)
    pending.then(answerWith, (/** @type {Error & { code?: string }} */ err) => {
      // The store is unreachable and nothing usable is cached: the OFREP 503 with Retry-After.
      warnLookupFailure(route.name, err)
      send(ctx, errorResponse(OFREP_ERRORS.CONFIG_UNAVAILABLE, key ?? undefined))
    })
  }

  return function handleOfrep ({ route, rawKey, stream }, req, res) {
    if (stream) return handleStream(route, req, res)
    const started = performance.now()
    // Parsed at once for the error bodies of the single-flag path, which name the key; acted
    // on only after the method and the API key are checked.
    const parsedKey = rawKey === null ? null : parseFlagKey(rawKey, route.limits)
    const bodyKey = parsedKey === null ? undefined : parsedKey.key
    const unread = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined
    /** @type {OfrepContext} */
    const ctx = { view: route, req, res, started, id: null, served: null }
    const refuse = (/** @type {OfrepError} */ error, stillUnread = unread) =>
      send(ctx, errorResponse(error, bodyKey), stillUnread)

    if (route.cors !== null && isPreflight(req)) return preflight(route, req, res)
    if (req.method !== 'POST') {
      const answer = errorResponse(OFREP_ERRORS.METHOD_NOT_ALLOWED, bodyKey)
      answer.headers.Allow = route.cors !== null ? 'POST, OPTIONS' : 'POST'
      return send(ctx, answer, unread)
    }
    let apiKey = null
    if (route.apiKeys !== null) {
      const { outcome, key } = matchApiKey(req.headers, route.apiKeys)
      if (outcome !== 'ok') {
        return refuse(outcome === 'missing' ? OFREP_ERRORS.API_KEY_MISSING : OFREP_ERRORS.API_KEY_WRONG)
      }
      apiKey = key
    }
    if (parsedKey !== null && parsedKey.ok === false) return refuse(parsedKey.error)
    const contentType = req.headers['content-type']
    if (!isJsonMediaType(contentType)) return refuse(OFREP_ERRORS.BAD_MEDIA_TYPE)
    readBody(req, route.limits.maxBodyBytes, (body) => {
      if (body === null) return refuse(OFREP_ERRORS.BODY_TOO_LARGE, true)
      const parsed = parseEvaluationRequest(contentType, body, route.limits)
      if (parsed.ok === false) return refuse(parsed.error, false)
      evaluate(ctx, parsedKey === null ? null : parsedKey.key, parsed, apiKey)
    })
  }
}

/** @param {string} url @returns {number|null} the `flagConfigLastModified` of a refetch */
function lastModifiedIn (url) {
  const q = url.indexOf('?')
  return q < 0 ? null : lastModifiedOf(url.slice(q + 1))
}

const NOT_FOUND = errorBody(new ERRORS.NOT_FOUND())

/**
 * The change stream of a handler built without one: the 404 of an unknown path.
 * @param {import('./routes').OfrepRoute} route
 * @param {import('http').IncomingMessage} req
 * @param {import('http').ServerResponse} res
 */
function noStream (route, req, res) {
  res.writeHead(404, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(NOT_FOUND)
  })
  res.end(NOT_FOUND)
}

module.exports = { createOfrepHandler }
