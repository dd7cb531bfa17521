'use strict'

const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { parseTimeRange } = require('./time')
const { GROUP_BY } = require('./count')

/**
 * The parameters of the admin API's log queries (GET /admin/log/scan, /admin/log/count), parsed
 * strictly: an unknown or repeated parameter is an error (a typo such as `form=` must not
 * silently widen a query to everything). Errors name the parameter, never echo its value.
 */

const MAX_LIMIT = 1e9
const FORMATS = Object.freeze(['ndjson', 'csv'])
const COMMON = ['from', 'to', 'endpoint', 'id', 'status']
const KNOWN = Object.freeze({
  scan: Object.freeze([...COMMON, 'limit', 'format', 'after']),
  count: Object.freeze([...COMMON, 'by', 'unique', 'scan']),
  check: Object.freeze(['from', 'to']),
  erase: Object.freeze(['id', 'from', 'to', 'dryRun'])
})
// A row key: 2 hex chars of bucket, 13 digits of epoch ms, the writer's suffix (printable ASCII).
const ROW_KEY = /^[0-9a-f]{2}\d{13}[\x21-\x7e]{1,200}$/

/**
 * @typedef {import('./scan').ScanQuery & { format: 'ndjson'|'csv' }} ScanParams
 * @typedef {import('./count').CountQuery} CountParams
 */

/** @param {string} detail */
const bad = (detail) => new ERRORS.BAD_LOG_QUERY(detail)

/**
 * @param {Record<string, unknown>} raw
 * @param {string} name
 * @returns {string|undefined}
 */
function single (raw, name) {
  const value = raw[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw bad(`${name} may be given once`)
  return value
}

/**
 * Parses a query string's parameters (as express or URLSearchParams give them) for one kind of
 * query.
 * @param {'scan'|'count'} kind
 * @param {Record<string, unknown>} raw parameter → string (or an array when repeated)
 * @param {{ now: number, maxIdLength: number }} context now: what relative times count from
 * @returns {ScanParams|CountParams}
 * @throws {import('../../lib/errors').BeaconError} BAD_LOG_QUERY, BAD_TIME, BAD_TIME_RANGE
 */
function parseLogQuery (kind, raw, { now, maxIdLength }) {
  const known = KNOWN[kind]
  for (const name of Object.keys(raw)) {
    if (!known.includes(name)) throw bad(`an unknown parameter was given; ${kind} takes ${known.join(', ')}`)
  }
  const range = parseTimeRange({ from: single(raw, 'from'), to: single(raw, 'to') }, now)
  /** @type {Record<string, any>} */
  const query = { ...range }
  const endpoint = single(raw, 'endpoint')
  if (endpoint !== undefined) {
    if (!isSafeName(endpoint, 64)) throw bad('endpoint must be an endpoint name (letters, digits, _ or -)')
    query.endpoint = endpoint
  }
  const id = single(raw, 'id')
  if (id !== undefined) {
    if (!isSafeName(id, maxIdLength)) throw bad(`id must be letters, digits, _ or -, at most ${maxIdLength} long`)
    query.id = id
  }
  const status = single(raw, 'status')
  if (status !== undefined) {
    if (!/^[1-5]\d\d$/.test(status)) throw bad('status must be an HTTP status, 100 to 599')
    query.status = Number(status)
  }
  if (kind === 'scan') {
    const limit = single(raw, 'limit')
    if (limit !== undefined) {
      if (!/^\d{1,10}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) {
        throw bad(`limit must be a whole number from 1 to ${MAX_LIMIT}`)
      }
      query.limit = Number(limit)
    }
    const format = single(raw, 'format')
    if (format !== undefined && !FORMATS.includes(format)) throw bad(`format must be one of ${FORMATS.join(', ')}`)
    query.format = format || 'ndjson'
    const after = single(raw, 'after')
    if (after !== undefined) {
      if (!ROW_KEY.test(after)) throw bad('after must be the key of a row this query returned')
      query.after = after
    }
  } else if (kind === 'count') {
    const scan = single(raw, 'scan')
    if (scan !== undefined) {
      if (scan !== '1' && scan !== 'true') throw bad('scan takes 1 or true: count from the raw rows, not the rollups')
      query.scan = true
    }
    const unique = single(raw, 'unique')
    if (unique !== undefined) {
      if (unique !== '1' && unique !== 'true') throw bad('unique takes 1 or true: count distinct ids, not rows')
      query.unique = true
    }
    const by = single(raw, 'by')
    if (by !== undefined) {
      if (!GROUP_BY.includes(by)) throw bad(`by must be one of ${GROUP_BY.join(', ')}`)
      query.by = by
    }
  }
  return /** @type {any} */ (query)
}

/**
 * Parses the parameters of an erase (POST /admin/log/erase): the id, required and checked as the
 * data plane checks ids (400 MISSING_ID, BAD_ID); the range, the whole log by default.
 * @param {Record<string, unknown>} raw
 * @param {{ now: number, maxIdLength: number }} context
 * @returns {{ id: string, from: number, to: number, dryRun: boolean }}
 * @throws {import('../../lib/errors').BeaconError} MISSING_ID, BAD_ID, BAD_LOG_QUERY, BAD_TIME, BAD_TIME_RANGE
 */
function parseEraseQuery (raw, { now, maxIdLength }) {
  for (const name of Object.keys(raw)) {
    if (!KNOWN.erase.includes(name)) throw bad(`an unknown parameter was given; erase takes ${KNOWN.erase.join(', ')}`)
  }
  const id = raw.id
  if (id === undefined || id === '') throw new ERRORS.MISSING_ID()
  if (!isSafeName(id, maxIdLength)) {
    // Which of the two rules it broke, never what it was.
    const why = typeof id === 'string' && id.length > maxIdLength
      ? `this one is longer than ${maxIdLength} characters`
      : 'this one holds another character (a dot, a space, …) or is not one value'
    throw new ERRORS.BAD_ID(why)
  }
  const from = single(raw, 'from')
  const range = parseTimeRange({ from: from === undefined ? '0000000000000' : from, to: single(raw, 'to') }, now)
  const dryRun = single(raw, 'dryRun')
  if (dryRun !== undefined && dryRun !== '1' && dryRun !== 'true') {
    throw bad('dryRun takes 1 or true: count the rows, delete nothing')
  }
  return { id, ...range, dryRun: dryRun !== undefined }
}

module.exports = { parseLogQuery, parseEraseQuery, KNOWN, FORMATS }
