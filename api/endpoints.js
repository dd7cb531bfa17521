'use strict'

const { createFixedSource } = require('../lib/config/fixed-source')
const { createHBaseSource } = require('../lib/config/hbase-source')
const { createConfigCache } = require('../lib/config/cache')
const { callbackAllowlist } = require('../lib/jsonp')

/**
 * Builds the declared endpoints from settings: each gets its config source (fixed | hbase),
 * optionally an LRU cache in front, and its access-log sinks.
 *
 * @param {object} options
 * @param {object} options.settings validated settings (config/load.js)
 * @param {import('../lib/hbase').HBaseClient} [options.client] required if any endpoint reads HBase
 * @param {Map<string, { write: Function }>} options.sinks named access-log sinks
 * @param {() => number} [options.now] clock for the caches
 * @param {(endpoint: string, outcome: string) => void} [options.onCacheOutcome]
 * @param {(id: string, reason: string) => void} [options.onInvalidConfig]
 * @returns {Map<string, { name: string, path: string, enabled: boolean, cacheControl: string,
 *   lookup: Function, sinks: object[], cache: object|null, source: object }>} keyed by path
 */
function buildEndpoints ({ settings, client, sinks, now, onCacheOutcome, onInvalidConfig }) {
  const endpoints = new Map()
  for (const [name, spec] of Object.entries(settings.endpoints)) {
    let source
    if (spec.source === 'fixed') {
      source = createFixedSource({ value: spec.value })
    } else {
      if (!client) throw new Error(`endpoint ${name} reads HBase but no HBase client was given`)
      source = createHBaseSource({
        client,
        table: settings.hbase.configTable,
        family: settings.hbase.configFamily,
        qualifier: settings.hbase.configQualifier,
        defaultConfig: spec.defaultConfig,
        timeoutMs: settings.hbase.operationTimeoutMs,
        onInvalid: onInvalidConfig
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
        now,
        onOutcome: onCacheOutcome && ((outcome) => onCacheOutcome(name, outcome))
      })
    }
    const endpointSinks = spec.accessLog.map((sinkName) => {
      const sink = sinks.get(sinkName)
      if (!sink) throw new Error(`endpoint ${name} logs to sink "${sinkName}", which was not created`)
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

module.exports = { buildEndpoints }
