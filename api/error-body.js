'use strict'

const { ERRORS } = require('../lib/errors')
const { serializeConfig } = require('../lib/toggles/script-json')

/**
 * Renders the error table (lib/errors.js) for HTTP: every error body beacon sends, on every
 * port, comes from here. `{"error":{"status":N,"code":"CODE","message":"..."}}` as JSON, or, in a
 * script context, JavaScript that logs the same to the console (a <script> tag loads it
 * without a syntax error). Bodies of the fixed messages are built once, at load.
 */

const JSON_HEADERS = Object.freeze({
  'Content-Type': 'application/json; charset=utf-8',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store'
})

/**
 * @param {number} status
 * @param {string} code
 * @param {string} message
 * @returns {string}
 */
function objectJson (status, code, message) {
  return '{"error":{"status":' + status + ',"code":"' + code + '","message":' + serializeConfig(message) + '}}'
}

const FIXED = new Map()
for (const E of Object.values(ERRORS)) {
  FIXED.set(E.code, {
    json: objectJson(E.statusCode, E.code, E.message),
    script: "/**/ typeof console === 'object' && console.error(" +
      serializeConfig('beacon: ' + E.code + ': ' + E.message) + ');'
  })
}

/**
 * The error a body is written for: a coded beacon error as it is, anything else as INTERNAL
 * (its own message, which may hold anything, is never written).
 * @param {unknown} err
 * @returns {{ code: string, statusCode: number, message: string }}
 */
function coded (err) {
  const e = /** @type {{ code?: unknown, message?: unknown }|null|undefined} */ (err)
  if (!e || typeof e.code !== 'string' || !FIXED.has(e.code)) return ERRORS.INTERNAL
  const E = ERRORS[e.code]
  return {
    code: E.code,
    statusCode: E.statusCode,
    message: typeof e.message === 'string' && e.message.startsWith(E.message) ? e.message : E.message
  }
}

/**
 * @param {unknown} err a coded error (lib/errors.js); anything else is written as INTERNAL
 * @param {{ script?: boolean, withDetail?: boolean }} [options] script: the console.error form;
 *   withDetail: write the error's own message (fixed text + the operator-facing detail) instead
 *   of the fixed text alone (admin API only: public bodies never carry a detail)
 * @returns {string}
 */
function errorBody (err, { script = false, withDetail = false } = {}) {
  const e = coded(err)
  const fixed = FIXED.get(e.code)
  if (script) return fixed.script
  return withDetail && e.message !== ERRORS[e.code].message ? objectJson(e.statusCode, e.code, e.message) : fixed.json
}

/**
 * Sends an error as JSON on an express response (public fallback and admin apps).
 * @param {import('express').Response} res
 * @param {unknown} err
 * @param {{ withDetail?: boolean }} [options]
 */
function sendError (res, err, { withDetail = false } = {}) {
  const e = coded(err)
  res.status(e.statusCode).set(JSON_HEADERS).send(errorBody(e, { withDetail }))
}

module.exports = { errorBody, sendError, coded }
