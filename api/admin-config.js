'use strict'

const crypto = require('node:crypto')
const express = require('express')
const { findCell } = require('../lib/hbase')
const { FIRST_ID_ROW } = require('../lib/config/endpoint-state')

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
const KEY_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/
const MAX_BODY_BYTES = 16 * 1024
const MAX_DEPTH = 4
const MAX_STRING = 1024
const MAX_LIST = 1000

/**
 * Checks a toggles object: keys are short identifiers, values are booleans, finite numbers,
 * short strings, null or nested objects (depth-limited). Arrays are allowed for strings/numbers.
 * @param {unknown} value
 * @returns {string|null} the first problem, naming the key path, or null when valid
 */
function validateToggles (value, path = 'body', depth = 0) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${path} must be a JSON object`
  if (depth >= MAX_DEPTH) return `${path} nests deeper than ${MAX_DEPTH} levels`
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key}`
    if (!KEY_PATTERN.test(key) || key === '__proto__') return `${path} has an invalid key (keys are 1-64 of A-Z a-z 0-9 _ . -)`
    if (v === null || typeof v === 'boolean') continue
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${at} must be a finite number`
      continue
    }
    if (typeof v === 'string') {
      if (v.length > MAX_STRING) return `${at} is longer than ${MAX_STRING} characters`
      continue
    }
    if (Array.isArray(v)) {
      if (v.length > 100 || !v.every((x) => (typeof x === 'string' && x.length <= MAX_STRING) || (typeof x === 'number' && Number.isFinite(x)))) {
        return `${at} must be an array of at most 100 strings or numbers`
      }
      continue
    }
    const nested = validateToggles(v, at, depth + 1)
    if (nested) return nested
  }
  return null
}

/**
 * Bearer-token check in constant time: both sides are hashed first so their lengths never leak.
 * @param {string} token the configured token
 * @returns {(header: string|undefined) => boolean}
 */
function bearerChecker (token) {
  const expected = crypto.createHash('sha256').update(token).digest()
  return (header) => {
    const match = typeof header === 'string' && /^Bearer (.+)$/.exec(header)
    const given = crypto.createHash('sha256').update(match ? match[1] : '').digest()
    return crypto.timingSafeEqual(given, expected) && Boolean(match)
  }
}

function sendError (res, status, code, message) {
  res.status(status).set('Cache-Control', 'no-store').json({ error: { status, code, message } })
}

/**
 * The toggle admin API (mounted on the admin port):
 *   GET    /admin/config            list ids (?start=&limit=)
 *   GET    /admin/config/:id        the stored toggles and version
 *   PUT    /admin/config/:id        replace the toggles (JSON object body)
 *   DELETE /admin/config/:id        remove the id (it then gets the endpoint default)
 *   GET    /admin/endpoints         every endpoint and whether this process serves it
 *   PUT    /admin/endpoints/:name   { "enabled": boolean } switch an endpoint on or off (stored
 *                                   in HBase: every host follows within its poll interval)
 * All require `Authorization: Bearer <BEACON_ADMIN_TOKEN>`; without a configured token the API
 * is off (404). Every change writes one audit log line and calls `onConfigChange(id)` /
 * `onEndpointChange(name, enabled)` so caches can be invalidated.
 *
 * @param {object} options
 * @param {string|null} options.token
 * @param {import('../lib/hbase').HBaseClient} options.client
 * @param {{ table: string, family: string, qualifier: string }} options.store
 * @param {object} options.logger pino logger (audit lines)
 * @param {(id: string) => void} [options.onConfigChange]
 * @param {{ has: (name: string) => boolean, list: () => Array<{ name: string, enabled: boolean }>,
 *   set: (name: string, enabled: boolean) => Promise<void>|void }} [options.endpoints]
 * @returns {import('express').Router}
 */
function createConfigAdminRouter ({ token, client, store, logger, onConfigChange, endpoints }) {
  const router = express.Router()
  if (!token) {
    router.use('/admin', (req, res) => sendError(res, 404, 'ADMIN_DISABLED', 'the admin API is off: set BEACON_ADMIN_TOKEN to enable it'))
    return router
  }
  const authorized = bearerChecker(token)
  const column = `${store.family}:${store.qualifier}`

  router.use('/admin', (req, res, next) => {
    if (!authorized(req.headers.authorization)) {
      res.set('WWW-Authenticate', 'Bearer realm="beacon-admin"')
      sendError(res, 401, 'UNAUTHORIZED', 'a valid bearer token is required')
      return
    }
    next()
  })
  router.use('/admin', express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true }))

  const audit = (req, action, details) => logger.info({ audit: true, action, ip: req.socket.remoteAddress, ...details }, `admin ${action}`)
  const checkId = (req, res) => {
    if (ID_PATTERN.test(req.params.id)) return true
    sendError(res, 400, 'BAD_ID', 'id must be 1-64 of A-Z a-z 0-9 _ -')
    return false
  }

  router.get('/admin/config', async (req, res, next) => {
    try {
      const limit = Math.min(MAX_LIST, Math.max(1, Number(req.query.limit) || 100))
      // Reserved rows (endpoint switches) sort before every id: start past them.
      const start = typeof req.query.start === 'string' && req.query.start > FIRST_ID_ROW ? req.query.start : FIRST_ID_ROW
      const ids = []
      for await (const row of client.scan(store.table, { startRow: start, limit, keysOnly: true, caching: limit })) ids.push(row.row.toString())
      res.set('Cache-Control', 'no-store').json({ ids, next: ids.length === limit ? ids[ids.length - 1] + '\u0000' : null })
    } catch (err) {
      next(err)
    }
  })

  router.get('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    try {
      const row = await client.get(store.table, req.params.id, { columns: [column] })
      const cell = findCell(row, store.family, store.qualifier)
      if (!cell) return sendError(res, 404, 'NOT_FOUND', 'no config stored for this id')
      res.set('Cache-Control', 'no-store').json({ id: req.params.id, version: cell.timestamp, config: JSON.parse(cell.value.toString('utf8')) })
    } catch (err) {
      next(err)
    }
  })

  router.put('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    const problem = validateToggles(req.body)
    if (problem) return sendError(res, 400, 'BAD_CONFIG', problem)
    try {
      const json = JSON.stringify(req.body)
      await client.put(store.table, req.params.id, { [store.family]: { [store.qualifier]: json } })
      if (onConfigChange) onConfigChange(req.params.id)
      audit(req, 'config.set', { id: req.params.id, bytes: Buffer.byteLength(json) })
      res.set('Cache-Control', 'no-store').json({ id: req.params.id, config: req.body })
    } catch (err) {
      next(err)
    }
  })

  router.delete('/admin/config/:id', async (req, res, next) => {
    if (!checkId(req, res)) return
    try {
      await client.delete(store.table, req.params.id)
      if (onConfigChange) onConfigChange(req.params.id)
      audit(req, 'config.delete', { id: req.params.id })
      res.status(204).end()
    } catch (err) {
      next(err)
    }
  })

  router.get('/admin/endpoints', (req, res) => {
    res.set('Cache-Control', 'no-store').json({ endpoints: endpoints ? endpoints.list() : [] })
  })

  router.put('/admin/endpoints/:name', async (req, res, next) => {
    if (!endpoints || !endpoints.has(req.params.name)) return sendError(res, 404, 'NOT_FOUND', 'no such endpoint')
    if (!req.body || typeof req.body.enabled !== 'boolean' || Object.keys(req.body).length !== 1) {
      return sendError(res, 400, 'BAD_REQUEST', 'body must be {"enabled": true|false}')
    }
    try {
      await endpoints.set(req.params.name, req.body.enabled)
      audit(req, req.body.enabled ? 'endpoint.enable' : 'endpoint.disable', { endpoint: req.params.name })
      res.set('Cache-Control', 'no-store').json({ endpoint: req.params.name, enabled: req.body.enabled })
    } catch (err) {
      next(err)
    }
  })

  // Store errors are 503 (retryable), body-parser errors keep their 4xx.
  router.use('/admin', (err, req, res, next) => {
    if (err.type === 'entity.too.large') return sendError(res, 413, 'BODY_TOO_LARGE', `the body exceeds ${MAX_BODY_BYTES} bytes`)
    if (err.status >= 400 && err.status < 500) return sendError(res, err.status, 'BAD_REQUEST', 'the body must be valid JSON')
    logger.warn({ code: err.code, message: err.message }, 'admin API store call failed')
    sendError(res, 503, 'STORE_UNAVAILABLE', 'the config store is unavailable; retry shortly')
  })
  return router
}

module.exports = { createConfigAdminRouter, validateToggles, bearerChecker }
