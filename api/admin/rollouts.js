'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { parseRollout } = require('../../lib/toggles/rollout')
const { whoOf } = require('./toggles')
const { validateToggles } = require('../../lib/toggles/validate')
const { sendError } = require('../error-body')

/**
 * The rollout admin API (mounted after the toggle router, whose guard and JSON body parser cover
 * `/admin`):
 *   GET    /admin/endpoints/:name/rollout   the endpoint's rollout and its version
 *   PUT    /admin/endpoints/:name/rollout   set it (body: the rollout, lib/toggles/rollout.js)
 *   DELETE /admin/endpoints/:name/rollout   remove it (ids without a row get defaultConfig again)
 * A change is stored in HBase (every host follows within its poll interval, a restart keeps it)
 * and spread on this host at once; each is one audit record.
 *
 * @param {object} options
 * @param {() => Error} options.unknownEndpoint the answer to a name no endpoint has (it lists the names)
 * @param {{ kind: (name: string) => 'none'|'fixed'|'ok',
 *   get: (name: string) => { rollout: import('../../lib/toggles/rollout').Rollout, at: number|null }|null }} options.rollouts
 *   what this process serves (api/propagation.js)
 * @param {ReturnType<typeof import('./changes').createConfigChanges>} options.changes rollout writes, with
 *   their history and audit records
 * @param {import('pino').Logger} options.logger store failures
 * @returns {import('express').Router}
 */
function createRolloutAdminRouter ({ rollouts, changes, logger, unknownEndpoint }) {
  const router = express.Router()
  const path = '/admin/endpoints/:name/rollout'

  /** @type {(req: import('express').Request, res: import('express').Response) => boolean} */
  const checkEndpoint = (req, res) => {
    const kind = rollouts.kind(String(req.params.name))
    if (kind === 'ok') return true
    if (kind === 'none') sendError(res, unknownEndpoint(), { withDetail: true })
    else sendError(res, FIXED_CONFIG)
    return false
  }

  /** A failed store write: a retryable 503, logged here once. @param {import('express').Response} res @param {any} err */
  const fail = (res, err) => {
    logger.warn({ code: err.code, message: err.message }, 'admin API rollout store call failed')
    sendError(res, new ERRORS.STORE_UNAVAILABLE())
  }

  router.get(path, (req, res) => {
    if (!checkEndpoint(req, res)) return
    const current = rollouts.get(String(req.params.name))
    if (!current) return sendError(res, new ERRORS.ROLLOUT_NOT_FOUND())
    res.set('Cache-Control', 'no-store').json({ endpoint: req.params.name, version: current.at, rollout: current.rollout })
  })

  router.put(path, async (req, res) => {
    if (!checkEndpoint(req, res)) return
    const parsed = parseRollout(req.body, validateToggles)
    if ('error' in parsed) return sendError(res, new ERRORS.BAD_ROLLOUT(parsed.error), { withDetail: true })
    try {
      const at = await changes.setRollout(whoOf(req, res), String(req.params.name), parsed.rollout)
      res.set('Cache-Control', 'no-store').json({ endpoint: req.params.name, version: at, rollout: parsed.rollout })
    } catch (err) {
      fail(res, err)
    }
  })

  router.delete(path, async (req, res) => {
    if (!checkEndpoint(req, res)) return
    try {
      await changes.deleteRollout(whoOf(req, res), String(req.params.name))
      res.status(204).end()
    } catch (err) {
      fail(res, err)
    }
  })
  return router
}

const FIXED_CONFIG = Object.freeze(new ERRORS.FIXED_CONFIG())

module.exports = { createRolloutAdminRouter }
