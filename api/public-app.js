'use strict'

const express = require('express')

const NOT_FOUND_BODY = '{"error":{"status":404,"code":"NOT_FOUND","message":"no such endpoint"}}'
const BAD_REQUEST_BODY = '{"error":{"status":400,"code":"BAD_REQUEST","message":"malformed request"}}'

/**
 * Express app for whatever reaches the public port that is not a declared endpoint: users mount
 * extra routes through `routes(app)`; everything else gets a JSON 404 (never echoing the path).
 * @param {{ routes?: (app: import('express').Express) => void, logger?: object }} [options]
 * @returns {import('express').Express}
 */
function createPublicApp ({ routes, logger } = {}) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  if (routes) routes(app)
  app.use((req, res) => {
    res.status(404).set({ 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).send(NOT_FOUND_BODY)
  })
  // Client mistakes (bad percent-encoding in a path, oversized bodies) are 4xx; only our own bugs are 500.
  app.use((err, req, res, next) => {
    const status = err.status >= 400 && err.status < 500 ? err.status : 500
    if (status === 500 && logger) logger.error({ err }, 'public app error')
    res.status(status).set({ 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
      .send(status === 500 ? '{"error":{"status":500,"code":"INTERNAL","message":"internal error"}}' : BAD_REQUEST_BODY.replace('400', String(status)))
  })
  return app
}

module.exports = { createPublicApp }
