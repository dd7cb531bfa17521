'use strict'

/**
 * The access-log entry: one compact plain object per logged request, built by the request
 * handler after the response is written and handed to every sink of the endpoint. Every entry
 * has the same keys in the same order, so V8 gives them one hidden class and JSON.stringify
 * takes its fast path.
 */

const { isBotAgent } = require('./bot-agent')

/** Longest user agent / referer kept; longer headers are cut (they are attacker-controlled). */
const MAX_HEADER_CHARS = 512

/**
 * @typedef {object} AccessEntry
 * @property {number} ts epoch ms when the response was written
 * @property {string} endpoint endpoint name (e.g. "sample4")
 * @property {string|null} id the requested id, null when missing or invalid
 * @property {boolean} bot its user agent is a known bot, crawler or headless browser, or none
 *   was sent (./bot-agent.js); decided before a sink's privacy drops the agent
 * @property {string|null} variant the rollout variant whose config was served, null for an id's
 *   own row, the default, or an answer without config
 * @property {number} status HTTP status sent
 * @property {string|null} version the config version served (its ETag's token and OFREP's
 *   metadata.version), null for an answer without config
 * @property {number} ms handler latency, 3 decimals
 * @property {string|null} ip client address
 * @property {string|null} ua user agent, at most 512 chars
 * @property {string|null} ref referer, at most 512 chars
 */

/** @param {unknown} value a header @returns {string|null} */
function clip (value) {
  if (typeof value !== 'string') return null
  return value.length > MAX_HEADER_CHARS ? value.slice(0, MAX_HEADER_CHARS) : value
}

/**
 * @param {{ ts: number, endpoint: string, id?: string|null, variant?: string|null, status: number,
 *   version?: string|null, ms: number, ip?: string|null, ua?: string|null, ref?: string|null }} fields
 * @returns {AccessEntry}
 */
function accessEntry ({ ts, endpoint, id, variant, status, version, ms, ip, ua, ref }) {
  const agent = clip(ua)
  return {
    ts,
    endpoint,
    id: id == null ? null : id,
    bot: isBotAgent(agent),
    variant: variant == null ? null : variant,
    status,
    version: version == null ? null : version,
    ms: Math.round(ms * 1000) / 1000,
    ip: ip == null ? null : ip,
    ua: agent,
    ref: clip(ref)
  }
}

/**
 * @typedef {object} EventEntry one event a page sent (api/public/events.js), logged like a request
 * @property {number} ts epoch ms when the event was accepted
 * @property {string} endpoint endpoint name
 * @property {string} id the id the event is about (validated)
 * @property {boolean} bot as an access entry's: the page's own classification
 * @property {string|null} variant what the page showed (validated), or null
 * @property {string} event the event name, one the endpoint declares (e.g. "exposure")
 * @property {string|null} ip client address
 * @property {string|null} ua user agent, at most 512 chars
 * @property {string|null} ref referer (the page), at most 512 chars
 */

/**
 * An event's entry: the same sinks, rows and accounting as a request's, told apart by its
 * `event` key (a request's entry has `status` and `ms` instead). Its variant comes before the
 * event, where a request's is, so the rollups read both from an entry's head.
 * @param {{ ts: number, endpoint: string, id: string, event: string, variant?: string|null,
 *   ip?: string|null, ua?: string|null, ref?: string|null }} fields
 * @returns {EventEntry}
 */
function eventEntry ({ ts, endpoint, id, event, variant, ip, ua, ref }) {
  const agent = clip(ua)
  return {
    ts,
    endpoint,
    id,
    bot: isBotAgent(agent),
    variant: variant == null ? null : variant,
    event,
    ip: ip == null ? null : ip,
    ua: agent,
    ref: clip(ref)
  }
}

// The keys of an AccessEntry, in order. serializeEntry's fast path applies only to objects
// with exactly these own enumerable keys; anything else goes through JSON.stringify.
const KEYS = ['ts', 'endpoint', 'id', 'bot', 'variant', 'status', 'version', 'ms', 'ip', 'ua', 'ref']
// A string without these chars is its own JSON body: no escaping needed. Lone surrogates must
// be escaped (well-formed JSON.stringify), so any surrogate takes the slow path.
// eslint-disable-next-line no-control-regex -- JSON must escape U+0000..U+001F
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * @param {object} entry
 * @returns {entry is AccessEntry} its own keys are exactly KEYS, in order (their values may be any)
 */
function isEntryShape (entry) {
  let n = 0
  for (const key in entry) {
    if (key !== KEYS[n++]) return false
  }
  return n === KEYS.length
}

/** @param {unknown} value @returns {string} */
function str (value) {
  if (typeof value === 'string') return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : '"' + value + '"'
  return value == null ? 'null' : JSON.stringify(value)
}

/** @param {unknown} value @returns {string} */
function num (value) {
  if (typeof value === 'number') return Number.isFinite(value) ? '' + value : 'null'
  return value == null ? 'null' : JSON.stringify(value)
}

/**
 * One entry as one line of JSON, without the trailing newline (the file sink adds it; the
 * HBase sink stores it as the cell value).
 *
 * Entries built by accessEntry take a hand-written path that produces what JSON.stringify
 * would (an undefined field becomes null), in well under half of JSON.stringify's time, and
 * this runs once per logged request on the request thread. Any other object is
 * JSON.stringify'd.
 * @param {AccessEntry|object} entry
 * @returns {string}
 */
function serializeEntry (entry) {
  if (!isEntryShape(entry)) return JSON.stringify(entry)
  return '{"ts":' + num(entry.ts) +
    ',"endpoint":' + str(entry.endpoint) +
    ',"id":' + str(entry.id) +
    ',"bot":' + (entry.bot === true ? 'true' : entry.bot === false ? 'false' : JSON.stringify(entry.bot ?? null)) +
    ',"variant":' + str(entry.variant) +
    ',"status":' + num(entry.status) +
    ',"version":' + str(entry.version) +
    ',"ms":' + num(entry.ms) +
    ',"ip":' + str(entry.ip) +
    ',"ua":' + str(entry.ua) +
    ',"ref":' + str(entry.ref) + '}'
}

module.exports = { accessEntry, eventEntry, serializeEntry, MAX_HEADER_CHARS }
