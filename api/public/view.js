'use strict'

const { accessEntry } = require('../../logging/access-entry')
const { writeEntry } = require('../../logging/privacy')

/**
 * How an endpoint's answer to a page view is written, logged and counted: the JSONP paths
 * (api/public/data-plane.js) and the OpenFeature paths (api/public/ofrep/handler.js) read the same config of
 * the same id, so they are the same kind of request to the access log and the metrics: one
 * entry through the endpoint's sinks (with their privacy groups) and one count per answer,
 * with the HTTP status answered.
 *
 * @typedef {object} View what a view needs of its endpoint
 * @property {string} name the endpoint's name (log field, metrics label)
 * @property {import('./cors').CorsPolicy|null} cors the path's CORS policy
 * @property {{ write: Function }[]} sinks the endpoint's access-log sinks
 * @property {import('../../logging/privacy').SinkGroup[]|null} sinkGroups
 * @property {boolean} logBeforeAnswer a sink is durable: log before answering, and answer once
 *   the entry is written
 * @property {CountOnly} [countOnly] answers counted in the metrics without an entry (logPolicy)
 *
 * @typedef {{ clientErrors: boolean, unknownIds: boolean }} CountOnly clientErrors: 4xx answers;
 *   unknownIds: views of an id with no config
 *
 * @typedef {object} ViewContext one request to an endpoint, from its arrival to its answer: what
 *   answering, logging and counting it need (the JSONP and OFREP paths each make one per request)
 * @property {View} view its endpoint
 * @property {import('http').IncomingMessage} req
 * @property {import('http').ServerResponse} res
 * @property {number} started performance.now() when it came in
 * @property {string|null} id the id it asked for, once parsed (null before, or when none was valid)
 * @property {{ version: string, variant: string|null }|null} served the config entry answered
 *   (lib/toggles/entry.js ConfigEntry), once there is one: its version and variant are logged
 */

/**
 * @param {object} hooks
 * @param {(endpoint: string, status: number, seconds: number) => void} [hooks.onResponse] metrics
 * @param {(endpoint: string, outcome: string) => void} [hooks.onCors] metrics
 * @param {(endpoint: string, reason: 'client_error'|'unknown_id') => void} [hooks.onCountedOnly] metrics:
 *   an answer its endpoint's logPolicy counts without an entry
 * @param {import('../../logging/group-commit').GroupCommit} [hooks.groupCommit] holds the answers of
 *   views a durable sink took until their entries are written
 * @returns {{ finish: (ctx: ViewContext, status: number, headers: Record<string, string|number>,
 *   body: string|null|undefined, unknown?: boolean) => void }}
 */
function createViews ({ onResponse, onCors, onCountedOnly, groupCommit }) {
  /**
   * Adds the CORS headers, writes the answer, counts it and hands one access entry to the sinks,
   * unless the endpoint's logPolicy only counts it.
   * @param {ViewContext} ctx
   * @param {number} status
   * @param {Record<string, string|number>} headers
   * @param {string|null|undefined} body
   * @param {boolean} [unknown] the id has no config
   */
  function finish (ctx, status, headers, body, unknown = false) {
    const { view, req, started } = ctx
    if (view.cors) {
      const outcome = view.cors.decorate(headers, req.headers.origin)
      if (outcome !== null && onCors) onCors(view.name, outcome)
    }
    const logged = view.sinks.length > 0 && (view.countOnly === undefined ||
      !countsOnly(/** @type {View & { countOnly: CountOnly }} */ (view), status, unknown))
    if (logged && view.logBeforeAnswer) {
      // A durable sink: the entry is taken before the answer, which waits for this turn's group
      // commit (logging/group-commit.js), so an answered view survives a crash of this process
      // (its ms stops before the write).
      log(ctx, status, performance.now() - started)
      if (groupCommit && groupCommit.open) {
        groupCommit.hold(() => answer(ctx, status, headers, body))
        return
      }
      answer(ctx, status, headers, body)
      return
    }
    const ms = answer(ctx, status, headers, body)
    if (logged) log(ctx, status, ms)
  }

  /**
   * @param {ViewContext} ctx
   * @param {number} status
   * @param {Record<string, string|number>} headers
   * @param {string|null|undefined} body
   * @returns {number} ms from its arrival to its answer
   */
  function answer ({ view, req, res, started }, status, headers, body) {
    res.writeHead(status, headers)
    res.end(req.method === 'HEAD' || body === null ? undefined : body)
    const ms = performance.now() - started
    if (onResponse) onResponse(view.name, status, ms / 1000)
    return ms
  }

  /**
   * @param {View & { countOnly: CountOnly }} view
   * @param {number} status
   * @param {boolean} unknown
   * @returns {boolean} the policy counts this answer without an entry (and it is counted)
   */
  function countsOnly (view, status, unknown) {
    const reason = status >= 400 && status < 500 && view.countOnly.clientErrors
      ? 'client_error'
      : unknown && view.countOnly.unknownIds ? 'unknown_id' : null
    if (reason === null) return false
    if (onCountedOnly) onCountedOnly(view.name, reason)
    return true
  }

  /**
   * @param {ViewContext} ctx
   * @param {number} status
   * @param {number} ms
   */
  function log ({ view, req, id, served }, status, ms) {
    const entry = accessEntry({
      ts: Date.now(),
      endpoint: view.name,
      id,
      variant: served === null ? null : served.variant,
      status,
      version: served === null ? null : served.version,
      ms,
      ip: req.socket.remoteAddress,
      ua: req.headers['user-agent'],
      ref: req.headers.referer
    })
    // Sinks that store less of the client (privacy) get their copy; by default none do.
    // Each sink writes access entries (logging/sink-set.js Sink; privacy.js types them as writers of any object).
    writeEntry(/** @type {{ write: (entry: object) => void }[]} */ (view.sinks), view.sinkGroups, entry, req.headers)
  }

  return { finish }
}

/**
 * A warning for config lookups that fail (HBase unreachable, nothing cached): during an outage
 * every request fails the same way, so it logs once per interval, with a count.
 * @param {{ warn: Function }|undefined} logger
 * @param {number} [intervalMs]
 * @returns {(endpointName: string, err: Error & { code?: string }) => void}
 */
function createLookupWarning (logger, intervalMs = 5000) {
  let lastWarnAt = 0
  let suppressed = 0
  return function warnLookupFailure (endpointName, err) {
    const now = Date.now()
    if (!logger || now - lastWarnAt < intervalMs) {
      suppressed++
      return
    }
    logger.warn(
      { endpoint: endpointName, code: err.code, message: err.message, suppressedSinceLast: suppressed },
      'config lookup failed; answering 503'
    )
    lastWarnAt = now
    suppressed = 0
  }
}

module.exports = { createViews, createLookupWarning }
