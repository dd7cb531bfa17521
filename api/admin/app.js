'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { sendError } = require('../error-body')
const { hostGuard } = require('./host-check')

/**
 * Express app for the control plane (ADMIN_PORT): a request not addressed to it by one of its own
 * names is turned away on every path (./host-check.js); then liveness and readiness for load
 * balancers, then whatever `routes` mounts (metrics, dashboard, the toggle admin API). Never
 * listens by itself.
 * @param {object} options
 * @param {() => Promise<{ ready: boolean, checks: object, retention?: object }>} options.readiness what /readyz
 *   answers (anything beside ready and checks is shown as it is)
 * @param {(app: import('express').Express) => void} options.routes
 * @param {{ error: Function }} options.logger
 * @param {(host: string|undefined) => boolean} options.isOwnHost ./host-check.js createHostCheck()
 * @returns {import('express').Express}
 */
function createAdminApp ({ readiness, routes, logger, isOwnHost }) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(hostGuard(isOwnHost))
  app.get('/healthz', (req, res) => {
    res.set('Cache-Control', 'no-store').json({
      status: 'ok',
      pid: process.pid,
      uptimeSeconds: Math.round(process.uptime())
    })
  })
  app.get('/readyz', async (req, res, next) => {
    try {
      const { ready, checks, ...shown } = await readiness()
      res.status(ready ? 200 : 503).set('Cache-Control', 'no-store').json({
        status: ready ? 'ready' : 'not ready',
        checks,
        ...shown
      })
    } catch (err) {
      next(err)
    }
  })
  routes(app)
  app.use((req, res) => sendError(res, NOT_FOUND))
  app.use((/** @type {Error & { status: number }} */ err, /** @type {import('express').Request} */ req,
    /** @type {import('express').Response} */ res, /** @type {import('express').NextFunction} */ next) => {
    // status: set by express and body-parser on their HTTP errors; undefined on others, which compares false
    if (err.status >= 400 && err.status < 500) return sendError(res, BAD_REQUEST)
    logger.error({ err }, 'admin app error')
    sendError(res, err)
  })
  return app
}

const NOT_FOUND = Object.freeze(new ERRORS.NOT_FOUND())
const BAD_REQUEST = Object.freeze(new ERRORS.BAD_REQUEST())

module.exports = { createAdminApp }
