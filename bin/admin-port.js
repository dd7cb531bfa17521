'use strict'

const { ERRORS } = require('../lib/errors')

/**
 * The CLI pointed at something that is not beacon's admin port (its public port, most often):
 * told apart from the admin port's own 404s, so the error says where the CLI should point.
 */

/**
 * Whether a 404 came from something other than beacon's admin port (its public port, most
 * likely): the plain "no such endpoint" every beacon port answers an unknown path with, from a
 * server that has no /healthz.
 * @param {string} base
 * @param {string} text the 404's body
 * @returns {Promise<boolean>}
 */
async function notAnAdminPort (base, text) {
  let body
  try { body = JSON.parse(text) } catch { return true }
  if (!body || !body.error || body.error.code !== 'NOT_FOUND' || body.error.message !== ERRORS.NOT_FOUND.message) return false
  try {
    const res = await fetch(new URL('/healthz', base), { signal: AbortSignal.timeout(2000) })
    const health = /** @type {{ status?: unknown }|null} */ (res.ok ? await res.json() : null)
    return !health || health.status !== 'ok'
  } catch {
    return true
  }
}

/**
 * @param {string} base
 * @returns {string}
 */
function notAdminPortMessage (base) {
  return `${base} is not beacon's admin port: it has no /healthz (the public port, PORT, answers /api/… only). ` +
    'The CLI talks to the admin port: ADMIN_PORT, 4001 by default (BEACON_ADMIN_URL or --url)'
}

module.exports = { notAnAdminPort, notAdminPortMessage }
