'use strict'

const { ERRORS } = require('../../lib/errors')

/**
 * The times of an access-log query: ISO-8601, 13-digit epoch ms, or relative to now.
 *
 *   2026-11-24T16:00:00Z, 2026-11-24T17:00:00.250+01:00, 2026-11-24T16:00 (no offset: UTC),
 *   2026-11-24 (midnight UTC), 1764000000000 (epoch ms), now, -30s, -15m, -2h, -1d, -1w
 *
 * Strict on purpose: Date.parse accepts "2026-02-30" (as March 2nd) and reads an ISO time
 * without an offset as the server's local time; a query over the wrong hour looks right and
 * is not. A time the row keys cannot hold (before 1970, from year 2286 on) is refused too.
 */

const UNIT_MS = Object.freeze({
  s: 1000,
  m: 60 * 1000,
  h: 60 * 60 * 1000,
  d: 24 * 60 * 60 * 1000,
  w: 7 * 24 * 60 * 60 * 1000
})
const RELATIVE = /^-(\d{1,9})([smhdw])$/
const EPOCH_MS = /^\d{13}$/
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?(Z|[+-]\d{2}:?\d{2})?$/
/** Row keys hold 13-digit epoch ms. */
const MAX_MS = 1e13

/**
 * @param {string} zone "Z", "+01:00", "-0530"
 * @returns {number|null} offset in minutes east of UTC, null when invalid
 */
function offsetMinutes (zone) {
  if (zone === 'Z') return 0
  const hours = Number(zone.slice(1, 3))
  const minutes = Number(zone.slice(-2))
  if (hours > 23 || minutes > 59) return null
  return (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes)
}

/**
 * @param {RegExpExecArray} m
 * @returns {number|null} epoch ms, null when a field is out of range (2026-02-30, 24:00)
 */
function isoMs (m) {
  // (ISO always captures year, month and day; the rest may be missing: the defaults)
  const [year, month, day, hour = 0, minute = 0, second = 0] = /** @type {number[]} */ (m.slice(1, 7)
    .map((x) => (x === undefined ? undefined : Number(x))))
  const ms = m[7] ? Number(m[7].padEnd(3, '0')) : 0
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms)
  const d = new Date(utc)
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day ||
      d.getUTCHours() !== hour || d.getUTCMinutes() !== minute || d.getUTCSeconds() !== second) return null
  const offset = m[8] ? offsetMinutes(m[8]) : 0
  return offset === null ? null : utc - offset * 60 * 1000
}

/**
 * Parses one time.
 * @param {unknown} text
 * @param {number} now epoch ms that `now` and relative times count from
 * @param {string} name the parameter, named in the error ("from", "to")
 * @returns {number} epoch ms
 * @throws {import('../../lib/errors').BeaconError} BAD_TIME
 */
function parseTime (text, now, name) {
  let ms = null
  if (typeof text === 'string') {
    let m
    if (text === 'now') ms = now
    else if ((m = RELATIVE.exec(text))) ms = now - Number(m[1]) * UNIT_MS[/** @type {keyof typeof UNIT_MS} */ (m[2])]
    else if (EPOCH_MS.test(text)) ms = Number(text)
    else if ((m = ISO.exec(text))) ms = isoMs(m)
  }
  if (ms === null || !Number.isFinite(ms) || ms < 0 || ms >= MAX_MS) throw new ERRORS.BAD_TIME(name)
  return ms
}

/**
 * Parses a query's range [from, to): `from` is required, `to` defaults to now.
 * @param {{ from?: unknown, to?: unknown }} given
 * @param {number} now epoch ms
 * @returns {{ from: number, to: number }}
 * @throws {import('../../lib/errors').BeaconError} BAD_TIME, BAD_TIME_RANGE
 */
function parseTimeRange ({ from, to }, now) {
  if (from === undefined || from === '') throw new ERRORS.BAD_TIME('from is required')
  const range = {
    from: parseTime(from, now, 'from'),
    to: to === undefined || to === '' ? now : parseTime(to, now, 'to')
  }
  if (range.from >= range.to) throw new ERRORS.BAD_TIME_RANGE()
  return range
}

module.exports = { parseTime, parseTimeRange, UNIT_MS }
