'use strict'

/**
 * The bearer token the CLI sends to an admin API: BEACON_ADMIN_TOKEN, the file
 * BEACON_ADMIN_TOKEN_FILE names, or, for an admin API on this machine, the token `npm start`
 * keeps in the state dir (config/admin-token.js). The state dir is the settings' (BEACON_STATE_DIR,
 * BEACON_CONFIG_FILE), or the default one when the settings do not load.
 */

const path = require('node:path')
const { loadSettings } = require('../config')
const { DEFAULTS } = require('../config/defaults')
const { cliAdminToken } = require('../config/admin-token')

// Read once per admin URL and environment: `log scan` asks before every page, and the
// programmatic API (main()) may run with another environment each time.
/** @type {Map<string, { token: string|null, file?: string }>} */
const known = new Map()
const ENV_NAMES = ['BEACON_ADMIN_TOKEN', 'BEACON_ADMIN_TOKEN_FILE', 'BEACON_STATE_DIR', 'BEACON_CONFIG_FILE']

function stateDir () {
  try {
    return loadSettings().stateDir
  } catch {
    return path.resolve(process.env.BEACON_STATE_DIR || DEFAULTS.stateDir)
  }
}

/**
 * @param {string} base the admin API's URL
 * @returns {{ token: string|null, file?: string }} file: where the token was read, if from a file
 * @throws {Error} a token file that is named but cannot be read
 */
function adminAuth (base) {
  const key = JSON.stringify([base, ...ENV_NAMES.map((name) => process.env[name] ?? '')])
  if (!known.has(key)) known.set(key, cliAdminToken({ adminUrl: base, stateDir: stateDir() }))
  return /** @type {{ token: string|null, file?: string }} */ (known.get(key))
}

/**
 * @param {string} base
 * @returns {Record<string, string>} the Authorization header, when there is a token
 */
function authHeaders (base) {
  const { token } = adminAuth(base)
  return token ? { Authorization: `Bearer ${token}` } : {}
}

/**
 * What to say after a 401.
 * @param {string} base
 * @returns {string}
 */
function unauthorizedHint (base) {
  const { token, file } = adminAuth(base)
  if (!token) return ' (set BEACON_ADMIN_TOKEN or BEACON_ADMIN_TOKEN_FILE)'
  // The usual cause: a server started with another state dir keeps its token in that dir.
  return file
    ? ` (the token in ${file} was refused: for a server started with another state dir, set BEACON_STATE_DIR ` +
      'to it, or BEACON_ADMIN_TOKEN_FILE or BEACON_ADMIN_TOKEN)'
    : ' (check BEACON_ADMIN_TOKEN)'
}

module.exports = { adminAuth, authHeaders, unauthorizedHint }
