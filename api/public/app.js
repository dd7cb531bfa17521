'use strict'

const express = require('express')
const { ERRORS } = require('../../lib/errors')
const { sendError } = require('../error-body')

/**
 * Express app for whatever reaches the public port that is not a declared endpoint: a JSON 404
 * (never echoing the path), and a JSON 4xx for client mistakes express itself detects (bad
 * percent-encoding in a path, oversized bodies). Only our own bugs are 500, logged here.
 * @param {{ logger: { error: Function } }} options
 * @returns {import('express').Express}
 */
function createPublicApp ({ logger }) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use((req, res) => sendError(res, NOT_FOUND))
  app.use((/** @type {Error & { status: number }} */ err, /** @type {import('express').Request} */ req,
    /** @type {import('express').Response} */ res, /** @type {import('express').NextFunction} */ next) => {
    // status: set by express and body-parser on their HTTP errors; undefined on others, which compares false
    if (err.status >= 400 && err.status < 500) return sendError(res, BAD_REQUEST)
    logger.error({ err }, 'public app error')
    sendError(res, err)
  })
  return app
}

const NOT_FOUND = Object.freeze(new ERRORS.NOT_FOUND())
const BAD_REQUEST = Object.freeze(new ERRORS.BAD_REQUEST())

module.exports = { createPublicApp }
