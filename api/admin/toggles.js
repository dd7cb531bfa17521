'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { sendError } = require('../error-body')
const { validateToggles } = require('../../lib/toggles/validate')

const MAX_BODY_BYTES = 16 * 1024
const MAX_LIST = 1000

/**
 * The toggle admin API (mounted on the admin port):
 *   GET    /admin/config            list ids (?start=&limit=)
 *   GET    /admin/config/:id        the stored toggles and version
 *   PUT    /admin/config/:id        replace the toggles (JSON object body)
 *   DELETE /admin/config/:id        remove the id (it then gets the endpoint default)
 *   GET    /admin/endpoints         every endpoint and whether this process serves it
 *   PUT    /admin/endpoints/:name   { "enabled": boolean } switch an endpoint on or off (stored
 *                                   in HBase: every host follows within its poll interval)
 * All require `Authorization: Bearer <token>` of one of the admin credentials
 * (api/admin/credentials.js), whose name is the request's actor (`res.locals.actor`, for the
 * routers mounted after this one); without a credential the API is off (404 ADMIN_DISABLED).
 * Every change is kept in the history and is one audit record (api/admin/changes.js).
 *
 * @param {object} options
 * @param {ReturnType<typeof import('./credentials').createCredentials>} options.credentials
 * @param {import('express').RequestHandler} options.guard the token check (./bearer-guard.js adminGuard)
 * @param {() => Error} options.unknownEndpoint the answer to a name no endpoint has (it lists the names)
 * @param {AuditRecorder} options.audit records the endpoint switches
 * @param {ReturnType<typeof import('./changes').createConfigChanges>} options.changes config writes, with
 *   their history and audit records
 * @param {ReturnType<typeof import('../../lib/toggles/store').createToggleStore>} options.store
 * @param {number} options.maxIdLength ids the data plane serves (settings.limits.maxIdLength)
 * @param {import('pino').Logger} options.logger audit lines, store failures
 * @param {{ has: (name: string) => boolean, list: () => Array<{ name: string, enabled: boolean }>,
 *   set: (name: string, enabled: boolean) => Promise<void> }} options.endpoints
 * @returns {import('express').Router}
 */
function createToggleAdminRouter ({ credentials, guard, unknownEndpoint, audit, changes, store, maxIdLength, logger, endpoints }) {
  const router = express.Router()
  if (!credentials.any) {
    router.use('/admin', (req, res) => sendError(res, ERRORS_ADMIN_DISABLED))
    return router
  }

  router.use('/admin', guard)
  const json = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true })
  // An import's batches are larger: api/admin/import-routes.js parses those.
  router.use('/admin', (req, res, next) => (req.path.startsWith('/import/') ? next() : json(req, res, next)))
  /** @type {(req: import('express').Request, res: import('express').Response) => boolean} */
  const checkId = (req, res) => {
    if (isSafeName(req.params.id, maxIdLength)) return true
    sendError(res, new ERRORS.BAD_ID())
    return false
  }

  router.get('/admin/config', async (req, res, next) => {
    try {
      const limit = Math.min(MAX_LIST, Math.max(1, Number(req.query.limit) || 100))
      const ids = await store.listIds({
        start: typeof req.query.start === 'string' ? req.query.start : undefined,
        limit
      })
      res.set('Cache-Control', 'no-store').json({
        ids,
        // The next page's `start`: the smallest key after the last id that an id can be ('-' is
        // the lowest character ids may hold), so it is a plain word a shell passes as it is.
        next: ids.length === limit ? ids[ids.length - 1] + '-' : null
      })
    } catch (err) {
      next(err)
    }
  })

  router.get('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    try {
      const stored = await store.read(req.params.id)
      if (!stored || 'invalid' in stored) return sendError(res, new ERRORS.CONFIG_NOT_FOUND())
      res.set('Cache-Control', 'no-store').json({
        id: req.params.id,
        version: stored.timestamp,
        config: stored.toggles
      })
    } catch (err) {
      next(err)
    }
  })

  router.put('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    const problem = validateToggles(req.body)
    if (problem) return sendError(res, new ERRORS.BAD_CONFIG(problem), { withDetail: true })
    try {
      await changes.setConfig(whoOf(req, res), req.params.id, req.body)
      res.set('Cache-Control', 'no-store').json({ id: req.params.id, config: req.body })
    } catch (err) {
      next(err)
    }
  })

  router.delete('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    try {
      await changes.deleteConfig(whoOf(req, res), req.params.id)
      res.status(204).end()
    } catch (err) {
      next(err)
    }
  })

  router.get('/admin/endpoints', (req, res) => {
    res.set('Cache-Control', 'no-store').json({ endpoints: endpoints.list() })
  })

  router.put('/admin/endpoints/:name', async (req, res, next) => {
    if (!endpoints.has(req.params.name)) return sendError(res, unknownEndpoint(), { withDetail: true })
    if (!req.body || typeof req.body.enabled !== 'boolean' || Object.keys(req.body).length !== 1) {
      return sendError(res, new ERRORS.BAD_REQUEST('body must be {"enabled": true|false}'), { withDetail: true })
    }
    try {
      await endpoints.set(req.params.name, req.body.enabled)
      await audit(req, res, req.body.enabled ? 'endpoint.enable' : 'endpoint.disable', req.params.name)
      res.set('Cache-Control', 'no-store').json({ endpoint: req.params.name, enabled: req.body.enabled })
    } catch (err) {
      next(err)
    }
  })

  // Body-parser errors keep their 4xx; a failed store call is a retryable 503, logged here once.
  // status: set by body-parser on its HTTP errors; undefined on others, which compares false
  router.use('/admin', (/** @type {Error & { type?: string, status: number, code?: string }} */ err,
    /** @type {import('express').Request} */ req, /** @type {import('express').Response} */ res,
    /** @type {import('express').NextFunction} */ next) => {
    if (err.type === 'entity.too.large') {
      return sendError(res, new ERRORS.BODY_TOO_LARGE(`it exceeds ${MAX_BODY_BYTES} bytes`), { withDetail: true })
    }
    if (err.status >= 400 && err.status < 500) return sendError(res, new ERRORS.BAD_BODY())
    logger.warn({ code: err.code, message: err.message }, 'admin API store call failed')
    sendError(res, new ERRORS.STORE_UNAVAILABLE())
  })
  return router
}

const ERRORS_ADMIN_DISABLED = Object.freeze(new ERRORS.ADMIN_DISABLED())

/**
 * The actor and address of an authorized admin request (its actor set by the guard above).
 * @param {import('express').Request} req
 * @param {import('express').Response} res
 * @returns {import('./changes').Who}
 */
function whoOf (req, res) {
  return { actor: res.locals.actor, ip: req.socket.remoteAddress }
}

/**
 * Records one admin write of a request (its actor, its address) in the audit trail.
 * @typedef {(req: import('express').Request, res: import('express').Response, action: string, target: string,
 *   change?: Record<string, unknown>) => Promise<unknown>} AuditRecorder
 */

module.exports = { createToggleAdminRouter, whoOf }
