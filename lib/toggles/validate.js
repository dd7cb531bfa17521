'use strict'

/**
 * The one check every stored config passes (config set, a rollout's variants, an import's lines):
 * pure, so the admin API and the CLI's `config import --dry-run` apply the same rules.
 */

const KEY_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/
const MAX_DEPTH = 4
const MAX_STRING = 1024

/**
 * Checks a toggles object: keys are short identifiers, values are booleans, finite numbers,
 * short strings, null or nested objects (depth-limited). Arrays are allowed for strings/numbers.
 * @param {unknown} value
 * @returns {string|null} the first problem, naming the key path, or null when valid
 */
function validateToggles (value, path = 'body', depth = 0) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${path} must be a JSON object`
  if (depth >= MAX_DEPTH) return `${path} nests deeper than ${MAX_DEPTH} levels`
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key}`
    if (!KEY_PATTERN.test(key) || key === '__proto__') {
      return `${path} has an invalid key (keys are 1-64 of A-Z a-z 0-9 _ . -)`
    }
    if (v === null || typeof v === 'boolean') continue
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${at} must be a finite number`
      continue
    }
    if (typeof v === 'string') {
      if (v.length > MAX_STRING) return `${at} is longer than ${MAX_STRING} characters`
      continue
    }
    if (Array.isArray(v)) {
      if (v.length > 100 ||
      !v.every((x) => (typeof x === 'string' && x.length <= MAX_STRING) ||
        (typeof x === 'number' && Number.isFinite(x)))) {
        return `${at} must be an array of at most 100 strings or numbers`
      }
      continue
    }
    const nested = validateToggles(v, at, depth + 1)
    if (nested) return nested
  }
  return null
}

module.exports = { validateToggles }
