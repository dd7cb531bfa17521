'use strict'

const { parseTime } = require('../logging/query/time')

/**
 * `--from` and `--to`, checked before anything is sent, so a bad one is a usage error that names
 * the option first and says what it takes (the server would check them too, as a 400).
 */

const TAKES = 'ISO-8601 (2026-01-31T12:00:00Z), 13-digit epoch ms, or a time relative to now (-30s, -15m, -2h, -1d, -1w, now)'

/**
 * @param {Record<string, unknown>} values the parsed options
 * @param {(message: string) => Error} usageError
 * @param {number} [now]
 * @throws {Error} a usage error naming the first bad option
 */
function checkTimeArgs (values, usageError, now = Date.now()) {
  for (const name of ['from', 'to']) {
    const value = values[name]
    if (typeof value !== 'string') continue
    try {
      parseTime(value, now, name)
    } catch {
      // A duration without its minus is the usual slip: say what it would have meant.
      const duration = /^(\d+)([smhdw])$/.exec(value)
      const hint = duration ? `; ${value} is a length of time: ${duration[1]}${duration[2]} ago is -${value}` : ''
      throw usageError(`--${name} takes ${TAKES}${hint}`)
    }
  }
}

module.exports = { checkTimeArgs }
