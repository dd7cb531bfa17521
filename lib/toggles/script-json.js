'use strict'

/** Script-safe JSON: the form in which toggles are cached and served (once per version). */

// Inside a <script>, `</script>` and `<!--` end or change the element whatever the JS says, and
// before ES2019 U+2028/U+2029 ended a string literal. Escaped, they are the same JSON value.
const UNSAFE_RE = /[<>&\u2028\u2029]/g
/** @type {Record<string, string>} the keys UNSAFE_RE matches */
const UNSAFE_ESCAPES = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' }

/**
 * JSON text that is safe to embed in a script: `<`, `>`, `&`, U+2028 and U+2029 are written as
 * \u escapes, and `__proto__` keys are left out. Call it once per config version, not per
 * request.
 * @param {unknown} value a JSON-serializable value (configs are objects)
 * @returns {string}
 */
function serializeConfig (value) {
  let json = JSON.stringify(value)
  if (json === undefined) throw new TypeError('serializeConfig: value is not JSON-serializable')
  // JSON.parse makes "__proto__" an own key, but the same text run as a script literal sets the
  // object's prototype instead: the page would see something other than the data. Rare, so only
  // then is the value serialized again, without those keys.
  if (json.includes('"__proto__"')) json = JSON.stringify(value, withoutProtoKeys)
  return json.replace(UNSAFE_RE, escapeUnsafe)
}

/** @param {string} key @param {unknown} value @returns {unknown} */
function withoutProtoKeys (key, value) {
  return key === '__proto__' ? undefined : value
}

/** @param {string} ch @returns {string} */
function escapeUnsafe (ch) {
  return UNSAFE_ESCAPES[ch]
}

module.exports = { serializeConfig }
