'use strict'

const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')

/**
 * What a page may send as events, checked strictly: an event is `{ "id", "event", "variant"? }`
 * and nothing else; `id` follows the id rule of the endpoints (lib/names.js, at most
 * limits.maxIdLength), `event` is a name the endpoint declares (`events.names`), `variant` a
 * name of at most 64 characters or null. A batch is one event or an array of 1..maxEvents; one
 * bad event rejects the whole batch, so a batch is written whole or not at all.
 *
 * Errors are shared, frozen and carry no input (never reflected).
 */

const FAIL = Object.freeze({
  BAD_EVENT: Object.freeze(new ERRORS.BAD_EVENT()),
  BAD_BODY: Object.freeze(new ERRORS.BAD_BODY())
})

const MAX_VARIANT_LENGTH = 64
const FIELDS = ['id', 'event', 'variant']
// What navigator.sendBeacon() sends for a string (text/plain;charset=UTF-8) and for a JSON Blob.
const MEDIA_TYPES = new Set(['text/plain', 'application/json'])
const CHARSET_RE = /;\s*charset\s*=\s*"?([^";\s]*)"?/i
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * @typedef {{ id: string, event: string, variant: string|null }} PageEvent
 * @typedef {{ names: Set<string>, maxEvents: number, maxIdLength: number }} EventRules
 * @typedef {{ events: PageEvent[], error: null }
 *   | { events: null, error: import('../../lib/errors').BeaconError }} ParsedEvents
 */

/**
 * Whether a Content-Type is one events may come in: text/plain or application/json, UTF-8.
 * @param {string|undefined} contentType
 * @returns {boolean}
 */
function isEventMediaType (contentType) {
  if (typeof contentType !== 'string') return false
  const semi = contentType.indexOf(';')
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
  if (!MEDIA_TYPES.has(type)) return false
  const charset = CHARSET_RE.exec(contentType)
  return charset === null || /^utf-?8$/i.test(charset[1])
}

/**
 * A POST body: UTF-8 JSON, one event or an array of them.
 * @param {Buffer} body
 * @param {EventRules} rules
 * @returns {ParsedEvents}
 */
function parseEventBody (body, rules) {
  let value
  try {
    value = JSON.parse(UTF8.decode(body))
  } catch {
    return fail(FAIL.BAD_BODY)
  }
  const list = Array.isArray(value) ? value : [value]
  if (list.length === 0 || list.length > rules.maxEvents) return fail(FAIL.BAD_EVENT)
  const events = []
  for (const item of list) {
    const event = checkEvent(item, rules)
    if (event === null) return fail(FAIL.BAD_EVENT)
    events.push(event)
  }
  return { events, error: null }
}

/**
 * The GIF form's query string (`id=42&event=exposure&variant=B`): one event. Other parameters
 * (cache busters) are ignored; id, event and variant may each appear once.
 * @param {string} queryString the part after `?`
 * @param {EventRules} rules
 * @returns {ParsedEvents}
 */
function parseEventQuery (queryString, rules) {
  const params = new URLSearchParams(queryString)
  /** @type {Record<string, string>} */
  const item = {}
  for (const key of FIELDS) {
    const values = params.getAll(key)
    if (values.length > 1) return fail(FAIL.BAD_EVENT)
    if (values.length === 1) item[key] = values[0]
  }
  const event = checkEvent(item, rules)
  return event === null ? fail(FAIL.BAD_EVENT) : { events: [event], error: null }
}

/**
 * @param {unknown} item
 * @param {EventRules} rules
 * @returns {PageEvent|null} the event, or null when it breaks a rule
 */
function checkEvent (item, rules) {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return null
  // Own keys only, and only ours: JSON.parse makes "__proto__" an own key, so it is refused too.
  for (const key of Object.keys(item)) if (!FIELDS.includes(key)) return null
  const { id, event, variant } = /** @type {Record<string, unknown>} */ (item)
  if (!isSafeName(id, rules.maxIdLength)) return null
  if (typeof event !== 'string' || !rules.names.has(event)) return null
  if (variant !== undefined && variant !== null && !isSafeName(variant, MAX_VARIANT_LENGTH)) return null
  return { id, event, variant: variant === undefined ? null : /** @type {string|null} */ (variant) }
}

/**
 * @param {import('../../lib/errors').BeaconError} error
 * @returns {ParsedEvents}
 */
function fail (error) {
  return { events: null, error }
}

module.exports = { parseEventBody, parseEventQuery, isEventMediaType, MAX_VARIANT_LENGTH }
