'use strict'

const { ERRORS } = require('../../lib/errors')
const { NAME_RE, NAME_CHAR_CODES } = require('../../lib/names')

// Parse errors carry no request data, so one frozen instance each is shared by every request:
// a flood of bad requests must not pay for a stack trace per request.
const FAIL = Object.freeze({
  BAD_ID: Object.freeze(new ERRORS.BAD_ID()),
  MISSING_ID: Object.freeze(new ERRORS.MISSING_ID()),
  BAD_CALLBACK: Object.freeze(new ERRORS.BAD_CALLBACK()),
  BAD_QUERY: Object.freeze(new ERRORS.BAD_QUERY()),
  DUPLICATE_PARAM: Object.freeze(new ERRORS.DUPLICATE_PARAM())
})

// A segment that is a reserved word makes `typeof new.x` a syntax error on the page. The last
// three are not reserved but are immutable globals: a path through them never reaches a function.
const RESERVED_WORDS = Object.freeze([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete',
  'do', 'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if',
  'implements', 'import', 'in', 'instanceof', 'interface', 'let', 'new', 'null', 'package',
  'private', 'protected', 'public', 'return', 'static', 'super', 'switch', 'this', 'throw', 'true',
  'try', 'typeof', 'var', 'void', 'while', 'with', 'yield',
  'undefined', 'NaN', 'Infinity'
])

// One regex for the whole rule (segments, dots, no reserved word as a segment): about 3x faster
// than splitting into segments and looking each up in a Set. Segments are separated by '.', which
// no segment may contain, so it cannot backtrack badly.
const SEGMENT = '(?!(?:' + RESERVED_WORDS.join('|') + ')(?![A-Za-z0-9_$]))[A-Za-z_$][A-Za-z0-9_$]*'
const CALLBACK_RE = new RegExp('^' + SEGMENT + '(?:\\.' + SEGMENT + ')*$')
const PLUS_RE = /\+/g

// Every character valid in an id or a callback is ASCII, so its percent-encoded form is at most
// three times longer: anything longer is rejected before it is decoded or matched.
const MAX_ENCODING_GROWTH = 3

// Ids are safe names (lib/names.js). The char-code table lets the common case (a plain id,
// nothing to decode) be checked in place before anything is sliced or matched.
const ID_CHARS = NAME_CHAR_CODES
const ID_RE = NAME_RE

// The longest key worth decoding: `callback` written entirely as %XX escapes.
const MAX_ENCODED_KEY = 'callback'.length * MAX_ENCODING_GROWTH

/**
 * @typedef {import('../../lib/errors').BeaconError} BeaconError
 * @typedef {{ id: string, callback: string|null, error: null }
 *   | { id: null, callback: null, error: BeaconError }} BeaconQuery
 */

/**
 * Parses the query string of a beacon request (the part after `?`). Only `id` and `callback`
 * are read; every other parameter (jQuery's `_=<timestamp>`, `callback[]`) is ignored without
 * being decoded.
 *
 * Rules: `+` is a space; values are percent-decoded only when they contain `%`; `id` matches
 * ^[A-Za-z0-9_-]{1,maxIdLength}$; `callback` is optional and is an ASCII identifier path
 * (segments ^[A-Za-z_$][A-Za-z0-9_$]*$ joined by '.', no reserved words) of at most
 * maxCallbackLength characters. ASCII-only is deliberate: it is what every JSONP client sends,
 * and it keeps escapes and look-alike characters out of the script we write.
 *
 * @param {string|undefined} queryString
 * @param {{ maxIdLength: number, maxCallbackLength: number }} limits
 * @returns {BeaconQuery} `error` is a shared, frozen coded error (never mutate it), or null
 */
function parseBeaconQuery (queryString, limits) {
  let idStart = -1
  let idEnd = -1
  let cbStart = -1
  let cbEnd = -1
  if (queryString) {
    const len = queryString.length
    let start = 0
    // Reused while it lies ahead, so many params without '=' do not rescan the rest each time.
    let nextEq = -1
    while (start < len) {
      let end = queryString.indexOf('&', start)
      if (end === -1) end = len
      if (nextEq < start) {
        nextEq = queryString.indexOf('=', start)
        if (nextEq === -1) nextEq = len
      }
      const eq = nextEq < end ? nextEq : end
      const keyLength = eq - start
      let key = 0 // 1 = id, 2 = callback
      if (keyLength === 2) {
        if (queryString.charCodeAt(start) === 105 && queryString.charCodeAt(start + 1) === 100) key = 1 // 'id'
      } else if (keyLength === 8) {
        if (queryString.startsWith('callback', start)) key = 2
      }
      if (key === 0 && keyLength > 2 && keyLength <= MAX_ENCODED_KEY) key = decodedKey(queryString.slice(start, eq))
      if (key === 1) {
        if (idStart !== -1) return fail(FAIL.DUPLICATE_PARAM)
        idStart = eq < end ? eq + 1 : end
        idEnd = end
      } else if (key === 2) {
        if (cbStart !== -1) return fail(FAIL.DUPLICATE_PARAM)
        cbStart = eq < end ? eq + 1 : end
        cbEnd = end
      }
      start = end + 1
    }
  }

  if (idStart === -1) return fail(FAIL.MISSING_ID)
  // An id was found, so there was a query string.
  const qs = /** @type {string} */ (queryString)
  const id = readId(qs, idStart, idEnd, limits.maxIdLength)
  if (typeof id !== 'string') return fail(id)
  if (cbStart === -1) return { id, callback: null, error: null }
  const callback = readCallback(qs, cbStart, cbEnd, limits.maxCallbackLength)
  if (typeof callback !== 'string') return fail(callback)
  return { id, callback, error: null }
}

/**
 * @param {string} queryString
 * @param {number} start
 * @param {number} end
 * @param {number} maxLength
 * @returns {string|BeaconError}
 */
function readId (queryString, start, end, maxLength) {
  const length = end - start
  if (length === 0) return FAIL.BAD_ID
  if (length <= maxLength) {
    let plain = true
    for (let i = start; i < end; i++) {
      const c = queryString.charCodeAt(i)
      if (c > 127 || ID_CHARS[c] === 0) {
        plain = false
        break
      }
    }
    if (plain) return queryString.slice(start, end)
  }
  const value = decodeValue(queryString, start, end, maxLength)
  if (value === undefined) return FAIL.BAD_QUERY
  return value !== null && ID_RE.test(value) ? value : FAIL.BAD_ID
}

/**
 * @param {string} queryString
 * @param {number} start
 * @param {number} end
 * @param {number} maxLength
 * @returns {string|BeaconError}
 */
function readCallback (queryString, start, end, maxLength) {
  const length = end - start
  if (length === 0) return FAIL.BAD_CALLBACK
  if (length <= maxLength) {
    // A raw value that already passes holds no '%' or '+', so there is nothing to decode.
    const raw = queryString.slice(start, end)
    if (CALLBACK_RE.test(raw)) return raw
  }
  const value = decodeValue(queryString, start, end, maxLength)
  if (value === undefined) return FAIL.BAD_QUERY
  return value !== null && CALLBACK_RE.test(value) ? value : FAIL.BAD_CALLBACK
}

/**
 * Decodes one value within a length budget.
 * @param {string} queryString
 * @param {number} start
 * @param {number} end
 * @param {number} maxLength
 * @returns {string|null|undefined} the value; null when it is too long or there was nothing to
 *   decode (so it stays invalid); undefined when its percent-encoding is malformed or not UTF-8
 */
function decodeValue (queryString, start, end, maxLength) {
  if (end - start > maxLength * MAX_ENCODING_GROWTH) return null
  let value = queryString.slice(start, end)
  const hasPlus = value.indexOf('+') !== -1
  const hasPercent = value.indexOf('%') !== -1
  if (!hasPlus && !hasPercent) return null
  if (hasPlus) value = value.replace(PLUS_RE, ' ')
  if (hasPercent) {
    try {
      value = decodeURIComponent(value)
    } catch {
      return undefined
    }
  }
  return value.length > 0 && value.length <= maxLength ? value : null
}

// A key spelled with escapes (`%69d`) is still `id`; one whose escapes are malformed is not a
// parameter we read, so it is ignored like any other unknown key.
/**
 * @param {string} raw
 * @returns {0|1|2}
 */
function decodedKey (raw) {
  if (raw.indexOf('%') === -1) return 0
  let key
  try {
    key = decodeURIComponent(raw.replace(PLUS_RE, ' '))
  } catch {
    return 0
  }
  return key === 'id' ? 1 : key === 'callback' ? 2 : 0
}

/**
 * Whether `value` is an identifier path we are willing to write into a script.
 * @param {string} value
 * @returns {boolean}
 */
function isCallbackPath (value) {
  return typeof value === 'string' && CALLBACK_RE.test(value)
}

/**
 * @param {BeaconError} error
 * @returns {BeaconQuery}
 */
function fail (error) {
  return { id: null, callback: null, error }
}

module.exports = { parseBeaconQuery, isCallbackPath, RESERVED_WORDS }
