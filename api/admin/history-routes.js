'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { parseTime } = require('../../logging/query/time')
const { whoOf } = require('./toggles')
const { sendError } = require('../error-body')

const MAX_LIMIT = 1000

/**
 * History and rollback on the admin port (behind the admin token guard of api/admin/toggles.js):
 *   GET  /admin/config/:id/history?limit=            an id's config changes, newest first
 *   POST /admin/config/:id/rollback?to=<version|time>  restore it as of then (no `to`: undo the newest change)
 *   GET  /admin/endpoints/:name/rollout/history      the same for an endpoint's rollout
 *   POST /admin/endpoints/:name/rollout/rollback?to=
 * A version is a change's epoch ms as history lists it; a time is what the log queries take (`-1h`,
 * ISO, epoch ms): the state as of the newest change at or before it.
 *
 * @param {object} options
 * @param {() => Error} options.unknownEndpoint the answer to a name no endpoint has (it lists the names)
 * @param {ReturnType<typeof import('./changes').createConfigChanges>} options.changes
 * @param {(name: string) => 'none'|'fixed'|'ok'} options.rolloutKind whether the endpoint takes a rollout
 * @param {number} options.maxIdLength
 * @param {() => number} [options.now]
 * @param {{ warn: Function }} options.logger
 * @returns {import('express').Router}
 */
function createHistoryRouter ({ changes, rolloutKind, maxIdLength, now = Date.now, logger, unknownEndpoint }) {
  const router = express.Router()

  /**
   * @param {'config'|'rollout'} kind
   * @param {import('express').Request} req
   * @param {import('express').Response} res
   * @returns {string|null} the target, or null once refused
   */
  function targetOf (kind, req, res) {
    const target = String(kind === 'config' ? req.params.id : req.params.name)
    if (kind === 'config') {
      if (isSafeName(target, maxIdLength)) return target
      sendError(res, new ERRORS.BAD_ID())
      return null
    }
    const known = rolloutKind(target)
    if (known === 'ok') return target
    if (known === 'none') sendError(res, unknownEndpoint(), { withDetail: true })
    else sendError(res, new ERRORS.FIXED_CONFIG())
    return null
  }

  /** @param {import('express').Response} res @param {any} err */
  const fail = (res, err) => {
    logger.warn({ code: err.code, message: err.message }, 'admin API history call failed')
    sendError(res, new ERRORS.STORE_UNAVAILABLE())
  }

  for (const [kind, base] of /** @type {const} */ ([['config', '/admin/config/:id'], ['rollout', '/admin/endpoints/:name/rollout']])) {
    const named = kind === 'config' ? 'id' : 'endpoint'
    router.get(`${base}/history`, async (req, res) => {
      const target = targetOf(kind, req, res)
      if (target === null) return
      const limit = req.query.limit === undefined ? 100 : Number(req.query.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        return sendError(res, new ERRORS.BAD_REQUEST(`limit must be a whole number from 1 to ${MAX_LIMIT}`), { withDetail: true })
      }
      try {
        res.set('Cache-Control', 'no-store').json({ [named]: target, history: await changes.history(kind, target, limit) })
      } catch (err) {
        fail(res, err)
      }
    })

    router.post(`${base}/rollback`, async (req, res) => {
      const target = targetOf(kind, req, res)
      if (target === null) return
      let to = null
      try {
        if (req.query.to !== undefined) to = parseTime(req.query.to, now(), 'to')
      } catch (err) {
        return sendError(res, err, { withDetail: true })
      }
      try {
        const done = await changes.rollback(whoOf(req, res), kind, target, to)
        if (done === null) return sendError(res, new ERRORS.NO_HISTORY())
        res.set('Cache-Control', 'no-store').json({ [named]: target, [kind]: done.value, rolledBackTo: done.to, undone: done.undone })
      } catch (err) {
        fail(res, err)
      }
    })
  }
  return router
}

module.exports = { createHistoryRouter }
