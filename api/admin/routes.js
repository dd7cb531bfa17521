'use strict'

const { createToggleAdminRouter } = require('./toggles')
const { createRolloutAdminRouter } = require('./rollouts')
const { createLogQueryRouter } = require('./log')
const { createLogLifecycleRouter } = require('./log-lifecycle')
const { createDashboardRouter } = require('./dashboard')
const { createTrafficRouter } = require('./traffic')

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
 */
function mountAdminRoutes (app, {
  settings, store, propagation, knownIds, logQuery, lifecycle, metricsText, metricsType, client, rollups, now, logger
}) {
  app.use(createToggleAdminRouter({
    token: settings.adminToken,
    store,
    maxIdLength: settings.limits.maxIdLength,
    logger,
    onConfigChange (id) {
      // This worker serves the id from the next request; the others of the host when the broadcast reaches them.
      if (knownIds) knownIds.add(id)
      propagation.configChanged(id)
    },
    endpoints: propagation.endpointSwitches
  }))
  // /admin/endpoints/:name/rollout
  if (settings.adminToken) app.use(createRolloutAdminRouter({ rollouts: propagation.rollouts, logger }))
  // GET /admin/log/scan and /admin/log/count
  app.use(createLogQueryRouter({ logQuery, logger }))
  // /admin/log/retention and /admin/log/erase
  app.use(createLogLifecycleRouter({ lifecycle, maxIdLength: settings.limits.maxIdLength, now, logger }))
  app.get('/metrics', async (req, res, next) => {
    try {
      res.set('Content-Type', metricsType).send(await metricsText())
    } catch (err) {
      next(err)
    }
  })
  // GET /dashboard/traffic
  app.use(createTrafficRouter({
    client: client.withKind('dashboard'),
    source: rollups,
    now: now || Date.now,
    timeoutMs: settings.hbase.operationTimeoutMs
  }))
  app.use(createDashboardRouter()) // GET /dashboard: a live page over /metrics and /readyz
}

module.exports = { mountAdminRoutes }
