'use strict'

const crypto = require('node:crypto')
const { serializeConfig } = require('./script-json')

/**
 * A config entry as the data plane serves it: the toggles serialized once per version into
 * script-safe JSON, and the ETag that identifies that version.
 * @typedef {{ found: boolean, json: string, etag: string, version: string, variant: string|null }} ConfigEntry
 *   variant: the rollout variant it is (lib/toggles/rollout.js), null for an id's own row and the default
 */

/**
 * @param {object} value the toggles object
 * @param {string} version opaque, changes whenever the value does
 * @param {boolean} found false when this is the endpoint's default for an absent id
 * @param {string|null} [variant] the rollout variant this config is, for an absent id
 * @returns {ConfigEntry}
 */
function configEntry (value, version, found, variant = null) {
  return Object.freeze({ found, json: serializeConfig(value), etag: `"${version}"`, version, variant })
}

/**
 * A version for a value that has no store timestamp (fixed config, defaults): a content hash.
 * @param {string} prefix
 * @param {object} value
 * @returns {string}
 */
function contentVersion (prefix, value) {
  return prefix + crypto.createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 16)
}

module.exports = { configEntry, contentVersion }
