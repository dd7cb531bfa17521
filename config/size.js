'use strict'

/**
 * Sizes in settings: a count of bytes with an optional k, m or g (powers of 1024), as
 * pino-roll's `size` takes them (`100m`); `0` where a setting allows none.
 */

const SIZE_PATTERN = '^(0|[1-9][0-9]*[kmg]?)$'
const SIZE_RE = new RegExp(SIZE_PATTERN)
const UNITS = /** @type {Readonly<Record<string, number>>} */ (Object.freeze({ k: 1024, m: 1024 ** 2, g: 1024 ** 3 }))

/**
 * @param {string} text a size SIZE_PATTERN accepts (validated settings)
 * @returns {number} bytes
 * @throws {RangeError} for anything else
 */
function sizeBytes (text) {
  if (typeof text !== 'string' || !SIZE_RE.test(text)) {
    throw new RangeError(`not a size like 100m: ${JSON.stringify(text)}`)
  }
  const unit = UNITS[text[text.length - 1]]
  return unit === undefined ? Number(text) : Number(text.slice(0, -1)) * unit
}

module.exports = { SIZE_PATTERN, sizeBytes }
