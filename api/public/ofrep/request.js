'use strict'

const { isSafeName } = require('../../../lib/names')
const { DEFAULTS } = require('../../../config/defaults')
const { OFREP_ERRORS } = require('./errors')
const { OFREP_LIMITS } = require('./limits')
const { isObject } = require('./flags')

/**
 * What a client sends to the OFREP paths, checked (docs/openfeature.md, "Requests"):
 *
 * - the body of both paths: `application/json` (a charset, if named, must be UTF-8), at most
 *   `maxBodyBytes`, a JSON object whose `context` is an object with a `targetingKey` that is a
 *   beacon id (the rule and length limit of the JSONP `id`: lib/names.js). Other members of the
 *   body and of the context are accepted and ignored: OFREP contexts carry whatever attributes
 *   the application set, and beacon's config depends on the id alone.
 * - the flag key of `…/evaluate/flags/{key}`: percent-decoded, any characters, 1..maxKeyLength.
 *
 * A body without `context` counts as an empty context (the JS providers send `{}` when the
 * application set none), so the client hears about the targetingKey, the thing it must add.
 * Errors are entries of the one table (api/public/ofrep/errors.js) and carry nothing of the input.
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true })
const QUOTED_RE = /^"(.*)"$/

/**
 * @typedef {{ maxBodyBytes?: number, maxIdLength?: number }} RequestLimits
 * @typedef {{ ok: true, id: string, context: Readonly<Record<string, unknown>> }
 *   | { ok: false, error: Readonly<import('./errors').OfrepError> }} ParsedRequest
 * @typedef {{ ok: true, key: string }
 *   | { ok: false, key: string, error: Readonly<import('./errors').OfrepError> }} ParsedKey
 */

/**
 * Whether a Content-Type is JSON in UTF-8: `application/json`, any case, with or without
 * `charset=utf-8` (or `utf8`, quoted or not); other parameters are ignored. The wiring may
 * call it before reading the body, to refuse one it would not parse.
 * @param {string|undefined} contentType the header's value
 * @returns {boolean}
 */
function isJsonMediaType (contentType) {
  if (typeof contentType !== 'string') return false
  const [type, ...params] = contentType.split(';')
  if (type.trim().toLowerCase() !== 'application/json') return false
  for (const param of params) {
    const eq = param.indexOf('=')
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    const charset = param.slice(eq + 1).trim().replace(QUOTED_RE, '$1').toLowerCase()
    if (charset !== 'utf-8' && charset !== 'utf8') return false
  }
  return true
}

/**
 * The body of an evaluation request (either path), checked.
 * @param {string|undefined} contentType the Content-Type header's value
 * @param {Buffer|string|null} body the raw body; null when the reader stopped at the cap
 *   (api/public/events.js readBody)
 * @param {RequestLimits} [limits] maxBodyBytes (api/public/ofrep/limits.js) and maxIdLength
 *   (settings `limits.maxIdLength`)
 * @returns {ParsedRequest} `id` is the targetingKey; `context` a frozen copy without a prototype
 */
function parseEvaluationRequest (contentType, body, limits = {}) {
  const { maxBodyBytes = OFREP_LIMITS.maxBodyBytes, maxIdLength = DEFAULTS.limits.maxIdLength } = limits
  if (!isJsonMediaType(contentType)) return fail(OFREP_ERRORS.BAD_MEDIA_TYPE)
  if (body === null || Buffer.byteLength(body) > maxBodyBytes) return fail(OFREP_ERRORS.BODY_TOO_LARGE)
  let value
  try {
    value = JSON.parse(typeof body === 'string' ? body : UTF8.decode(body))
  } catch {
    return fail(OFREP_ERRORS.BAD_JSON)
  }
  if (!isObject(value)) return fail(OFREP_ERRORS.BAD_JSON)
  // Own members only: JSON.parse makes "__proto__" an own key, and nothing is ever read
  // through a prototype, so `{"__proto__":{"context":…}}` is a body without a context.
  const context = Object.hasOwn(value, 'context') ? value.context : {}
  if (!isObject(context)) return fail(OFREP_ERRORS.BAD_CONTEXT)
  const id = Object.hasOwn(context, 'targetingKey') ? context.targetingKey : undefined
  // null and "" are how SDKs write "no targeting key".
  if (id === undefined || id === null || id === '') return fail(OFREP_ERRORS.TARGETING_KEY_MISSING)
  if (!isSafeName(id, maxIdLength)) return fail(OFREP_ERRORS.BAD_TARGETING_KEY)
  // A copy without a prototype: whoever reads it later (a log, a future targeting rule) can
  // neither reach Object.prototype through it nor have a "__proto__" member act as one.
  return { ok: true, id, context: Object.freeze(Object.assign(Object.create(null), context)) }
}

/**
 * The flag key of `POST …/ofrep/v1/evaluate/flags/{key}`: the raw path after `/flags/` (up to
 * `?`, everything, `/` included), percent-decoded. `+` is a plus sign (a path, not a form).
 * The JS providers encode the key (ofrep-core ≥ 2.2.1), older ones sent it raw: both arrive
 * here the same unless the raw key has a `%` that is not an escape, which is refused.
 * @param {string} raw
 * @param {{ maxKeyLength?: number }} [limits]
 * @returns {ParsedKey} `key` is always set, for the error body: decoded, or raw if it is not
 */
function parseFlagKey (raw, limits = {}) {
  const { maxKeyLength = OFREP_LIMITS.maxKeyLength } = limits
  let key = raw
  if (raw.includes('%')) {
    try {
      key = decodeURIComponent(raw)
    } catch {
      return { ok: false, key: raw, error: OFREP_ERRORS.BAD_KEY_ENCODING }
    }
  }
  // No flag has an empty or over-long key (flags.js skips them), so both are simply not found.
  if (key === '' || key.length > maxKeyLength) return { ok: false, key, error: OFREP_ERRORS.FLAG_NOT_FOUND }
  return { ok: true, key }
}

/**
 * @param {Readonly<import('./errors').OfrepError>} error
 * @returns {ParsedRequest}
 */
function fail (error) {
  return { ok: false, error }
}

module.exports = { parseEvaluationRequest, parseFlagKey, isJsonMediaType }
