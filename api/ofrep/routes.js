'use strict'

const { createCorsPolicy } = require('../cors')
const { createFlagSets } = require('./flag-sets')

/**
 * The OFREP paths of the endpoints that declare `ofrep` (docs/openfeature.md): under the
 * endpoint's own base, `/api/<name>` (its JSONP path without `.js`), so a provider configured
 * with `baseUrl: http://app:4000/api/sample5` reads sample5's config through sample5's source,
 * cache, access log and metrics:
 *
 * - `POST <base>/ofrep/v1/evaluate/flags`: every flag (bulk);
 * - `POST <base>/ofrep/v1/evaluate/flags/{key}`: one flag; the key is the raw rest of the path.
 */

const FLAGS_PATH = '/ofrep/v1/evaluate/flags'

// The web provider sends Content-Type: application/json (not CORS-safelisted) and
// If-None-Match, plus whatever auth header the application adds. The ETag must be readable, or
// the provider never revalidates; Retry-After, or it ignores a 503's advice.
const CORS_ALLOW = Object.freeze({
  methods: 'POST',
  headers: 'Content-Type, If-None-Match, Authorization, X-API-Key',
  expose: 'ETag, Retry-After'
})

/**
 * @typedef {object} OfrepRoute one endpoint's OFREP paths; also the view (api/view.js) they log as
 * @property {string} name the endpoint's name
 * @property {{ name: string, enabled: boolean, lookup: Function }} endpoint its runtime state
 *   (`enabled` is switched at runtime) and config lookup (cache + source)
 * @property {import('../cors').CorsPolicy|null} cors
 * @property {{ write: Function }[]} sinks
 * @property {import('../../logging/privacy').SinkGroup[]|null} sinkGroups
 * @property {boolean} logBeforeAnswer
 * @property {readonly string[]|null} apiKeys null: no key needed
 * @property {{ maxBodyBytes: number, maxKeyLength: number, maxIdLength: number }} limits
 * @property {ReturnType<typeof createFlagSets>} flagSets
 *
 * @typedef {{ route: OfrepRoute, rawKey: string|null }} OfrepMatch rawKey null: the bulk path
 */

/**
 * @param {object} settings validated settings (config/load.js)
 * @param {Map<string, { name: string, enabled: boolean, lookup: Function, sinks: object[],
 *   sinkGroups: any, logBeforeAnswer?: boolean }>} endpoints from api/endpoints.js buildEndpoints
 * @returns {Map<string, OfrepRoute>} keyed by the endpoint's base, `/api/<name>`
 */
function buildOfrepRoutes (settings, endpoints) {
  const routes = new Map()
  for (const endpoint of endpoints.values()) {
    const spec = settings.endpoints[endpoint.name]
    if (!spec.ofrep) continue
    const { maxBodyBytes, maxKeyLength, maxDepth, maxFlags, apiKeys } = spec.ofrep
    routes.set(`/api/${endpoint.name}`, {
      name: endpoint.name,
      endpoint,
      cors: createCorsPolicy(spec.cors, CORS_ALLOW),
      sinks: endpoint.sinks,
      sinkGroups: endpoint.sinkGroups,
      logBeforeAnswer: endpoint.logBeforeAnswer === true,
      // The settings are frozen: the same array every request, as checkApiKey wants it.
      apiKeys: apiKeys && apiKeys.length > 0 ? apiKeys : null,
      limits: { maxBodyBytes, maxKeyLength, maxIdLength: settings.limits.maxIdLength },
      flagSets: createFlagSets({
        name: endpoint.name,
        source: spec.source,
        // A disabled endpoint lists the keys its unknown ids would get (a fixed one: its value).
        disabledConfig: spec.source === 'fixed' ? spec.value : spec.defaultConfig,
        limits: { maxDepth, maxFlags, maxKeyLength }
      })
    })
  }
  return routes
}

/**
 * The OFREP route a request path (query already cut off) is for, or null: `<base>` must be an
 * endpoint with `ofrep` and be followed by exactly `/ofrep/v1/evaluate/flags`, then nothing
 * (bulk) or `/` and the raw key (anything, `/` included, even empty).
 * @param {Map<string, OfrepRoute>} routes from buildOfrepRoutes
 * @param {string} path
 * @returns {OfrepMatch|null}
 */
function matchOfrepRoute (routes, path) {
  const at = path.indexOf(FLAGS_PATH)
  if (at < 0) return null
  const route = routes.get(path.slice(0, at))
  if (route === undefined) return null
  const end = at + FLAGS_PATH.length
  if (end === path.length) return { route, rawKey: null }
  return path[end] === '/' ? { route, rawKey: path.slice(end + 1) } : null
}

module.exports = { buildOfrepRoutes, matchOfrepRoute }
