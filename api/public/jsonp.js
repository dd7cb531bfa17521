'use strict'

const { isCallbackPath } = require('./query')
const { errorBody, coded } = require('../error-body')

const JS_TYPE = 'application/javascript; charset=utf-8'
const JSON_TYPE = 'application/json; charset=utf-8'

// Contract checks for values that parseBeaconQuery has already validated: a caller that skipped
// it gets a TypeError instead of writing attacker text into a script. Characters only, so cheap.
const { NAME_RE: SAFE_ID_RE } = require('../../lib/names')
const SAFE_CALLBACK_RE = /^[A-Za-z0-9_$.]+$/

/**
 * The response body for a served config.
 *
 * With a callback: `/**\/ typeof CB === 'function' && CB(<payload>);`. The leading empty
 * comment is the Rosetta Flash mitigation express's res.jsonp uses (a body that starts with
 * attacker-chosen bytes can be read as a SWF); the typeof guard makes a page without the
 * function a no-op instead of a TypeError. Without a callback: the payload as JSON.
 *
 * @param {object} options
 * @param {string} options.id validated id (^[A-Za-z0-9_-]+$): written unescaped, so this is a
 *   contract, checked here
 * @param {boolean} options.isDefault the id has no row of its own (it got the default or a rollout's variant)
 * @param {string} options.configJson output of serializeConfig
 * @param {string|null} [options.variant] the rollout variant it got (a safe name, written unescaped)
 * @param {string|null} [options.callback] validated identifier path, or null for JSON
 * @returns {string}
 */
function renderBody ({ id, isDefault, configJson, callback, variant = null }) {
  if (typeof id !== 'string' || !SAFE_ID_RE.test(id)) throw new TypeError('renderBody: id was not validated')
  if (variant !== null && !SAFE_ID_RE.test(variant)) throw new TypeError('renderBody: variant is not a safe name')
  const payload = '{"id":"' + id + '","default":' + (isDefault ? 'true' : 'false') +
    (variant === null ? '' : ',"variant":"' + variant + '"') + ',"config":' + configJson + '}'
  if (!callback) return payload
  if (!SAFE_CALLBACK_RE.test(callback)) throw new TypeError('renderBody: callback was not validated')
  return wrap(callback, payload)
}

/** @param {string} callback a validated one @param {string} payload @returns {string} */
function wrap (callback, payload) {
  return '/**/ typeof ' + callback + " === 'function' && " + callback + '(' + payload + ');'
}

/**
 * The response body for an error. Only the code and the fixed text from lib/errors.js are
 * written, never the error's own message or any request data; an error without a known code is
 * written as INTERNAL.
 *
 * In a script context (the request carried a `callback` param, valid or not) the body is
 * JavaScript that logs to the console, so a <script> tag loads without a syntax error. A
 * CONFIG_UNAVAILABLE with a valid callback is a server-side problem, not bad input, so the
 * page's callback is called with `{ error }` instead and can react.
 *
 * @param {{ code?: string }|null|undefined} err
 * @param {{ callback?: string|null, scriptContext?: boolean }} [options]
 * @returns {string}
 */
function renderError (err, { callback, scriptContext } = {}) {
  if (!scriptContext) return errorBody(err)
  if (callback && coded(err).code === 'CONFIG_UNAVAILABLE' && isCallbackPath(callback)) {
    return wrap(callback, errorBody(err))
  }
  return errorBody(err, { script: true })
}

/**
 * A callback allowlist as a predicate. A JSONP endpoint runs whatever function name the page
 * passes; listing the names the site's own pages use stops a hostile page from making our
 * script call a function of the victim page's choosing with our data (SOME attacks).
 * @param {string[]|undefined} list exact names, or prefixes ending in `*` (`jQuery*`)
 * @returns {((callback: string) => boolean)|null} null: every valid callback is allowed
 */
function callbackAllowlist (list) {
  if (!list) return null
  const exact = new Set(list.filter((name) => !name.endsWith('*')))
  const prefixes = list.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1))
  return (callback) => exact.has(callback) || prefixes.some((prefix) => callback.startsWith(prefix))
}

/**
 * @param {boolean} scriptContext whether the body is JavaScript (a callback param was sent)
 * @returns {string} the Content-Type header value
 */
function contentType (scriptContext) {
  return scriptContext ? JS_TYPE : JSON_TYPE
}

module.exports = { renderBody, renderError, contentType, callbackAllowlist }
