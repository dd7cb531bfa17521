'use strict'

const { buildEndpoints } = require('../api/endpoints')
const { createDataPlane } = require('../api/data-plane')
const { createPublicApp } = require('../api/public-app')
const { createAdminApp } = require('../api/admin-app')
const { createConfigAdminRouter } = require('../api/admin-config')
const { createDashboardRouter } = require('../api/dashboard')
const { createHttpServer, listen } = require('./http-server')
const { createEndpointStateStore, watchEndpointStates } = require('./config/endpoint-state')
const { createChangeFeed, watchChangeFeed } = require('./config/change-feed')

/**
 * Wires one beacon process from injected parts: endpoints (sources, caches, sinks), the data
 * plane on a node:http server, express for everything else, and the admin app. Owns the
 * shutdown order: stop accepting → drain in-flight → flush access logs → close HBase.
 *
 * @param {object} options
 * @param {object} options.settings validated settings
 * @param {import('./hbase').HBaseClient} [options.client] HBase client (needed by hbase endpoints)
 * @param {Map<string, object> & { closeAll?: () => Promise<void> }} options.sinks named access-log sinks
 * @param {object} options.logger pino logger
 * @param {boolean} [options.admin] serve the admin app from this process (default true)
 * @param {(app: import('express').Express) => void} [options.publicRoutes]
 * @param {(app: import('express').Express) => void} [options.adminRoutes]
 * @param {() => number} [options.now] clock for caches
 * @param {ReturnType<import('./metrics').createMetrics>} [options.metrics] served at GET /metrics
 *   on the admin app; its hooks observe requests, caches and stored-config problems
 * @param {() => Promise<string>} [options.metricsText] what GET /metrics answers instead of this
 *   process's registry (cluster workers ask the primary for every worker's metrics)
 * @param {(change: { cmd: 'invalidate', id: string } | { cmd: 'endpoint', name: string, enabled: boolean }) => void} [options.broadcast]
 *   spreads an admin change to every process (cluster workers); default: this process only
 */
function createBeacon ({ settings, client, sinks, logger, admin = true, publicRoutes, adminRoutes, now, metrics, metricsText, broadcast }) {
  const hooks = metrics ? metrics.hooks : {}
  if (metrics) metrics.watchSinks(sinks)
  const endpoints = buildEndpoints({
    settings,
    client,
    sinks,
    now,
    onCacheOutcome: hooks.onCacheOutcome,
    onInvalidConfig: hooks.onInvalidConfig || ((id, reason) => logger.warn({ id, reason }, 'invalid stored config; serving the default'))
  })
  const publicApp = createPublicApp({ routes: publicRoutes, logger })
  const handler = createDataPlane({
    endpoints,
    limits: settings.limits,
    maxUrlLength: settings.http.maxUrlLength,
    fallback: publicApp,
    onResponse: hooks.onResponse,
    logger
  })
  const publicServer = createHttpServer(handler, settings.http)
  const byName = new Map([...endpoints.values()].map((e) => [e.name, e]))
  /** Drops one id from every endpoint cache of this process (admin changes). */
  function invalidate (id) {
    for (const endpoint of endpoints.values()) if (endpoint.cache) endpoint.cache.invalidate(id)
  }
  function setEndpointEnabled (name, enabled) {
    const endpoint = byName.get(name)
    if (!endpoint) return false
    if (endpoint.enabled !== enabled) logger.info({ endpoint: name, enabled }, enabled ? 'endpoint enabled' : 'endpoint disabled')
    endpoint.enabled = enabled
    return true
  }
  // Endpoint switches live in HBase so that every host sees them (within the poll interval)
  // and a restart keeps them; this host's workers get a change at once through `spread`.
  const endpointStates = client
    ? createEndpointStateStore({ client, table: settings.hbase.configTable, family: settings.hbase.configFamily, qualifier: settings.hbase.configQualifier, timeoutMs: settings.hbase.operationTimeoutMs })
    : null
  const stateWatcher = endpointStates && settings.hbase.controlPollMs > 0
    ? watchEndpointStates({ store: endpointStates, names: [...byName.keys()], apply: setEndpointEnabled, intervalMs: settings.hbase.controlPollMs, logger })
    : null
  /** Applies an admin change here (from this process or broadcast by the cluster primary). */
  function applyChange (change) {
    if (change.cmd === 'invalidate') invalidate(change.id)
    else if (change.cmd === 'endpoint') setEndpointEnabled(change.name, change.enabled)
  }
  const spread = broadcast || applyChange
  // Config changes made on another host: dropped from the caches here within the same poll
  // interval, instead of when the cache TTL runs out.
  const changeFeed = client ? createChangeFeed({ client, table: settings.hbase.configTable, family: settings.hbase.configFamily, timeoutMs: settings.hbase.operationTimeoutMs }) : null
  const changeWatcher = changeFeed && settings.hbase.controlPollMs > 0
    ? watchChangeFeed({ feed: changeFeed, invalidate, intervalMs: settings.hbase.controlPollMs, logger })
    : null
  function onConfigChange (id) {
    spread({ cmd: 'invalidate', id })
    changeFeed.publish(id).catch((err) => {
      logger.warn({ id, code: err.code, message: err.message }, 'config changed, but other hosts could not be told; they see it when their cache entry expires')
    })
  }
  const routes = (app) => {
    if (client) {
      app.use(createConfigAdminRouter({
        token: settings.adminToken,
        client,
        store: { table: settings.hbase.configTable, family: settings.hbase.configFamily, qualifier: settings.hbase.configQualifier },
        logger,
        onConfigChange,
        endpoints: {
          has: (name) => byName.has(name),
          list: () => [...byName.values()].map((e) => ({ name: e.name, enabled: e.enabled })),
          async set (name, enabled) {
            await endpointStates.write(name, enabled)
            spread({ cmd: 'endpoint', name, enabled })
          }
        }
      }))
    }
    if (metrics) {
      app.get('/metrics', async (req, res, next) => {
        try {
          res.set('Content-Type', metrics.contentType).send(await (metricsText ? metricsText() : metrics.metrics()))
        } catch (err) {
          next(err)
        }
      })
      app.use(createDashboardRouter()) // GET /dashboard: a live page over /metrics and /readyz
    }
    if (adminRoutes) adminRoutes(app)
  }
  const adminServer = admin ? createHttpServer(createAdminApp({ readiness, routes }), settings.http) : null
  let closing = null

  async function readiness () {
    const checks = {}
    let hbaseOk = true
    if (client) {
      try {
        await client.ping({ timeout: Math.min(1000, settings.hbase.rpcTimeoutMs) })
        checks.hbase = 'reachable'
      } catch (err) {
        hbaseOk = false
        checks.hbase = `unreachable (${err.code || err.message})`
      }
    }
    const cachedEntries = [...endpoints.values()].reduce((n, e) => n + (e.cache ? e.cache.stats().size : 0), 0)
    checks.cachedConfigs = cachedEntries
    let saturated = false
    for (const [name, sink] of sinks) {
      const stats = sink.stats()
      const limit = sink.maxQueue
      // Memory is full: new entries are spilled or shed (the sink's policy). Still answering,
      // but a load balancer should prefer a host that is not.
      const full = limit > 0 && stats.queueDepth >= limit
      saturated = saturated || full
      let check = 'ok'
      if (full) check = `saturated: ${sink.overload === 'shed' ? 'shedding' : 'spilling to the journal'}`
      else if (stats.state === 'down') check = `spilling to the journal (HBase not answering; ${stats.journalPending} pending)`
      checks[`accessLog.${name}`] = check
    }
    return { ready: (hbaseOk || cachedEntries > 0) && !saturated && !closing, checks }
  }

  return {
    endpoints,
    invalidate,
    setEndpointEnabled,
    applyChange,
    publicServer,
    adminServer,
    readiness,

    /**
     * @param {{ port: number, host: string, adminPort?: number, adminHost?: string }} where
     * @returns {Promise<{ port: number, adminPort: number|null }>}
     */
    async listen ({ port, host, adminPort, adminHost }) {
      // Serve with the stored switches, not the settings defaults (a failed read does not block).
      if (stateWatcher) await stateWatcher.ready
      if (changeWatcher) await changeWatcher.ready
      const bound = await listen(publicServer, port, host)
      const adminBound = adminServer ? await listen(adminServer, adminPort, adminHost) : null
      return { port: bound, adminPort: adminBound }
    },

    /**
     * Graceful shutdown within `timeoutMs`; idempotent.
     * @param {{ timeoutMs?: number }} [opts]
     * @returns {Promise<{ forced: boolean }>}
     */
    close ({ timeoutMs = settings.shutdownTimeoutMs } = {}) {
      if (closing) return closing
      closing = (async () => {
        if (stateWatcher) stateWatcher.stop()
        if (changeWatcher) changeWatcher.stop()
        const drains = [publicServer.listening ? publicServer.drain(timeoutMs) : { forced: false }]
        if (adminServer && adminServer.listening) drains.push(adminServer.drain(Math.min(timeoutMs, 1000)))
        const [publicResult] = await Promise.all(drains)
        if (sinks.closeAll) await sinks.closeAll()
        else await Promise.all([...sinks.values()].map((s) => s.close()))
        for (const endpoint of endpoints.values()) {
          if (endpoint.cache) await endpoint.cache.close()
        }
        if (client) await client.close()
        return publicResult
      })()
      return closing
    }
  }
}

module.exports = { createBeacon }
