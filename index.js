'use strict'

// The product's entry for tools and embedders (package.json "main"): what lives outside the
// product (tools/*, packages/hbase-client/bench) reaches beacon through this file only, never a
// path inside api/, lib/, logging/ or config/ (test/layers.unit.test.js holds that). It only
// re-exports. Each namespace loads its modules when first read, so a tool that needs the tables'
// layouts (the dev HBase, which `npm start` loads in the primary) does not load the HTTP surface.

/**
 * @template T
 * @param {() => T} load
 * @returns {() => T} `load`, called once, on first use
 */
function once (load) {
  let value
  let loaded = false
  return () => {
    if (!loaded) {
      value = load()
      loaded = true
    }
    return value
  }
}

const settings = once(() => {
  const { DEFAULTS, LRU_CACHE_DEFAULTS, OFREP_DEFAULTS, SINK_DEFAULTS } = require('./config/defaults')
  const { parseDuration, DURATION_HELP } = require('./config/duration')
  return Object.freeze({
    /** loadSettings (config/load.js), read when first named: it brings the schema and its validator. */
    get loadSettings () { return require('./config').loadSettings },
    DEFAULTS,
    LRU_CACHE_DEFAULTS,
    OFREP_DEFAULTS,
    SINK_DEFAULTS,
    parseDuration,
    DURATION_HELP
  })
})

const tables = once(() => {
  const {
    ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER, ACCESS_LOG_STORAGE, DEFAULT_LOG_BUCKETS, accessLogSplitKeys, bucketPrefix
  } = require('./logging/access-log-layout')
  const { ROLLUP_FAMILY, ROLLUP_STORAGE } = require('./logging/rollup/layout')
  const { encodeToggles, configSplitKeys } = require('./lib/toggles/store')
  return Object.freeze({
    ACCESS_LOG_FAMILY,
    ACCESS_LOG_QUALIFIER,
    ACCESS_LOG_STORAGE,
    DEFAULT_LOG_BUCKETS,
    accessLogSplitKeys,
    bucketPrefix,
    ROLLUP_FAMILY,
    ROLLUP_STORAGE,
    encodeToggles,
    configSplitKeys
  })
})

const log = once(() => {
  const { accessEntry, eventEntry, serializeEntry } = require('./logging/access-entry')
  const { countLines } = require('./logging/count-lines')
  const { createHBaseSink } = require('./logging/hbase-sink')
  const { createLogQuery } = require('./logging/query')
  const { eraseId } = require('./logging/erase')
  const { createRollupMarker } = require('./logging/rollup/marker')
  const { createRoller } = require('./logging/rollup/roller')
  return Object.freeze({
    accessEntry,
    eventEntry,
    serializeEntry,
    countLines,
    createHBaseSink,
    createLogQuery,
    eraseId,
    createRollupMarker,
    createRoller
  })
})

const toggles = once(() => {
  const { createConfigCache } = require('./lib/toggles/cache')
  const { configEntry } = require('./lib/toggles/entry')
  const { serializeConfig } = require('./lib/toggles/script-json')
  return Object.freeze({ createConfigCache, configEntry, serializeConfig })
})

const publicPlane = once(() => {
  const { createRateLimiter, clientOf } = require('./api/public/rate-limit')
  const { createProxyTrust } = require('./api/public/trusted-proxies')
  const { renderBody } = require('./api/public/jsonp')
  const { watchEventLoop } = require('./api/metrics/event-loop')
  return Object.freeze({ createRateLimiter, clientOf, createProxyTrust, renderBody, watchEventLoop })
})

module.exports = {
  /** createBeacon(settings, deps) (api/index.js): the root factory, for embedders. */
  get createBeacon () { return require('./api').createBeacon },
  /**
   * Settings (config/): loadSettings, the defaults and duration parsing. Read by the dev HBase
   * (table TTLs, its CLI's help), the chaos engine and the benches (run, flood, rate-limit, scale).
   */
  get settings () { return settings() },
  /**
   * The tables' layouts: the access log's and the rollups' families and split keys, the config
   * table's row format. Read by the dev HBase (creating and seeding the tables), the chaos engine,
   * the benches and the client's bench (its workloads write access-log rows).
   */
  get tables () { return tables() },
  /**
   * The access log's building blocks: entries and their bytes, the HBase sink, the log query,
   * erase, the rollups' marker and roller. Run directly by the benches (log-bytes, scale).
   */
  get log () { return log() },
  /** The config cache and its entries, as the public plane serves them: the cache-memory bench. */
  get toggles () { return toggles() },
  /**
   * The public plane's pieces: the rate limiter and the trusted proxies (the rate-limit bench),
   * the JSONP body (the baseline server), the event-loop watch (the load workers).
   */
  get publicPlane () { return publicPlane() }
}
