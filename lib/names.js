'use strict'

/**
 * The one pattern for names beacon writes into keys, files and scripts without escaping: toggle
 * ids, endpoint names, writer ids, worker tags. ASCII letters, digits, `_` and `-` only, so such
 * a name never needs escaping in a URL, a file name, an HBase row key or JavaScript, and it can
 * never start with `!`, the prefix of the config table's reserved rows.
 */

const NAME_CHARS = 'A-Za-z0-9_-'
const NAME_RE = /^[A-Za-z0-9_-]+$/
/** By char code: 1 for a character a name may hold (hot paths check in place, no regex). */
const NAME_CHAR_CODES = new Uint8Array(128)
for (let c = 0; c < 128; c++) NAME_CHAR_CODES[c] = NAME_RE.test(String.fromCharCode(c)) ? 1 : 0

/**
 * @param {unknown} value
 * @param {number} maxLength
 * @returns {value is string} whether `value` is a safe name of 1..maxLength characters
 */
function isSafeName (value, maxLength) {
  return typeof value === 'string' && value.length > 0 && value.length <= maxLength && NAME_RE.test(value)
}

/**
 * The same rule as a JSON-schema / RegExp source, for validators that need the pattern text.
 * @param {number} maxLength
 * @returns {string}
 */
function safeNamePattern (maxLength) {
  return `^[${NAME_CHARS}]{1,${maxLength}}$`
}

module.exports = { isSafeName, safeNamePattern, NAME_RE, NAME_CHAR_CODES }
