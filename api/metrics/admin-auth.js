'use strict'

const client = require('prom-client')

/**
 * `beacon_admin_auth_failures_total`: admin requests that carried a wrong token
 * (api/admin/auth-failures.js), registered at the first, so a port no one guesses at has none.
 * @param {import('prom-client').Registry} register
 * @returns {() => void} counts one
 */
function countAuthFailures (register) {
  /** @type {import('prom-client').Counter|null} */
  let failures = null
  return () => {
    failures ??= new client.Counter({
      name: 'beacon_admin_auth_failures_total',
      help: 'Admin-port requests refused with 401 that carried a token, a wrong one (api/admin/auth-failures.js)',
      registers: [register]
    })
    failures.inc()
  }
}

module.exports = { countAuthFailures }
