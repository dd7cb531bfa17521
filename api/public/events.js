'use strict'

const { ERRORS } = require('../../lib/errors')
const { errorBody } = require('../error-body')
const { isPreflight } = require('./cors')
const { parseEventBody, parseEventQuery, isEventMediaType } = require('./event-input')
const { eventEntry } = require('../../logging/access-entry')
const { writeEntry } = require('../../logging/privacy')
const { readBody } = require('./read-body')

const FAIL = Object.freeze({
  METHOD_NOT_ALLOWED: Object.freeze(new ERRORS.METHOD_NOT_ALLOWED()),
  URL_TOO_LONG: Object.freeze(new ERRORS.URL_TOO_LONG()),
  ORIGIN_NOT_ALLOWED: Object.freeze(new ERRORS.ORIGIN_NOT_ALLOWED()),
  ENDPOINT_DISABLED: Object.freeze(new ERRORS.ENDPOINT_DISABLED()),
  UNSUPPORTED_MEDIA_TYPE: Object.freeze(new ERRORS.UNSUPPORTED_MEDIA_TYPE()),
  BODY_TOO_LARGE: Object.freeze(new ERRORS.BODY_TOO_LARGE())
})

// A transparent 1x1 GIF (42 bytes): what an <img> beacon gets back.
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')

/**
 * @typedef {object} EventRoute one of an endpoint's event paths (api/public/endpoints.js)
 * @property {{ name: string, enabled: boolean }} endpoint
 * @property {boolean} gif the `GET …/events.gif` form, else `POST …/events`
 * @property {import('./cors').CorsPolicy|null} cors
 * @property {import('./event-input').EventRules & { maxBodyBytes: number }} rules
 * @property {import('../../logging/sink-set').Sink[]} sinks
 * @property {import('../../logging/privacy').SinkGroup[]|null} [sinkGroups] the sinks by privacy
 *   policy; null: every sink stores entries as they are
 * @property {boolean} logBeforeAnswer a sink is durable: log before answering
 */

/**
 * Answers the event paths of the endpoints that declare `events`:
 *
 * - `POST /api/<name>/events`: what navigator.sendBeacon() sends (text/plain or
 *   application/json, UTF-8): one event or a batch. 204 once the batch is checked (the body is
 *   read with a cap, never past `maxBodyBytes`); each event becomes one entry in the endpoint's
 *   event sinks, the same access-log pipeline (journal, write-ahead log, counts) as requests.
 * - `GET /api/<name>/events.gif?id=&event=&variant=`: one event, answered with a 1x1 GIF, for
 *   pages without JavaScript (`<img>`).
 *
 * With `cors` declared, a request whose Origin is not listed is refused (403, counted): pages of
 * other sites cannot add exposures. A preflight (a fetch() with a JSON body) gets 204 with the
 * allowed method and header. Errors are JSON from the error table; nothing is reflected.
 *
 * @param {object} options
 * @param {number} options.maxUrlLength
 * @param {{ onEventRequest?: (endpoint: string, outcome: string) => void,
 *   onEvent?: (endpoint: string, event: string) => void,
 *   onCors?: (endpoint: string, outcome: string) => void }} [options.hooks] metrics
 * @param {import('../../logging/group-commit').GroupCommit} [options.groupCommit] holds the answers
 *   of events a durable sink took until their entries are written
 * @returns {(route: EventRoute, req: import('http').IncomingMessage, res: import('http').ServerResponse) => void}
 */
function createEventHandler ({ maxUrlLength, hooks = {}, groupCommit }) {
  const { onEventRequest, onEvent, onCors } = hooks

  /** @typedef {import('http').IncomingMessage} Req */
  /** @typedef {import('http').ServerResponse} Res */
  /** @typedef {Record<string, string|number>} Headers */

  /**
   * @param {EventRoute} route
   * @param {string} outcome
   */
  function count (route, outcome) {
    if (onEventRequest) onEventRequest(route.endpoint.name, outcome)
  }

  /**
   * An error answer. Before the body was read in full the connection is closed after it, so a
   * body nobody reads is never drained.
   * @param {EventRoute} route
   * @param {Req} req
   * @param {Res} res
   * @param {Headers} headers
   * @param {import('../../lib/errors').BeaconError} err
   * @param {boolean} unread
   */
  function reject (route, req, res, headers, err, unread) {
    count(route, err.code)
    headers['Content-Type'] = 'application/json; charset=utf-8'
    headers['X-Content-Type-Options'] = 'nosniff'
    headers['Cache-Control'] = 'no-store'
    if (unread) headers.Connection = 'close'
    const body = errorBody(err)
    headers['Content-Length'] = Buffer.byteLength(body)
    res.writeHead(err.statusCode, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  /**
   * @param {EventRoute} route
   * @param {Req} req
   * @param {import('./event-input').PageEvent[]} events
   */
  function record (route, req, events) {
    const ts = Date.now()
    const name = route.endpoint.name
    const { sinks, sinkGroups } = route
    for (const e of events) {
      const entry = eventEntry({
        ts,
        endpoint: name,
        id: e.id,
        event: e.event,
        variant: e.variant,
        ip: req.socket.remoteAddress,
        ua: req.headers['user-agent'],
        ref: req.headers.referer
      })
      // logging/privacy.js types its sinks as writers of any object; a Sink writes AccessEntries.
      writeEntry(/** @type {{ write: (entry: object) => void }[]} */ (sinks), sinkGroups, entry, req.headers)
      if (onEvent) onEvent(name, e.event)
    }
  }

  /**
   * @param {EventRoute} route
   * @param {Req} req
   * @param {Res} res
   * @param {Headers} headers
   * @param {import('./event-input').PageEvent[]} events
   */
  function accept (route, req, res, headers, events) {
    if (route.logBeforeAnswer) {
      // A durable sink: the answer waits for this turn's group commit (logging/group-commit.js).
      record(route, req, events)
      if (groupCommit && groupCommit.open) {
        groupCommit.hold(() => answer(route, res, headers))
        return
      }
      answer(route, res, headers)
      return
    }
    answer(route, res, headers)
    record(route, req, events)
  }

  /**
   * @param {EventRoute} route
   * @param {Res} res
   * @param {Headers} headers
   */
  function answer (route, res, headers) {
    headers['Cache-Control'] = 'no-store'
    if (route.gif) {
      headers['Content-Type'] = 'image/gif'
      headers['Content-Length'] = GIF.length
      headers['X-Content-Type-Options'] = 'nosniff'
      res.writeHead(200, headers)
      res.end(GIF)
    } else {
      res.writeHead(204, headers)
      res.end()
    }
    count(route, 'accepted')
  }

  return function handleEvents (route, req, res) {
    // An http.Server request always has a url (only a client-side IncomingMessage lacks it).
    const url = /** @type {string} */ (req.url)
    const method = route.gif ? 'GET' : 'POST'
    /** @type {Record<string, string|number>} */
    const headers = {}
    // A body not read yet (an error answered before it): close the connection after the answer.
    const unread = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined
    if (route.cors !== null && isPreflight(req) && !route.gif) {
      preflight(route, req, res)
      return
    }
    if (req.method !== method) {
      headers.Allow = route.cors !== null && !route.gif ? method + ', OPTIONS' : method
      reject(route, req, res, headers, FAIL.METHOD_NOT_ALLOWED, unread)
      return
    }
    if (url.length > maxUrlLength) return reject(route, req, res, headers, FAIL.URL_TOO_LONG, unread)
    if (route.cors !== null) {
      const outcome = route.cors.decorate(headers, req.headers.origin)
      if (outcome !== null && onCors) onCors(route.endpoint.name, outcome)
      if (outcome === 'denied') return reject(route, req, res, headers, FAIL.ORIGIN_NOT_ALLOWED, unread)
    }
    if (!route.endpoint.enabled) return reject(route, req, res, headers, FAIL.ENDPOINT_DISABLED, unread)
    if (route.gif) {
      const q = url.indexOf('?')
      const parsed = parseEventQuery(q < 0 ? '' : url.slice(q + 1), route.rules)
      if (parsed.error) return reject(route, req, res, headers, parsed.error, unread)
      return accept(route, req, res, headers, parsed.events)
    }
    if (!isEventMediaType(req.headers['content-type'])) {
      return reject(route, req, res, headers, FAIL.UNSUPPORTED_MEDIA_TYPE, unread)
    }
    readBody(req, route.rules.maxBodyBytes, (body) => {
      if (body === null) return reject(route, req, res, headers, FAIL.BODY_TOO_LARGE, true)
      const parsed = parseEventBody(body, route.rules)
      if (parsed.error) return reject(route, req, res, headers, parsed.error, false)
      accept(route, req, res, headers, parsed.events)
    })
  }

  /**
   * Only called when `route.cors` is declared.
   * @param {EventRoute} route
   * @param {Req} req
   * @param {Res} res
   */
  function preflight (route, req, res) {
    const headers = /** @type {import('./cors').CorsPolicy} */ (route.cors).preflight(
      /** @type {string} */ (req.headers.origin)
    )
    if (onCors) onCors(route.endpoint.name, headers ? 'preflight' : 'preflight_denied')
    if (headers === null) return reject(route, req, res, { Vary: 'Origin' }, FAIL.ORIGIN_NOT_ALLOWED, false)
    count(route, 'preflight')
    res.writeHead(204, headers)
    res.end()
  }
}

module.exports = { createEventHandler, GIF }
