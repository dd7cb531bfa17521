'use strict'

const { createHBaseClientFrom } = require('../config/hbase-client')
const { createToggleStore } = require('../lib/toggles/store')
const { createKnownIds } = require('../lib/toggles/known-ids')
const { createSinks } = require('../logging')
const { GroupCommit } = require('../logging/group-commit')
const { createSinkPolicies, needsHashKeys, createHashKeys } = require('../logging/privacy')
const { createHashSecretSource, loadHashSecret } = require('../lib/toggles/hash-secret')
const { buildEndpoints, buildEventRoutes, sinkSettingsInUse } = require('./public/endpoints')
const { createDataPlane } = require('./public/data-plane')
const { createRateLimits } = require('./public/rate-limit')
const { createConnectionShare } = require('./public/connection-share')
const { createEventHandler } = require('./public/events')
const { buildOfrepRoutes } = require('./public/ofrep/routes')
const { createOfrepHandler } = require('./public/ofrep/handler')
const { createStreamHub } = require('./public/ofrep/stream-hub')
const { createStreamHandler } = require('./public/ofrep/stream-handler')
const { createPublicApp } = require('./public/app')
const { createAdminApp } = require('./admin/app')
const { createHostCheck } = require('./admin/host-check')
const { countAuthFailures } = require('./metrics/admin-auth')
const { isLoopback } = require('../config/admin-token')
const { mountAdminRoutes } = require('./admin/routes')
const { createLogQuery } = require('../logging/query')
const { createRetention } = require('../logging/retention')
const { createMetrics } = require('./metrics')
const { registerKnownIds } = require('./metrics/known-ids')
const { registerConfigCaches } = require('./metrics/config-caches')
const { createPropagation } = require('./propagation')
const { createReadiness } = require('./admin/readiness')
const { createParkedView } = require('../logging/rollup/read')
const { createHttpServer, listen } = require('./http-server')
const { startShutdownBudget } = require('./shutdown-budget')
// The rollup job runs in a process of its own (server.js), built by its own root factory.
const { createRollupJob, keepsRollups } = require('./rollup-job')
const { settleWithin, TIMED_OUT } = require('../lib/deadline')

/**
 * The root factory: the one place that wires a beacon process, from settings and injected
 * parts. Production (server.js, one per cluster worker) and tests build it the same way.
 *
 * One request, from socket to HBase and back, step by step with each step's file:
 * docs/architecture.md, "Lifecycle: one request" and "Lifecycle: one access entry".
 *
 * @param {import('../config/load').Settings} settings validated settings (config/)
 * @param {object} deps parts to use instead of the ones built from settings (a logger at least)
 * @param {import('pino').Logger} deps.logger the app (ops) logger
 * @param {import('@beacon/hbase-client').HBaseClient} [deps.client] the beacon owns it from here on
 *   (closes it); default: a client on settings.hbase.bootstrap
 * @param {ReturnType<typeof createMetrics>} [deps.metrics] default: a fresh registry
 * @param {import('../logging/sink-set').SinkSet} [deps.sinks]
 *   default: the sinks the endpoints log to, built from settings.logSinks
 * @param {string} [deps.writerId] unique among all writers of the access-log table and journal
 *   dir (default: derived from the pid)
 * @param {string} [deps.workerTag] cluster worker tag, part of file-log names (default 'w1')
 * @param {{ metricsText: () => Promise<string>, broadcast: (change: import('./propagation').Change) => void,
 *   onChange: (apply: (change: import('./propagation').Change) => void) => void }} [deps.cluster] the cluster IPC
 *   (api/cluster-ipc.js); without it a change reaches this process alone
 * @param {() => number} [deps.now] clock for the caches and the rate limits
 */
function createBeacon (settings, deps) {
  const { logger, now, cluster } = deps
  const metrics = deps.metrics || createMetrics()
  const hooks = metrics.hooks
  const client = deps.client || createHBaseClientFrom(settings, { onRpc: hooks.onRpc })
  const store = createToggleStore({
    client,
    table: settings.hbase.configTable,
    family: settings.hbase.configFamily,
    qualifier: settings.hbase.configQualifier,
    timeoutMs: settings.hbase.operationTimeoutMs
  })
  // One per process: the durable sinks write each turn's entries together before its answers.
  const groupCommit = new GroupCommit({ onError: (err) => logger.error({ err }, 'access log: a group commit failed') })
  const sinks = deps.sinks || createSinks(sinkSettingsInUse(settings), {
    client,
    groupCommit,
    stateDir: settings.stateDir,
    writerId: deps.writerId || `p${process.pid}`,
    workerTag: deps.workerTag || 'w1',
    logger
  })
  metrics.watchSinks(sinks)
  const privacy = sinkPrivacy(sinkSettingsInUse(settings), store, logger)

  const knownIds = usesKnownIds(settings)
    ? createKnownIds({ store, rescanMs: settings.hbase.knownIdScanMs, logger })
    : null
  if (knownIds) registerKnownIds(metrics.register, knownIds)
  const endpoints = buildEndpoints({
    settings,
    store,
    knownIds,
    sinks,
    policies: privacy.policies,
    now,
    onCacheOutcome: hooks.onCacheOutcome,
    onInvalidConfig: (id, reason) => {
      hooks.onInvalidConfig()
      logger.warn({ id, reason }, 'invalid stored config; serving the default')
    }
  })
  registerConfigCaches(metrics.register, endpoints)
  metrics.declareBrowserPaths({
    cors: Object.keys(settings.endpoints).filter((name) => settings.endpoints[name].cors),
    events: Object.fromEntries(Object.entries(settings.endpoints)
      .filter(([, e]) => e.events)
      .map(([name, e]) => [name, e.events.names]))
  })
  const ofrepRoutes = buildOfrepRoutes(settings, endpoints)
  // The change streams hear of every change through the one path caches hear of it.
  const streams = createStreamHub({ routes: ofrepRoutes.values(), controlPollMs: settings.hbase.controlPollMs })
  metrics.watchStreams(streams)
  const lifecycle = accessLogLifecycle(settings, client.withKind('lifecycle'))
  const propagation = createPropagation({
    endpoints,
    store,
    broadcast: cluster && cluster.broadcast,
    controlPollMs: settings.hbase.controlPollMs,
    logger,
    onConfigChange (id, at) {
      if (knownIds) knownIds.add(id)
      streams.configChanged(id, at)
    },
    onEndpointSwitch: streams.endpointSwitched,
    onRetentionChange: lifecycle ? lifecycle.retention.forget : undefined
  })
  if (cluster) cluster.onChange(propagation.applyChange)

  const rateLimits = createRateLimits(settings, { now })
  const connectionShare = createConnectionShare({
    maxPerClient: settings.http.maxConnectionsPerClient,
    isTrusted: rateLimits.isTrusted
  })
  const publicServer = createHttpServer(createDataPlane({
    endpoints,
    limits: settings.limits,
    maxUrlLength: settings.http.maxUrlLength,
    fallback: createPublicApp({ logger }),
    eventRoutes: buildEventRoutes(settings, endpoints, sinks, settings.limits, privacy.policies),
    handleEvents: createEventHandler({ maxUrlLength: settings.http.maxUrlLength, hooks, groupCommit }),
    ofrepRoutes,
    handleOfrep: createOfrepHandler({
      hooks,
      logger,
      groupCommit,
      handleStream: createStreamHandler({
        hub: streams, maxIdLength: settings.limits.maxIdLength, onCors: hooks.onCors, clientOf: rateLimits.clientOf
      })
    }),
    onResponse: hooks.onResponse,
    onCors: hooks.onCors,
    rateLimits,
    overShare: settings.http.maxConnectionsPerClient > 0 ? connectionShare.overShare : undefined,
    onRateLimited: hooks.onRateLimited,
    onCountedOnly: hooks.onCountedOnly,
    groupCommit,
    logger
  }), settings.http)
  publicServer.on('connection', connectionShare.admit)

  // Each purpose's HBase calls count under a kind of their own (beacon_hbase_rpcs_total); the
  // store and the sinks tag theirs (lib/toggles/store.js, logging/index.js).
  metrics.watchHBaseTraffic(client)
  const logQuery = accessLogQuery(settings, client.withKind('query'), lifecycle && lifecycle.retention)

  /** @type {Promise<{ forced: boolean, leftOnDisk: number, lostInMemory: number }>|null} */
  let closing = null
  let idsScanned = Promise.resolve()
  const readiness = createReadiness({
    client,
    pingTimeoutMs: Math.min(1000, settings.hbase.rpcTimeoutMs),
    endpoints,
    sinks,
    retention: lifecycle && lifecycle.retention,
    rollups: parkedView(settings, client.withKind('lifecycle')),
    closing: () => closing !== null
  })
  // Read once it listens: the closures run on requests only.
  const adminAddress = () => /** @type {import('node:net').AddressInfo|null} */ (adminServer.address())
  const adminServer = createHttpServer(createAdminApp({
    readiness,
    logger,
    isOwnHost: createHostCheck({ address: adminAddress, allowedHosts: settings.admin.allowedHosts }),
    routes: (app) => mountAdminRoutes(app, {
      settings,
      store,
      propagation,
      knownIds,
      logQuery,
      lifecycle,
      metricsText: () => (cluster ? cluster.metricsText() : metrics.metrics()),
      metricsType: metrics.contentType,
      client,
      rollups: rollupSource(settings),
      now,
      logger,
      loopback: () => isLoopback(adminAddress()?.address ?? ''),
      onAuthFailure: countAuthFailures(metrics.register)
    })
  }), settings.http)

  return {
    settings,
    client,
    sinks,
    endpoints,
    metrics,
    publicServer,
    adminServer,
    readiness,
    logQuery,
    applyChange: propagation.applyChange,
    streams,
    knownIds,
    /** @returns {Promise<void>} the first scan of the config ids is done (or failed, or there is none) */
    whenIdsScanned: () => idsScanned,

    /**
     * Reads the stored endpoint switches and, when a sink hashes addresses, the hash secret first
     * (a failed read does not block: it is retried), then listens.
     * @param {{ port?: number, host?: string, adminPort?: number, adminHost?: string }} [where]
     *   default: the settings' ports and hosts
     * @returns {Promise<{ port: number, adminPort: number }>} the bound ports
     */
    async listen ({
      port = settings.port,
      host = settings.host,
      adminPort = settings.adminPort,
      adminHost = settings.adminHost
    } = {}) {
      await Promise.all([propagation.ready, privacy.ready])
      // Not waited for: until its first scan is done, every id is read.
      if (knownIds && !closing) idsScanned = knownIds.start()
      const bound = await listen(publicServer, port, host)
      const adminBound = await listen(adminServer, adminPort, adminHost)
      return { port: bound, adminPort: adminBound }
    },

    /**
     * Graceful shutdown within one budget (api/shutdown-budget.js): stop accepting → end the
     * change streams → drain in-flight requests → flush and close the access logs → close
     * HBase. Idempotent.
     * @param {{ timeoutMs?: number }} [opts] the budget (default settings.shutdownTimeoutMs)
     * @returns {Promise<{ forced: boolean, leftOnDisk: number, lostInMemory: number }>} forced: requests
     *   were still running at the drain deadline and were cut; leftOnDisk: access-log entries the HBase
     *   sinks could not send in time, left in this host's journal files (the app log names them);
     *   lostInMemory: entries the sinks could write nowhere
     */
    close ({ timeoutMs = settings.shutdownTimeoutMs } = {}) {
      if (closing) return closing
      closing = (async () => {
        const budget = startShutdownBudget(timeoutMs)
        propagation.stop()
        privacy.stop()
        const scanStopped = knownIds ? knownIds.stop() : null
        const drainMs = budget.drainMs()
        const draining = publicServer.listening ? publicServer.drain(drainMs) : { forced: false }
        // After the server stopped accepting: a client that reconnects at once reaches another worker.
        streams.close()
        const [drained] = await Promise.all([
          draining,
          adminServer.listening ? adminServer.drain(Math.min(drainMs, 1000)) : null
        ])
        const sinksClosed = await sinks.closeAll({ timeoutMs: budget.sinksMs() })
        for (const endpoint of endpoints.values()) if (endpoint.cache) endpoint.cache.clear()
        await scanStopped
        await closeClient(client, budget.clientMs())
        return { ...drained, leftOnDisk: sinksClosed.leftOnDisk, lostInMemory: sinksClosed.lostInMemory }
      })()
      return closing
    }
  }
}

/**
 * What each sink stores of the client (logging/privacy.js). When a sink hashes addresses, the
 * secret of the daily keys is read from the config table (created there by the first host to
 * need it), and retried while HBase cannot be reached; until then hashed addresses are null.
 * @param {Record<string, import('../config/load').Settings>} sinkSettings the sinks in use
 * @param {ReturnType<typeof createToggleStore>} store
 * @param {import('pino').Logger} logger
 * @returns {{ policies: ReturnType<typeof createSinkPolicies>, ready: Promise<void>, stop: () => void }}
 */
function sinkPrivacy (sinkSettings, store, logger) {
  if (!needsHashKeys(sinkSettings)) {
    return { policies: createSinkPolicies(sinkSettings), ready: Promise.resolve(), stop () {} }
  }
  const hashKeys = createHashKeys()
  const loading = loadHashSecret({ source: createHashSecretSource({ store }), onSecret: hashKeys.setSecret, logger })
  return { policies: createSinkPolicies(sinkSettings, { hashKeys }), ready: loading.ready, stop: loading.stop }
}

/**
 * The HBase access-log sink that queries and the traffic view read: the one named `hbase`, else
 * the first HBase sink; null when there is none.
 * @param {import('../config/load').Settings} settings
 * @returns {{ table: string, buckets?: number, rollups?: boolean, rollupTable?: string, retention: string,
 *   rollupRetention: string }|null}
 */
function queriedLogSink (settings) {
  const sinks = Object.entries(settings.logSinks || {}).filter(([, spec]) => spec && spec.type === 'hbase')
  const found = sinks.find(([name]) => name === 'hbase') || sinks[0]
  return found ? found[1] : null
}

/**
 * That sink's retention (logging/retention.js) and what an erase works on (logging/erase.js).
 * @param {import('../config/load').Settings} settings
 * @param {import('@beacon/hbase-client').HBaseClient} client
 * @returns {{ retention: ReturnType<typeof createRetention>, target: import('../logging/erase').EraseTarget }|null}
 */
function accessLogLifecycle (settings, client) {
  const spec = queriedLogSink(settings)
  if (!spec) return null
  const rollupTable = spec.rollups === false ? null : spec.rollupTable || null
  const timeout = settings.hbase.operationTimeoutMs
  return {
    retention: createRetention({ client, logTable: spec.table, rollupTable, configured: spec, timeout }),
    target: { client, table: spec.table, buckets: spec.buckets || 16, rollupTable, timeout }
  }
}

/**
 * @param {import('../config/load').Settings} settings
 * @param {import('@beacon/hbase-client').HBaseClient} client
 * @param {ReturnType<typeof createRetention>|null} retention
 * @returns {ReturnType<typeof createLogQuery>|null} the access-log reader (logging/query/)
 */
function accessLogQuery (settings, client, retention) {
  const spec = queriedLogSink(settings)
  if (!spec) return null
  const rollupTable = spec.rollups === false ? null : spec.rollupTable || null
  return createLogQuery({
    retention,
    client,
    table: spec.table,
    buckets: spec.buckets || 16,
    maxIdLength: settings.limits.maxIdLength,
    timeout: settings.hbase.operationTimeoutMs,
    rollupTable,
    endpoints: Object.keys(settings.endpoints)
  })
}

/**
 * Where the rollups of that sink are, for the dashboard's fleet traffic; null when it keeps none.
 * @param {import('../config/load').Settings} settings
 * @returns {{ rollupTable: string, logTable: string, buckets: number }|null}
 */
function rollupSource (settings) {
  const spec = queriedLogSink(settings)
  if (!spec || spec.rollups === false || !spec.rollupTable) return null
  return { rollupTable: spec.rollupTable, logTable: spec.table, buckets: spec.buckets || 16 }
}

/**
 * The parked minutes of that sink's rollups, for /readyz; null when it keeps none.
 * @param {import('../config/load').Settings} settings
 * @param {import('@beacon/hbase-client').HBaseClient} client
 */
function parkedView (settings, client) {
  const source = rollupSource(settings)
  return source ? createParkedView({ ...source, client, timeout: settings.hbase.operationTimeoutMs }) : null
}

/**
 * Whether this process keeps a known-id filter: it is on, and a cached endpoint reads HBase.
 * @param {import('../config/load').Settings} settings
 * @returns {boolean}
 */
function usesKnownIds (settings) {
  return settings.hbase.knownIdScanMs > 0 &&
    Object.values(settings.endpoints).some((e) => e.source === 'hbase' && e.cache.type === 'lru')
}

/**
 * Lets in-flight HBase calls finish within `ms`, then aborts what is left.
 * @param {import('@beacon/hbase-client').HBaseClient} client
 * @param {number} ms
 */
async function closeClient (client, ms) {
  if (await settleWithin(client.close(), ms) === TIMED_OUT) await client.destroy()
}

module.exports = { createBeacon, createRollupJob, keepsRollups }
