'use strict'

/**
 * JSON pointers (RFC 6901) into the settings being loaded, and where each was set
 * (config/load.js): an origin is `in <file>`, `from env <NAME>` or `in overrides`.
 */

/**
 * Where a pointer (or its nearest ancestor) was last set; '' for defaults.
 * @param {Map<string, string>} origins JSON pointer → where it was last set
 * @param {string} pointer
 * @returns {string}
 */
function originOf (origins, pointer) {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
    const origin = origins.get(p)
    if (origin) return ' (' + origin + ')'
    if (p === '') return ''
  }
}

/**
 * Drops the origins of a pointer and of everything below it.
 * @param {Map<string, string>} origins
 * @param {string} pointer
 */
function forget (origins, pointer) {
  for (const key of origins.keys()) {
    if (key === pointer || key.startsWith(pointer + '/')) origins.delete(key)
  }
}

/**
 * @param {unknown} root
 * @param {string} pointer
 * @returns {unknown} undefined where the path leaves the objects
 */
function valueAt (root, pointer) {
  let value = root
  for (const key of pointer.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined
    value = /** @type {Record<string, unknown>} */ (value)[unescapePointer(key)]
  }
  return value
}

/**
 * A pointer as a reader writes the key: `/endpoints/a/accessLog/0` → `endpoints.a.accessLog[0]`.
 * @param {string} pointer
 * @param {unknown} root
 * @returns {string}
 */
function displayPointer (pointer, root) {
  let out = ''
  let value = root
  for (const raw of pointer.split('/').slice(1)) {
    const key = unescapePointer(raw)
    out += Array.isArray(value) ? '[' + key + ']' : (out ? '.' : '') + key
    value = value !== null && typeof value === 'object'
      ? /** @type {Record<string, unknown>} */ (value)[key]
      : undefined
  }
  return out || '(settings)'
}

/** @param {string|number} key @returns {string} */
function escapePointer (key) {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1')
}

/** @param {string} key @returns {string} */
function unescapePointer (key) {
  return key.replace(/~1/g, '/').replace(/~0/g, '~')
}

module.exports = { originOf, forget, valueAt, displayPointer, escapePointer }
