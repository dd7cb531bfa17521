'use strict'

const { ERRORS } = require('../../lib/errors')
const { sendError } = require('../error-body')
const { createCredentials } = require('./credentials')

/**
 * The admin port's token checks, as express middleware: one for the admin API and the traffic
 * page (any admin credential; its name becomes `res.locals.actor`), one for /metrics (open when
 * the admin port is bound to loopback, for a local Prometheus; elsewhere the metrics token or
 * an admin credential). A refusal is 401 with a Bearer challenge; a request that carried a
 * wrong token is a failed authentication (./auth-failures.js), which may wait before its answer.
 */

/** @param {number} ms @returns {Promise<void>} */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * @typedef {object} GuardDeps
 * @property {ReturnType<typeof import('./credentials').createCredentials>} credentials
 * @property {ReturnType<typeof import('./auth-failures').createAuthFailures>} failures
 * @property {(ms: number) => Promise<void>} [wait] how a slowed answer waits (a test's clock)
 */

/**
 * @param {import('express').Request} req
 * @param {import('express').Response} res
 * @param {GuardDeps} deps
 */
function refuse (req, res, { failures, wait = sleep }) {
  const send = () => {
    res.set('WWW-Authenticate', 'Bearer realm="beacon-admin"')
    sendError(res, UNAUTHORIZED)
  }
  // No token at all is not a guess (a page's first load, a scraper not set up yet).
  if (req.headers.authorization === undefined) return send()
  const delay = failures.failed(req.socket.remoteAddress, req.baseUrl + req.path)
  if (delay > 0) wait(delay).then(send, send)
  else send()
}

/**
 * Any admin credential.
 * @param {GuardDeps} deps
 * @returns {import('express').RequestHandler}
 */
function adminGuard (deps) {
  return (req, res, next) => {
    const actor = deps.credentials.actorOf(req.headers.authorization)
    if (actor === null) return refuse(req, res, deps)
    res.locals.actor = actor
    next()
  }
}

/**
 * /metrics: open on a loopback admin port; else the metrics token (settings.metricsToken) or
 * any admin credential.
 * @param {GuardDeps & { loopback: () => boolean, metricsToken: string|null }} deps loopback: the
 *   admin port is bound to a loopback address
 * @returns {import('express').RequestHandler}
 */
function metricsGuard (deps) {
  // The metrics token checked as the admin tokens are (hashed, constant time).
  const scraper = createCredentials({ token: deps.metricsToken, named: null })
  return (req, res, next) => {
    if (deps.loopback()) return next()
    const header = req.headers.authorization
    if (scraper.actorOf(header) !== null || deps.credentials.actorOf(header) !== null) return next()
    refuse(req, res, deps)
  }
}

const UNAUTHORIZED = Object.freeze(new ERRORS.UNAUTHORIZED())

module.exports = { adminGuard, metricsGuard }
