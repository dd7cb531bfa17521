'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { HBaseError } = require('@beacon/hbase-client')
const { parseDuration } = require('../../config/duration')
const { parseEraseQuery } = require('../../logging/query/params')
const { eraseId } = require('../../logging/erase')
const { sendError } = require('../error-body')

const RETENTION_KEYS = Object.freeze(['retention', 'rollupRetention'])

/**
 * The access log's lifecycle on the admin port (behind the admin token guard of
 * api/admin/toggles.js, which also parses JSON bodies):
 *   GET  /admin/log/retention   the TTLs of the log and rollup tables, and what the settings say
 *   PUT  /admin/log/retention   {"retention":"30d","rollupRetention":"400d"} (either or both):
 *                               sets the tables' TTLs (logging/retention.js)
 *   POST /admin/log/erase?id=&from=&to=&dryRun=1
 *                               deletes every row of one id in the range and counts its rollup
 *                               minutes again (logging/erase.js); dryRun only counts
 * Bad input is a 400 from the error table; HBase failing is a 503 (an erase is safe to run again).
 * Each change is one audit record; an erase's names the id and range it erased and how many rows,
 * never the erased data.
 *
 * @param {object} options
 * @param {{ retention: ReturnType<typeof import('../../logging/retention').createRetention>,
 *   target: import('../../logging/erase').EraseTarget }|null} options.lifecycle null when no HBase
 *   access log is configured (404 LOG_NOT_CONFIGURED)
 * @param {number} options.maxIdLength ids the data plane serves
 * @param {() => number} [options.now]
 * @param {import('./toggles').AuditRecorder} options.audit
 * @param {{ info: Function, warn: Function, error: Function }} options.logger
 * @param {() => void} [options.onRetentionSet] after a PUT set the TTLs: the other processes of this
 *   host read them again (api/propagation.js), so that their counts' horizon notes follow at once
 * @returns {import('express').Router}
 */
function createLogLifecycleRouter ({ lifecycle, maxIdLength, now = Date.now, audit, logger, onRetentionSet = () => {} }) {
  const router = express.Router()
  const paths = ['/admin/log/retention', '/admin/log/erase']
  if (!lifecycle) {
    router.all(paths, (req, res) => sendError(res, new ERRORS.LOG_NOT_CONFIGURED()))
    return router
  }
  const { retention, target } = lifecycle

  /**
   * HBase → 503 with its code; anything else → 500, logged.
   * @param {import('express').Response} res
   * @param {unknown} err
   * @param {string} what
   */
  const fail = (res, err, what) => {
    if (err instanceof HBaseError) {
      logger.warn({ code: err.code, message: err.message }, `access-log ${what} failed`)
      return sendError(res, new ERRORS.LOG_UNAVAILABLE(err.code), { withDetail: true })
    }
    logger.error({ err }, `access-log ${what} failed`)
    sendError(res, err)
  }

  router.get('/admin/log/retention', async (req, res) => {
    try {
      res.set('Cache-Control', 'no-store').json(await retention.describe({ fresh: true }))
    } catch (err) {
      fail(res, err, 'retention')
    }
  })

  router.put('/admin/log/retention', async (req, res) => {
    const change = retentionChange(req.body, target.rollupTable !== null)
    if (change instanceof Error) return sendError(res, change, { withDetail: true })
    try {
      const applied = await retention.apply(change)
      onRetentionSet()
      await audit(req, res, 'log.retention', 'log', change)
      res.set('Cache-Control', 'no-store').json(applied)
    } catch (err) {
      fail(res, err, 'retention')
    }
  })

  router.post('/admin/log/erase', async (req, res) => {
    let query
    try {
      query = parseEraseQuery(/** @type {Record<string, unknown>} */ (req.query), { now: now(), maxIdLength })
    } catch (err) {
      return sendError(res, err, { withDetail: true })
    }
    const started = Date.now()
    try {
      // Not stopped when the client goes away: the minutes it touched are counted again either way.
      const result = await eraseId(target, query)
      const range = { from: new Date(query.from).toISOString(), to: new Date(query.to).toISOString() }
      await audit(req, res, query.dryRun ? 'log.erase.dry-run' : 'log.erase', query.id, {
        ...range,
        found: result.found,
        deleted: result.deleted
      })
      res.set('Cache-Control', 'no-store').json({
        id: query.id,
        ...range,
        dryRun: query.dryRun,
        ...result,
        ms: Date.now() - started
      })
    } catch (err) {
      fail(res, err, 'erase')
    }
  })
  router.all(paths, (req, res) => {
    res.set('Allow', req.path.endsWith('/erase') ? 'POST' : 'GET, PUT')
    sendError(res, new ERRORS.METHOD_NOT_ALLOWED())
  })
  return router
}

/**
 * The change a PUT /admin/log/retention body asks for, or the 400 it gets.
 * @param {unknown} body
 * @param {boolean} rollups whether the log keeps rollups
 * @returns {{ retention?: string, rollupRetention?: string }|Error}
 */
function retentionChange (body, rollups) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return new ERRORS.BAD_RETENTION('the body must be a JSON object')
  }
  const keys = Object.keys(body)
  if (keys.length === 0 || keys.some((key) => !RETENTION_KEYS.includes(key))) {
    return new ERRORS.BAD_RETENTION(`the body takes ${RETENTION_KEYS.join(' and/or ')}`)
  }
  const change = /** @type {Record<string, unknown>} */ (body)
  for (const key of keys) {
    if (parseDuration(change[key]) === undefined) return new ERRORS.BAD_RETENTION(`${key} is not one`)
  }
  if (change.rollupRetention !== undefined && !rollups) {
    return new ERRORS.LOG_NOT_CONFIGURED('this log keeps no rollups')
  }
  return /** @type {{ retention?: string, rollupRetention?: string }} */ ({ ...change })
}

module.exports = { createLogLifecycleRouter, retentionChange }
