'use strict'

const { once } = require('node:events')
const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { HBaseError } = require('@beacon/hbase-client')
const { formatter } = require('../../logging/query')
const { sendError } = require('../error-body')

/** Lines are written in chunks of about this much, or after FLUSH_MS, whichever comes first. */
const CHUNK_CHARS = 16 * 1024
const FLUSH_MS = 50

/**
 * The access log's read side on the admin port (logging/query/):
 *   GET /admin/log/scan?from=&to=&endpoint=&id=&status=&limit=&after=&format=ndjson|csv
 *       the matching rows in time order, streamed as they are read (NDJSON or CSV)
 *   GET /admin/log/count?from=&to=&endpoint=&id=&status=&by=endpoint|id|status|minute
 *       exact counts: { total, groups?, from, to, ... }
 * Mounted behind the admin token guard (api/admin/toggles.js guards all of /admin). A bad
 * parameter is a 400 from the error table naming the parameter; HBase failing is a 503
 * (before the first row; later, the response is cut, so a reader never takes a partial scan for
 * a whole one). A client that goes away ends the query: every bucket's scanner is closed.
 *
 * @param {object} options
 * @param {ReturnType<typeof import('../../logging/query').createLogQuery>|null} options.logQuery
 *   null when no HBase access log is configured (404 LOG_NOT_CONFIGURED)
 * @param {{ warn: Function, error: Function }} options.logger
 * @returns {import('express').Router}
 */
function createLogQueryRouter ({ logQuery, logger }) {
  const router = express.Router()
  if (!logQuery) {
    router.get(
      ['/admin/log/scan', '/admin/log/count', '/admin/log/check'],
      (req, res) => sendError(res, new ERRORS.LOG_NOT_CONFIGURED())
    )
    return router
  }

  /**
   * Parses, or answers the 400 and returns null.
   * @param {'scan'|'count'|'check'} kind
   * @param {import('express').Request} req
   * @param {import('express').Response} res
   */
  const parse = (kind, req, res) => {
    try {
      // logging/query/index.js types kind as 'scan'|'count'; its parser takes 'check' too.
      return logQuery.parse(/** @type {'scan'|'count'} */ (kind), /** @type {Record<string, unknown>} */ (req.query))
    } catch (err) {
      sendError(res, err, { withDetail: true })
      return null
    }
  }

  /**
   * Answers a failed query: HBase → 503 with its code; a count past its bound → 422 saying
   * how to narrow it; anything else → 500, logged.
   * @param {import('express').Response} res
   * @param {unknown} err
   */
  const fail = (res, err) => {
    if (err instanceof HBaseError) {
      logger.warn({ code: err.code, message: err.message }, 'access-log query failed')
      return sendError(res, new ERRORS.LOG_UNAVAILABLE(err.code), { withDetail: true })
    }
    if (err instanceof ERRORS.TOO_MANY_IDS) return sendError(res, err, { withDetail: true })
    logger.error({ err }, 'access-log query failed')
    sendError(res, err)
  }

  router.get('/admin/log/scan', async (req, res) => {
    const query = parse('scan', req, res)
    if (!query) return
    const rows = logQuery.scan(query)
    const gone = closedSignal(res)
    let first
    try {
      // The first row (or the end) before the status line: a scan that cannot start is a 503.
      first = await rows.next()
    } catch (err) {
      return fail(res, err)
    }
    if (gone.closed) {
      await rows.return()
      return
    }
    const { contentType, header, line } = formatter(query.format)
    res.status(200).set({
      'Content-Type': contentType,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff'
    })
    const out = chunkedWriter(res, header)
    try {
      for (let next = first; !next.done; next = await rows.next()) {
        out.add(line(/** @type {import('../../logging/query/rows').LogRecord} */ (next.value)))
        if (res.writableNeedDrain) await gone.drainedOrClosed()
        if (gone.closed) break
      }
      out.end()
    } catch (e) {
      const err = /** @type {Error & { code?: string }} */ (e)
      logger.warn({ code: err.code, message: err.message }, 'access-log scan failed mid-stream; response cut')
      res.destroy()
    } finally {
      out.stop()
      await rows.return()
    }
  })

  router.get('/admin/log/count', async (req, res) => {
    const query = parse('count', req, res)
    if (!query) return
    const gone = closedSignal(res)
    const started = Date.now()
    try {
      const result = await logQuery.count(query, { signal: gone.signal })
      res.set('Cache-Control', 'no-store').json({
        total: result.total,
        ...(result.unique ? { unique: true } : {}),
        // A name no setting declares (a typo, or an endpoint since removed): said, with the names.
        ...(query.endpoint !== undefined && !logQuery.endpoints.includes(query.endpoint)
          ? { unknownEndpoint: true, endpoints: logQuery.endpoints }
          : {}),
        ...(result.groups ? { by: query.by, groups: result.groups } : {}),
        ...(result.truncated ? { truncated: true } : {}),
        from: new Date(query.from).toISOString(),
        to: new Date(query.to).toISOString(),
        filters: filtersOf(query),
        scanned: result.scanned,
        // Where the answer came from: whole minutes from the rollups, or rows scanned.
        source: result.rollupMinutes !== undefined
          ? { rollupMinutes: result.rollupMinutes, scannedMinutes: result.scannedMinutes }
          : 'scan',
        // Whether rows the retention took may be missing (logging/query/horizon.js).
        ...(result.horizon ? { horizon: result.horizon } : {}),
        ms: Date.now() - started
      })
    } catch (err) {
      if (gone.closed) return
      fail(res, err)
    }
  })
  // The rollups against the raw rows (logging/rollup/): every minute of the range counted both
  // ways. `exact` is true when they agree but for minutes still marked (being counted again).
  router.get('/admin/log/check', async (req, res) => {
    const query = parse('check', req, res)
    if (!query) return
    if (!logQuery.rollups) {
      return sendError(res, new ERRORS.LOG_NOT_CONFIGURED('this log keeps no rollups'), { withDetail: true })
    }
    const started = Date.now()
    try {
      const result = await logQuery.check(query)
      const marked = new Set(result.marked.map((m) => new Date(m).toISOString()))
      res.set('Cache-Control', 'no-store').json({
        exact: result.unmarkedDifferences === 0,
        from: new Date(query.from).toISOString(),
        to: new Date(query.to).toISOString(),
        minutes: result.minutes,
        rows: result.rows,
        marked: [...marked],
        parked: result.parked.map((m) => new Date(m).toISOString()),
        // Every difference is counted; the first ones are listed.
        differenceCount: result.differenceCount,
        differences: result.differences.map((d) => ({ ...d, marked: marked.has(d.minute) })),
        ms: Date.now() - started
      })
    } catch (err) {
      fail(res, err)
    }
  })
  return router
}

/** @param {{ endpoint?: unknown, id?: unknown, status?: unknown }} query */
function filtersOf ({ endpoint, id, status }) {
  return Object.fromEntries(Object.entries({ endpoint, id, status }).filter(([, v]) => v !== undefined))
}

/**
 * Whether the client went away before the response was finished, as a flag, an AbortSignal and
 * a wait for 'drain' that also ends when the connection closes.
 * @param {import('express').Response} res
 */
function closedSignal (res) {
  const controller = new AbortController()
  const state = {
    closed: false,
    signal: controller.signal,
    /** @returns {Promise<void>} */
    drainedOrClosed () {
      // The signal aborts at 'close': the wait ends either way, and leaves no listener behind.
      return once(res, 'drain', { signal: controller.signal }).then(() => {}, () => {})
    }
  }
  res.on('close', () => {
    if (res.writableFinished) return
    state.closed = true
    controller.abort(new Error('the client went away'))
  })
  return state
}

/**
 * Gathers lines into chunks: a chunk goes out when it reaches CHUNK_CHARS, or FLUSH_MS after its
 * first line (so rows that trickle in, a filtered scan, still arrive promptly).
 * @param {import('express').Response} res
 * @param {string} header written with the first chunk
 */
function chunkedWriter (res, header) {
  let buffer = header
  /** @type {NodeJS.Timeout|null} */
  let timer = null
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = null
    if (buffer && !res.destroyed) res.write(buffer)
    buffer = ''
  }
  return {
    /** @param {string} text */
    add (text) {
      buffer += text
      if (buffer.length >= CHUNK_CHARS) flush()
      else if (!timer) timer = setTimeout(flush, FLUSH_MS)
    },
    end () {
      flush()
      res.end()
    },
    stop () {
      if (timer) clearTimeout(timer)
      timer = null
    }
  }
}

module.exports = { createLogQueryRouter }
