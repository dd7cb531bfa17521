'use strict'

const { createFixedSource } = require('../../lib/toggles/fixed-source')
const { createHBaseSource } = require('../../lib/toggles/hbase-source')
const { createConfigCache } = require('../../lib/toggles/cache')
const { parseRollout, activateRollout } = require('../../lib/toggles/rollout')
const { contentVersion } = require('../../lib/toggles/entry')
const { validateToggles } = require('../../lib/toggles/validate')
const { callbackAllowlist } = require('./jsonp')
const { createCorsPolicy } = require('./cors')
const { ERRORS } = require('../../lib/errors')
const { groupSinks } = require('../../logging/privacy')

/** @typedef {import('../../lib/toggles/entry').ConfigEntry} ConfigEntry */
/** @typedef {import('../../config/load').Settings} Settings */
/** @typedef {import('../../logging/sink-set').Sink} Sink */
/** @typedef {import('../../logging/privacy').PrivacyPolicy} PrivacyPolicy */

/**
 * A declared endpoint, as the data plane, the event paths and the OFREP paths take it (a View
 * of it answers, logs and counts each request: view.js).
 * @typedef {object} Endpoint
 * @property {string} name
 * @property {string} path `/api/<name>.js`
 * @property {boolean} enabled off: answered ENDPOINT_DISABLED (the admin switches change it)
 * @property {string} cacheControl of its answers
 * @property {(id: string) => ConfigEntry|Promise<ConfigEntry>} lookup synchronous on a cache hit; an
 *   id without a row gets its rollout's variant, if the endpoint has one
 * @property {(id: string) => ConfigEntry|Promise<ConfigEntry>} reload a read past the cache
 * @property {boolean} acceptsRollout its source is HBase (a fixed config is every id's: no rollout)
 * @property {import('../../lib/toggles/rollout').ActiveRollout|null} rollout the one its ids without
 *   a row are split by; changed by api/propagation.js only (settings, admin calls, the stored row)
 * @property {import('../../logging/sink-set').Sink[]} sinks its access-log sinks
 * @property {import('../../logging/privacy').SinkGroup[]|null} sinkGroups the sinks by privacy
 *   policy, null when every one keeps everything
 * @property {boolean} logBeforeAnswer a sink is durable: log before answering
 * @property {import('./view').CountOnly} countOnly answers counted without an entry (logPolicy)
 * @property {((callback: string) => boolean)|null} allowsCallback null: every valid callback
 * @property {import('./cors').CorsPolicy|null} cors
 * @property {ReturnType<typeof createConfigCache>|null} cache its LRU cache, if any
 * @property {ReturnType<typeof createFixedSource>|ReturnType<typeof createHBaseSource>} source
 */

/**
 * Builds the declared endpoints from settings, the one place where an endpoint's declaration
 * (config/defaults.js, the settings file) becomes its parts: its config source (fixed | hbase,
 * through the toggle store), optionally an LRU cache in front, and its access-log sinks.
 *
 * @param {object} options
 * @param {Settings} options.settings validated settings (config/load.js)
 * @param {ReturnType<typeof import('../../lib/toggles/store').createToggleStore>} options.store
 * @param {Map<string, import('../../logging/sink-set').Sink>} options.sinks named access-log sinks (logging/)
 * @param {Map<string, import('../../logging/privacy').PrivacyPolicy|null>} [options.policies] sink
 *   name → what it stores of the client (logging/privacy.js); a sink not in it keeps everything
 * @param {() => number} [options.now] clock for the caches
 * @param {(endpoint: string, outcome: string) => void} [options.onCacheOutcome]
 * @param {(id: string, reason: string) => void} [options.onInvalidConfig]
 * @param {{ mayExist: (id: string) => boolean, add: (id: string) => void }|null} [options.knownIds]
 *   which ids have a row (lib/toggles/known-ids.js), for the HBase sources behind a cache: sample2 and its like read
 *   every request, as their settings say
 * @returns {Map<string, Endpoint>} keyed by path
 */
function buildEndpoints ({
  settings, store, sinks, policies = new Map(), now, onCacheOutcome, onInvalidConfig, knownIds = null
}) {
  /** @type {Map<string, Endpoint>} */
  const endpoints = new Map()
  for (const [name, spec] of Object.entries(settings.endpoints)) {
    let source
    if (spec.source === 'fixed') {
      source = createFixedSource({ value: spec.value })
    } else {
      source = createHBaseSource({
        store,
        defaultConfig: spec.defaultConfig,
        onInvalid: onInvalidConfig,
        maxInFlight: settings.hbase.configReadsInFlight,
        lingerMs: settings.hbase.configReadLingerMs,
        knownIds: spec.cache.type === 'lru' && knownIds ? knownIds : undefined
      })
    }
    let cache = null
    if (spec.cache.type === 'lru') {
      cache = createConfigCache({
        source,
        max: spec.cache.max,
        ttlMs: spec.cache.ttlMs,
        staleWhileRevalidateMs: spec.cache.staleWhileRevalidateMs,
        maxStaleMs: spec.cache.maxStaleMs,
        negativeTtlMs: spec.cache.negativeTtlMs,
        maxNegative: spec.cache.maxNegative,
        now,
        onOutcome: onCacheOutcome && ((/** @type {string} */ outcome) => onCacheOutcome(name, outcome))
      })
    }
    const endpointSinks = sinksNamed(name, spec.accessLog, sinks)
    const path = `/api/${name}.js`
    const acceptsRollout = spec.source !== 'fixed'
    const lookup = cache ? cache.lookup : source.lookup
    // A read past the cache (an OFREP refetch after a change: api/public/ofrep/refetch.js).
    const reload = cache ? cache.reload : source.lookup
    /** @type {Endpoint} */
    const endpoint = {
      name,
      path,
      enabled: spec.enabled,
      cacheControl: spec.cacheControl,
      lookup: acceptsRollout ? withRollout(lookup, () => endpoint.rollout) : lookup,
      reload: acceptsRollout ? withRollout(reload, () => endpoint.rollout) : reload,
      acceptsRollout,
      rollout: acceptsRollout ? settingsRollout(name, spec.rollout) : null,
      sinks: endpointSinks,
      sinkGroups: privacyGroups(spec.accessLog, endpointSinks, policies),
      logBeforeAnswer: endpointSinks.some((sink) => sink.durable === true),
      countOnly: countOnlyOf(spec.logPolicy),
      allowsCallback: callbackAllowlist(spec.callbacks),
      // fetch(): a GET may carry If-None-Match (not a CORS-safelisted header), so it is allowed.
      cors: createCorsPolicy(spec.cors, { methods: 'GET, HEAD', headers: 'If-None-Match' }),
      cache,
      source
    }
    endpoints.set(path, endpoint)
  }
  return endpoints
}

/**
 * A lookup whose ids without a row get the rollout's variant, when there is a rollout.
 * @param {(id: string) => ConfigEntry|Promise<ConfigEntry>} lookup
 * @param {() => import('../../lib/toggles/rollout').ActiveRollout|null} rolloutNow
 * @returns {(id: string) => ConfigEntry|Promise<ConfigEntry>}
 */
function withRollout (lookup, rolloutNow) {
  /** @type {(id: string, entry: ConfigEntry) => ConfigEntry} */
  const serve = (id, entry) => {
    const rollout = entry.found ? null : rolloutNow()
    return rollout === null ? entry : rollout.entryFor(id)
  }
  return (id) => {
    const entry = lookup(id)
    return typeof (/** @type {{ then?: unknown }} */ (entry)).then === 'function'
      ? /** @type {Promise<ConfigEntry>} */ (entry).then((e) => serve(id, e))
      : serve(id, /** @type {ConfigEntry} */ (entry))
  }
}

/**
 * @param {string} name
 * @param {unknown} declared the endpoint's `rollout` setting
 * @returns {import('../../lib/toggles/rollout').ActiveRollout|null}
 */
function settingsRollout (name, declared) {
  if (declared === undefined || declared === null) return null
  const parsed = parseRollout(declared, validateToggles)
  if ('error' in parsed) throw new ERRORS.INVALID_OPTION(`endpoints.${name}.rollout: ${parsed.error}`)
  return activateRollout(parsed.rollout, { at: null, version: contentVersion('s', parsed.rollout) })
}

/**
 * The event paths of the endpoints that declare `events` (api/public/events.js): `/api/<name>/events`
 * (POST) and, unless `gif: false`, `/api/<name>/events.gif` (GET). Each event goes to the
 * sinks `events.sinks` names.
 * @param {Settings} settings validated settings
 * @param {Map<string, { name: string, enabled: boolean }>} endpoints from buildEndpoints
 * @param {Map<string, import('../../logging/sink-set').Sink>} sinks named access-log sinks
 * @param {{ maxIdLength: number }} limits
 * @param {Map<string, import('../../logging/privacy').PrivacyPolicy|null>} [policies] as for buildEndpoints
 * @returns {Map<string, import('./events').EventRoute>} keyed by path
 */
function buildEventRoutes (settings, endpoints, sinks, limits, policies = new Map()) {
  /** @type {Map<string, import('./events').EventRoute>} */
  const routes = new Map()
  for (const endpoint of endpoints.values()) {
    const spec = settings.endpoints[endpoint.name].events
    if (!spec) continue
    const eventSinks = sinksNamed(endpoint.name, spec.sinks, sinks)
    const base = {
      endpoint,
      rules: {
        names: new Set(spec.names),
        maxEvents: spec.maxEvents,
        maxBodyBytes: spec.maxBodyBytes,
        maxIdLength: limits.maxIdLength
      },
      sinks: eventSinks,
      sinkGroups: privacyGroups(spec.sinks, eventSinks, policies),
      logBeforeAnswer: eventSinks.some((sink) => sink.durable === true)
    }
    const corsSpec = settings.endpoints[endpoint.name].cors
    // A JSON body makes fetch() send a preflight; sendBeacon's text/plain does not. An <img>
    // never sends one, so the GIF form's policy only checks origins.
    routes.set(`/api/${endpoint.name}/events`, {
      ...base,
      gif: false,
      cors: createCorsPolicy(corsSpec, { methods: 'POST', headers: 'Content-Type' })
    })
    if (spec.gif) {
      routes.set(`/api/${endpoint.name}/events.gif`, {
        ...base,
        gif: true,
        cors: createCorsPolicy(corsSpec, { methods: 'GET', headers: '' })
      })
    }
  }
  return routes
}

/**
 * @param {string} endpointName
 * @param {string[]} names
 * @param {Map<string, Sink>} sinks
 * @returns {Sink[]}
 */
function sinksNamed (endpointName, names, sinks) {
  return names.map((sinkName) => {
    const sink = sinks.get(sinkName)
    if (!sink) {
      throw new ERRORS.INVALID_OPTION(`endpoint ${endpointName} logs to sink "${sinkName}", which was not created`)
    }
    return sink
  })
}

/**
 * @param {string[]} names
 * @param {Sink[]} endpointSinks
 * @param {Map<string, PrivacyPolicy|null>} policies
 */
function privacyGroups (names, endpointSinks, policies) {
  // logging/privacy.js types its sinks as writers of any object; a Sink writes AccessEntries.
  const writers = /** @type {{ write: (entry: object) => void }[]} */ (endpointSinks)
  return groupSinks(writers, names.map((name) => policies.get(name) ?? null))
}

/**
 * The sink settings some endpoint logs to: a process builds only those (a declared sink no
 * endpoint uses opens no file and no journal).
 * @param {Settings} settings validated settings
 * @returns {Record<string, Settings>} sink name → its settings (each a frozen record of config/schema.js's shape)
 */
function sinkSettingsInUse (settings) {
  const names = new Set(Object.values(settings.endpoints).flatMap((e) => [
    ...e.accessLog,
    ...(e.events ? e.events.sinks : [])
  ]))
  return Object.fromEntries(Object.entries(settings.logSinks).filter(([name]) => names.has(name)))
}

/**
 * @param {{ clientErrors?: string, unknownIds?: string }|undefined} policy an endpoint's `logPolicy`
 * @returns {import('./view').CountOnly} what it counts without an access-log entry
 */
function countOnlyOf (policy = {}) {
  return Object.freeze({ clientErrors: policy.clientErrors === 'count', unknownIds: policy.unknownIds === 'count' })
}

module.exports = { buildEndpoints, buildEventRoutes, sinkSettingsInUse }
