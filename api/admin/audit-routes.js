'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { parseTimeRange } = require('../../logging/query/time')
const { sendError } = require('../error-body')

const MAX_LIMIT = 10000
const MAX_TARGET = 256

/**
 * `GET /admin/audit?from=&to=&actor=&target=&limit=`: the audit trail of a time range, oldest
 * first (api/admin/audit.js), behind the admin token guard of api/admin/toggles.js. Times as the
 * log queries take them (`-1d`, ISO, epoch ms: logging/query/time.js); `limit` 1..10000, 1000 by
 * default; `truncated` says it cut the answer.
 *
 * @param {{ trail: ReturnType<typeof import('./audit').createAuditTrail>, now?: () => number,
 *   logger: { warn: Function } }} options
 * @returns {import('express').Router}
 */
function createAuditRouter ({ trail, now = Date.now, logger }) {
  const router = express.Router()
  router.get('/admin/audit', async (req, res) => {
    const q = /** @type {Record<string, unknown>} */ (req.query)
    let range
    try {
      range = parseTimeRange({ from: q.from, to: q.to }, now())
    } catch (err) {
      return sendError(res, err, { withDetail: true })
    }
    const actor = q.actor === undefined ? null : q.actor
    const target = q.target === undefined ? null : q.target
    const limit = q.limit === undefined ? 1000 : Number(q.limit)
    if (actor !== null && !isSafeName(actor, 64)) return badQuery(res, 'actor must be a credential name (1-64 of A-Z a-z 0-9 _ -)')
    if (target !== null && (typeof target !== 'string' || target.length === 0 || target.length > MAX_TARGET)) {
      return badQuery(res, `target must be 1-${MAX_TARGET} characters`)
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      return badQuery(res, `limit must be a whole number from 1 to ${MAX_LIMIT}`)
    }
    try {
      const { records, truncated } = await trail.query({
        ...range,
        actor: /** @type {string|null} */ (actor),
        target: /** @type {string|null} */ (target),
        limit
      })
      res.set('Cache-Control', 'no-store').json({ from: range.from, to: range.to, records, truncated })
    } catch (err) {
      logger.warn({ code: /** @type {any} */ (err).code, message: /** @type {Error} */ (err).message }, 'audit trail read failed')
      sendError(res, new ERRORS.STORE_UNAVAILABLE())
    }
  })
  return router
}

/** @param {import('express').Response} res @param {string} why */
function badQuery (res, why) {
  sendError(res, new ERRORS.BAD_AUDIT_QUERY(why), { withDetail: true })
}

module.exports = { createAuditRouter }
