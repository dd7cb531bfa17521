'use strict'

const { createCorsPolicy } = require('../cors')
const { createFlagSets } = require('./flag-sets')
const { createRefetchGate } = require('./refetch')

/**
 * The OFREP paths of the endpoints that declare `ofrep` (docs/openfeature.md): under the
 * endpoint's own base, `/api/<name>` (its JSONP path without `.js`), so a provider configured
 * with `baseUrl: http://app:4000/api/sample5` reads sample5's config through sample5's source,
 * cache, access log and metrics:
 *
 * - `POST <base>/ofrep/v1/evaluate/flags`: every flag (bulk);
 * - `POST <base>/ofrep/v1/evaluate/flags/{key}`: one flag; the key is the raw rest of the path;
 * - `GET <base>/changes?id=<id>`: the id's change stream (server-sent events), unless the
 *   endpoint's `ofrep.maxStreams` is 0. Outside `/ofrep/v1/`, which is the protocol's to fill
 *   (OFREP's ADR-0008 reserves a future `/ofrep/v1/eventStreams`): the stream is beacon's, named
 *   by the bulk answer's `eventStreams`, and a page without OpenFeature can open it too.
 */

const FLAGS_PATH = '/ofrep/v1/evaluate/flags'
const STREAM_PATH = '/changes'
// How long after a change its refetches read the store rather than the cache, beyond the
// change-feed poll that bounds how late a worker hears of it (api/public/ofrep/refetch.js).
const FRESH_MARGIN_MS = 5000

// The web provider sends Content-Type: application/json (not CORS-safelisted) and
// If-None-Match, plus whatever auth header the application adds. The ETag must be readable, or
// the provider never revalidates; Retry-After, or it ignores a 503's advice.
const CORS_ALLOW = Object.freeze({
  methods: 'POST',
  headers: 'Content-Type, If-None-Match, Authorization, X-API-Key',
  expose: 'ETag, Retry-After'
})
// An EventSource sends a simple GET, but a reconnect carries Last-Event-ID, and a client other
// than EventSource may send an API key: a preflight for them is answered, not refused.
const STREAM_CORS_ALLOW = Object.freeze({
  methods: 'GET',
  headers: 'Last-Event-ID, Cache-Control, Authorization, X-API-Key'
})

/**
 * @typedef {object} OfrepRoute one endpoint's OFREP paths; also the view (api/public/view.js) they log as
 * @property {string} name the endpoint's name
 * @property {{ name: string, enabled: boolean } & import('./refetch').Reloadable} endpoint its
 *   runtime state (`enabled` is switched at runtime), config lookup (cache + source) and a read
 *   past the cache
 * @property {import('../cors').CorsPolicy|null} cors
 * @property {{ write: Function }[]} sinks
 * @property {import('../../../logging/privacy').SinkGroup[]|null} sinkGroups
 * @property {boolean} logBeforeAnswer
 * @property {readonly string[]|null} apiKeys null: no key needed
 * @property {{ maxBodyBytes: number, maxKeyLength: number, maxIdLength: number }} limits
 * @property {ReturnType<typeof createFlagSets>} flagSets
 * @property {boolean} configs whether its configs change per id (source hbase), so a config
 *   change concerns its streams and refetches
 * @property {ReturnType<typeof createRefetchGate>} refetch
 * @property {StreamSettings|null} stream its change stream; null: none (`maxStreams: 0`)
 *
 * @typedef {object} StreamSettings
 * @property {string} path `/api/<name>/changes`
 * @property {number} maxStreams open at once on one worker
 * @property {number} maxStreamsPerClient of those, one client's at most (0: no share)
 * @property {number} heartbeatMs
 * @property {number} maxStreamAgeSec past it a stream is ended with a reconnect hint (0: never)
 * @property {number} inactivityDelaySec
 * @property {number} maxUrlLength
 * @property {import('../cors').CorsPolicy|null} cors
 *
 * @typedef {{ route: OfrepRoute, rawKey: string|null, stream?: boolean }} OfrepMatch rawKey
 *   null: the bulk path; stream: the change stream
 */

/**
 * @param {import('../../../config/load').Settings} settings validated settings (config/load.js)
 * @param {Map<string, import('../endpoints').Endpoint>} endpoints
 *   from api/public/endpoints.js buildEndpoints
 * @returns {Map<string, OfrepRoute>} keyed by the endpoint's base, `/api/<name>`
 */
function buildOfrepRoutes (settings, endpoints) {
  const routes = new Map()
  for (const endpoint of endpoints.values()) {
    const spec = settings.endpoints[endpoint.name]
    if (!spec.ofrep) continue
    const { maxBodyBytes, maxKeyLength, maxDepth, maxFlags, apiKeys } = spec.ofrep
    const { maxStreams, maxStreamsPerClient, heartbeatMs, maxStreamAgeSec, inactivityDelaySec } = spec.ofrep
    const base = `/api/${endpoint.name}`
    routes.set(base, {
      name: endpoint.name,
      endpoint,
      cors: createCorsPolicy(spec.cors, CORS_ALLOW),
      sinks: endpoint.sinks,
      sinkGroups: endpoint.sinkGroups,
      logBeforeAnswer: endpoint.logBeforeAnswer === true,
      countOnly: endpoint.countOnly,
      // The settings are frozen: the same array every request, as checkApiKey wants it.
      apiKeys: apiKeys && apiKeys.length > 0 ? apiKeys : null,
      limits: { maxBodyBytes, maxKeyLength, maxIdLength: settings.limits.maxIdLength },
      flagSets: createFlagSets({
        name: endpoint.name,
        source: spec.source,
        // A disabled endpoint lists the keys its unknown ids would get (a fixed one: its value).
        disabledConfig: spec.source === 'fixed' ? spec.value : spec.defaultConfig,
        limits: { maxDepth, maxFlags, maxKeyLength }
      }),
      configs: spec.source !== 'fixed',
      refetch: createRefetchGate({ windowMs: settings.hbase.controlPollMs + FRESH_MARGIN_MS }),
      stream: maxStreams > 0
        ? {
            path: base + STREAM_PATH,
            maxStreams,
            maxStreamsPerClient,
            heartbeatMs,
            maxStreamAgeSec,
            inactivityDelaySec,
            maxUrlLength: settings.http.maxUrlLength,
            cors: createCorsPolicy(spec.cors, STREAM_CORS_ALLOW)
          }
        : null
    })
  }
  return routes
}

/**
 * The OFREP route a request path (query already cut off) is for, or null: `<base>` must be an
 * endpoint with `ofrep` and be followed by exactly `/ofrep/v1/evaluate/flags`, then nothing
 * (bulk) or `/` and the raw key (anything, `/` included, even empty); or by exactly `/changes`
 * when the endpoint has a change stream.
 * @param {Map<string, OfrepRoute>} routes from buildOfrepRoutes
 * @param {string} path
 * @returns {OfrepMatch|null}
 */
function matchOfrepRoute (routes, path) {
  const at = path.indexOf(FLAGS_PATH)
  if (at < 0) return matchStreamRoute(routes, path)
  const route = routes.get(path.slice(0, at))
  if (route === undefined) return null
  const end = at + FLAGS_PATH.length
  if (end === path.length) return { route, rawKey: null }
  return path[end] === '/' ? { route, rawKey: path.slice(end + 1) } : null
}

/**
 * @param {Map<string, OfrepRoute>} routes
 * @param {string} path
 * @returns {OfrepMatch|null}
 */
function matchStreamRoute (routes, path) {
  if (!path.endsWith(STREAM_PATH)) return null
  const route = routes.get(path.slice(0, -STREAM_PATH.length))
  return route !== undefined && route.stream !== null ? { route, rawKey: null, stream: true } : null
}

module.exports = { buildOfrepRoutes, matchOfrepRoute, STREAM_PATH }
