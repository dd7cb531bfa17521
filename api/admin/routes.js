'use strict'

const { createToggleAdminRouter } = require('./toggles')
const { createRolloutAdminRouter } = require('./rollouts')
const { createLogQueryRouter } = require('./log')
const { createLogLifecycleRouter } = require('./log-lifecycle')
const { createDashboardRouter } = require('./dashboard')
const { createTrafficRouter } = require('./traffic')
const { createAuditRouter } = require('./audit-routes')
const { createCredentials } = require('./credentials')
const { createAuthFailures } = require('./auth-failures')
const { adminGuard, metricsGuard } = require('./bearer-guard')
const { createAuditTrail } = require('./audit')
const { createConfigChanges } = require('./changes')
const { createHistoryRouter } = require('./history-routes')
const { createImportRouter } = require('./import-routes')
const { createHistory } = require('../../lib/toggles/history')
const { parseDuration } = require('../../config/duration')
const { ERRORS } = require('../../lib/errors')

/**
 * Mounts the admin port's routes after /healthz and /readyz (api/admin/app.js), in the order the
 * guard needs: the toggle router first, whose token guard and JSON body parser cover `/admin`.
 *
 * @param {import('express').Express} app
 * @param {object} deps
 * @param {import('../../config/load').Settings} deps.settings
 * @param {ReturnType<typeof import('../../lib/toggles/store').createToggleStore>} deps.store
 * @param {ReturnType<typeof import('../propagation').createPropagation>} deps.propagation
 * @param {{ add: (id: string) => void }|null} deps.knownIds
 * @param {any} deps.logQuery logging/query.js, null when no sink is queried
 * @param {any} deps.lifecycle retention and erasure (api/index.js accessLogLifecycle), or null
 * @param {() => Promise<string>} deps.metricsText the /metrics body (the cluster's, or this process's)
 * @param {string} deps.metricsType its Content-Type
 * @param {import('@beacon/hbase-client').HBaseClient} deps.client
 * @param {{ rollupTable: string, logTable: string, buckets: number }|null} deps.rollups for the traffic page
 * @param {(() => number)|undefined} deps.now
 * @param {import('pino').Logger} deps.logger
 * @param {() => boolean} deps.loopback the admin port is bound to a loopback address (/metrics is open)
 * @param {(path: string) => void} [deps.onAuthFailure] metrics: a failed admin authentication
 */
function mountAdminRoutes (app, {
  settings, store, propagation, knownIds, logQuery, lifecycle, metricsText, metricsType, client, rollups, now, logger, loopback,
  onAuthFailure
}) {
  const credentials = createCredentials({ token: settings.adminToken, named: settings.adminTokens })
  const failures = createAuthFailures({ logger, now, onFailure: onAuthFailure })
  const guard = adminGuard({ credentials, failures })
  const endpointNames = Object.keys(settings.endpoints).join(', ')
  // Names only the settings declare: never the name that was asked for.
  const unknownEndpoint = () => new ERRORS.NOT_FOUND(`the endpoints are ${endpointNames}`)
  const trail = createAuditTrail({
    client,
    table: settings.hbase.auditTable,
    ttlSeconds: null,
    timeoutMs: settings.hbase.operationTimeoutMs,
    logger,
    now
  })
  const changes = createConfigChanges({
    store,
    history: createHistory({
      client,
      table: settings.hbase.historyTable,
      ttlSeconds: parseDuration(settings.history.retention) ?? null,
      maxVersions: settings.history.maxVersions,
      timeoutMs: settings.hbase.operationTimeoutMs
    }),
    rollouts: propagation.rollouts,
    onConfigChange (id) {
      // This worker serves the id from the next request; the others of the host when the broadcast reaches them.
      if (knownIds) knownIds.add(id)
      propagation.configChanged(id)
    },
    onConfigsImported (ids) {
      if (knownIds) for (const id of ids) knownIds.add(id)
      propagation.configsChanged(ids)
    },
    trail,
    logger,
    now
  })
  /** @type {import('./toggles').AuditRecorder} */
  const audit = (req, res, action, target, change) =>
    trail.record({ actor: res.locals.actor, action, target, ...(change ? { change } : {}), ip: req.socket.remoteAddress })
  app.use(createToggleAdminRouter({
    credentials,
    guard,
    unknownEndpoint,
    audit,
    changes,
    store,
    maxIdLength: settings.limits.maxIdLength,
    logger,
    endpoints: propagation.endpointSwitches
  }))
  if (credentials.any) {
    // /admin/endpoints/:name/rollout
    app.use(createRolloutAdminRouter({ rollouts: propagation.rollouts, changes, logger, unknownEndpoint }))
    // /admin/import/config, /admin/export/config
    app.use(createImportRouter({ changes, store, maxIdLength: settings.limits.maxIdLength, logger }))
    // …/history and …/rollback of an id's config and of a rollout
    app.use(createHistoryRouter({
      changes,
      rolloutKind: propagation.rollouts.kind,
      unknownEndpoint,
      maxIdLength: settings.limits.maxIdLength,
      now,
      logger
    }))
    // GET /admin/audit
    app.use(createAuditRouter({ trail, now, logger }))
  }
  // GET /admin/log/scan and /admin/log/count
  app.use(createLogQueryRouter({ logQuery, logger }))
  // /admin/log/retention and /admin/log/erase
  app.use(createLogLifecycleRouter({
    lifecycle, maxIdLength: settings.limits.maxIdLength, now, audit, logger, onRetentionSet: propagation.retentionChanged
  }))
  const metricsAccess = metricsGuard({ credentials, failures, loopback, metricsToken: settings.metricsToken })
  app.get('/metrics', metricsAccess, async (req, res, next) => {
    try {
      res.set('Content-Type', metricsType).send(await metricsText())
    } catch (err) {
      next(err)
    }
  })
  // GET /dashboard/traffic: it lists visitor ids, so the token guards it
  app.use(createTrafficRouter({
    guard,
    client: client.withKind('dashboard'),
    source: rollups,
    now: now || Date.now,
    timeoutMs: settings.hbase.operationTimeoutMs
  }))
  app.use(createDashboardRouter()) // GET /dashboard: a live page over /metrics and /readyz
}

module.exports = { mountAdminRoutes }
