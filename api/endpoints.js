'use strict'

const { createFixedSource } = require('../lib/toggles/fixed-source')
const { createHBaseSource } = require('../lib/toggles/hbase-source')
const { createConfigCache } = require('../lib/toggles/cache')
const { callbackAllowlist } = require('./jsonp')
const { ERRORS } = require('../lib/errors')

/**
 * Builds the declared endpoints from settings, the one place where an endpoint's declaration
 * (config/defaults.js, the settings file) becomes its parts: its config source (fixed | hbase,
 * through the toggle store), optionally an LRU cache in front, and its access-log sinks.
 *
 * @param {object} options
 * @param {object} options.settings validated settings (config/load.js)
 * @param {ReturnType<typeof import('../lib/toggles/store').createToggleStore>} options.store
 * @param {Map<string, { write: Function, durable?: boolean }>} options.sinks named access-log sinks (logging/)
 * @param {() => number} [options.now] clock for the caches
 * @param {(endpoint: string, outcome: string) => void} [options.onCacheOutcome]
 * @param {(id: string, reason: string) => void} [options.onInvalidConfig]
 * @returns {Map<string, { name: string, path: string, enabled: boolean, cacheControl: string,
 *   lookup: Function, sinks: object[], cache: object|null, source: object }>} keyed by path
 */
function buildEndpoints ({ settings, store, sinks, now, onCacheOutcome, onInvalidConfig }) {
  const endpoints = new Map()
  for (const [name, spec] of Object.entries(settings.endpoints)) {
    let source
    if (spec.source === 'fixed') {
      source = createFixedSource({ value: spec.value })
    } else {
      source = createHBaseSource({ store, defaultConfig: spec.defaultConfig, onInvalid: onInvalidConfig })
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
        now,
        onOutcome: onCacheOutcome && ((outcome) => onCacheOutcome(name, outcome))
      })
    }
    const endpointSinks = spec.accessLog.map((sinkName) => {
      const sink = sinks.get(sinkName)
      if (!sink) throw new ERRORS.INVALID_OPTION(`endpoint ${name} logs to sink "${sinkName}", which was not created`)
      return sink
    })
    const path = `/api/${name}.js`
    endpoints.set(path, {
      name,
      path,
      enabled: spec.enabled,
      cacheControl: spec.cacheControl,
      lookup: cache ? cache.lookup : source.lookup,
      sinks: endpointSinks,
      logBeforeAnswer: endpointSinks.some((sink) => sink.durable === true),
      allowsCallback: callbackAllowlist(spec.callbacks),
      cache,
      source
    })
  }
  return endpoints
}

/**
 * The sink settings some endpoint logs to: a process builds only those (a declared sink no
 * endpoint uses opens no file and no journal).
 * @param {object} settings validated settings
 * @returns {Record<string, object>} sink name → its settings
 */
function sinkSettingsInUse (settings) {
  const names = new Set(Object.values(settings.endpoints).flatMap((e) => e.accessLog))
  return Object.fromEntries(Object.entries(settings.logSinks).filter(([name]) => names.has(name)))
}

module.exports = { buildEndpoints, sinkSettingsInUse }
