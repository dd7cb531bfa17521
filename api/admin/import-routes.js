'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { validateToggles } = require('../../lib/toggles/validate')
const { whoOf } = require('./toggles')
const { sendError } = require('../error-body')

/** Items per batch at most, and the body that carries them. */
const MAX_BATCH = 5000
const MAX_BATCH_BYTES = 16 * 1024 * 1024

/**
 * Bulk load and export of configs on the admin port (behind the admin token guard of
 * api/admin/toggles.js, which leaves these bodies to the parser here):
 *   POST /admin/import/config        {"items": [{"id", "config"}, …]}: one batch, checked in full
 *                                    first (400 names the first bad item, nothing is written), then
 *                                    written in one multi-put and kept in the history; safe to send again
 *   POST /admin/import/config/done   {"file", "lines", "written", "ms"}: the import's one audit record
 *   GET  /admin/export/config?start= every id's config from `start` on, NDJSON `{"id","config"}`, streamed
 * `beacon config import|export` (bin/config-import.js) drive them.
 *
 * @param {object} options
 * @param {ReturnType<typeof import('./changes').createConfigChanges>} options.changes
 * @param {ReturnType<typeof import('../../lib/toggles/store').createToggleStore>} options.store
 * @param {number} options.maxIdLength
 * @param {{ warn: Function }} options.logger
 * @returns {import('express').Router}
 */
function createImportRouter ({ changes, store, maxIdLength, logger }) {
  const router = express.Router()
  const json = express.json({ limit: MAX_BATCH_BYTES, type: () => true })

  /** @param {import('express').Response} res @param {any} err */
  const fail = (res, err) => {
    logger.warn({ code: err.code, message: err.message }, 'admin API import/export store call failed')
    sendError(res, new ERRORS.STORE_UNAVAILABLE())
  }

  router.post('/admin/import/config', json, async (req, res) => {
    const items = req.body && req.body.items
    if (!Array.isArray(items) || items.length === 0 || items.length > MAX_BATCH) {
      return badImport(res, `the body must be {"items": [...]} with 1-${MAX_BATCH} items`)
    }
    for (const [i, item] of items.entries()) {
      const problem = itemProblem(item, maxIdLength)
      if (problem) return badImport(res, `items[${i}]: ${problem}`)
    }
    try {
      const written = await changes.importBatch(whoOf(req, res), items.map((item) => ({ id: item.id, toggles: item.config })))
      res.set('Cache-Control', 'no-store').json({ written })
    } catch (err) {
      fail(res, err)
    }
  })

  router.post('/admin/import/config/done', json, async (req, res) => {
    const { file, lines, written, ms } = req.body || {}
    if (typeof file !== 'string' || file.length > 4096 || ![lines, written, ms].every(Number.isSafeInteger)) {
      return badImport(res, 'the body must be {"file": string, "lines": n, "written": n, "ms": n}')
    }
    await changes.importDone(whoOf(req, res), { file, lines, written, ms })
    res.set('Cache-Control', 'no-store').json({ recorded: true })
  })

  router.get('/admin/export/config', async (req, res) => {
    const start = typeof req.query.start === 'string' ? req.query.start : undefined
    res.set({ 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-store' })
    let exported = 0
    try {
      for await (const page of store.scanRows({ start })) {
        const lines = page.filter(({ row }) => row && 'toggles' in row)
          .map(({ id, row }) => JSON.stringify({ id, config: /** @type {{ toggles: object }} */ (row).toggles }) + '\n')
        exported += lines.length
        if (lines.length && !res.write(lines.join(''))) await new Promise((resolve) => res.once('drain', resolve))
        if (res.destroyed) return
      }
      res.end()
    } catch (err) {
      if (exported === 0 && !res.headersSent) return fail(res, err)
      // Rows went out already: the stream is cut, so the client sees a short, not a complete, export.
      logger.warn({ code: /** @type {any} */ (err).code, exported }, 'config export cut short')
      res.destroy(/** @type {Error} */ (err))
    }
  })
  return router
}

/**
 * @param {unknown} item
 * @param {number} maxIdLength
 * @returns {string|null}
 */
function itemProblem (item, maxIdLength) {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return 'must be {"id": …, "config": {…}}'
  const { id, config } = /** @type {Record<string, unknown>} */ (item)
  if (!isSafeName(id, maxIdLength)) return `id must be 1-${maxIdLength} of A-Z a-z 0-9 _ -`
  return validateToggles(config, 'config')
}

/** @param {import('express').Response} res @param {string} why */
function badImport (res, why) {
  sendError(res, new ERRORS.BAD_CONFIG(why), { withDetail: true })
}

module.exports = { createImportRouter, itemProblem, MAX_BATCH }
