'use strict'

const { DEFAULTS } = require('./defaults')

/**
 * The environment a second shell's `npx beacon …` needs to reach this server and read its token
 * (bin/admin-auth.js): nothing for the default admin port and state dir, else BEACON_ADMIN_URL
 * and BEACON_STATE_DIR, so the commands the start-up banner prints work as printed.
 * @param {{ adminPort: number, stateDir: string }} settings
 * @returns {string} `NAME=value ` pairs, each followed by a space (empty for the defaults)
 */
function cliEnvFor (settings) {
  const pairs = []
  if (settings.adminPort !== DEFAULTS.adminPort) pairs.push(`BEACON_ADMIN_URL=http://127.0.0.1:${settings.adminPort}`)
  if (settings.stateDir !== DEFAULTS.stateDir) pairs.push(`BEACON_STATE_DIR=${shellWord(settings.stateDir)}`)
  return pairs.map((pair) => pair + ' ').join('')
}

/** @param {string} text @returns {string} `text` as one shell word */
function shellWord (text) {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`
}

module.exports = { cliEnvFor }
