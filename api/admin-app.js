'use strict'

const express = require('express')

/**
 * Express app for the admin/control plane (ADMIN_PORT): health and readiness for load
 * balancers. Never listens by itself.
 * @param {object} options
 * @param {() => Promise<{ ready: boolean, checks: object }>} options.readiness
 * @param {(app: import('express').Express) => void} [options.routes] more admin routes (metrics, dashboard, admin API)
 * @returns {import('express').Express}
 */
function createAdminApp ({ readiness, routes }) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.get('/healthz', (req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok', pid: process.pid, uptimeSeconds: Math.round(process.uptime()) })
  })
  app.get('/readyz', async (req, res, next) => {
    try {
      const { ready, checks } = await readiness()
      res.status(ready ? 200 : 503).set('Cache-Control', 'no-store').json({ status: ready ? 'ready' : 'not ready', checks })
    } catch (err) {
      next(err)
    }
  })
  if (routes) routes(app)
  app.use((req, res) => res.status(404).json({ error: { status: 404, code: 'NOT_FOUND', message: 'no such admin path' } }))
  app.use((err, req, res, next) => {
    const status = err.status >= 400 && err.status < 500 ? err.status : 500
    res.status(status).json({ error: { status, code: err.code || (status === 500 ? 'INTERNAL' : 'BAD_REQUEST'), message: status === 500 ? 'internal error' : err.message } })
  })
  return app
}

module.exports = { createAdminApp }
