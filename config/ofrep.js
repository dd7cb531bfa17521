'use strict'

const { OFREP_DEFAULTS } = require('./defaults')

/**
 * An endpoint's `ofrep` settings (docs/configuration.md), beside config/load.js: the switch
 * and its defaults, and the API keys.
 */

/**
 * `ofrep: true | false` is the switch: on, it becomes the object of options with the defaults
 * filled in; off, it is absent, as `cors` and `events` are when not declared.
 * @param {Record<string, any>} endpoint one endpoint of the merged settings, before validation
 */
function fillOfrep (endpoint) {
  if (endpoint.ofrep === false) delete endpoint.ofrep
  else if (endpoint.ofrep === true) endpoint.ofrep = {}
  const ofrep = endpoint.ofrep
  if (ofrep === null || typeof ofrep !== 'object' || Array.isArray(ofrep)) return
  const defaults = /** @type {Record<string, number>} */ (OFREP_DEFAULTS)
  for (const key of Object.keys(defaults)) if (!Object.hasOwn(ofrep, key)) ofrep[key] = defaults[key]
}

/**
 * The API keys of the endpoints' OFREP paths (`endpoints.<name>.ofrep.apiKeysEnv`), read from
 * the environment at load.
 *
 * A key is a secret, so the settings file names only the variable that holds it: committed
 * settings stay free of secrets, as with BEACON_ADMIN_TOKEN, and a deployment fills the
 * variable from its secret store. The variable is comma-separated, so a key can be rotated with
 * the old and the new one valid at once. A named variable that is unset or empty stops the
 * server rather than serving the endpoint without a key; messages never quote a key.
 */

// 16..256 printable ASCII characters, no space (a Bearer token ends at one) and no comma (the
// separator): a short key is a guessable one.
const API_KEY_RE = /^[\x21-\x2B\x2D-\x7E]{16,256}$/

/**
 * Sets `ofrep.apiKeys` (the keys, in order) on every endpoint whose `ofrep` names `apiKeysEnv`.
 * Runs after the schema check, on the mutable settings, as value files are read.
 * @param {Record<string, any>} settings validated, not yet frozen
 * @param {Record<string, string|undefined>} env
 * @param {(endpointName: string) => string} whereOf ' (in <file>)': where apiKeysEnv was set
 * @param {string[]} issues collects what is wrong
 */
function resolveOfrepKeys (settings, env, whereOf, issues) {
  for (const [name, endpoint] of Object.entries(settings.endpoints)) {
    if (!endpoint.ofrep || endpoint.ofrep.apiKeysEnv === undefined) continue
    const variable = endpoint.ofrep.apiKeysEnv
    const keys = String(env[variable] ?? '').split(',').map((k) => k.trim()).filter(Boolean)
    if (keys.length === 0) {
      issues.push(`endpoints.${name}.ofrep.apiKeysEnv names ${variable}, which is not set: ` +
        `it must hold the API keys${whereOf(name)}`)
    } else if (!keys.every((k) => API_KEY_RE.test(k))) {
      issues.push(`env ${variable} (endpoints.${name}.ofrep.apiKeysEnv) must hold comma-separated API keys ` +
        `of 16 to 256 printable ASCII characters without spaces${whereOf(name)}`)
    } else {
      endpoint.ofrep.apiKeys = keys
    }
  }
}

module.exports = { fillOfrep, resolveOfrepKeys }
