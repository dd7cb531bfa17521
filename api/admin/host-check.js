'use strict'

const net = require('node:net')
const { ERRORS } = require('../../lib/errors')
const { sendError } = require('../error-body')

/**
 * The admin port answers only requests addressed to it by one of its own names, so that a page
 * an operator opens cannot rebind its own host name to 127.0.0.1 and read the admin port from
 * the operator's browser (DNS rebinding: the browser then sends the page's name as Host). Its
 * names: `localhost`, the address it is bound to (any IP address when bound to all of them: an
 * address is never a rebound name), and `admin.allowedHosts` (the names a proxy or an operator
 * reaches it by); each with no port or the bound one (a name listed with a port: that port).
 * Other Hosts get 421 Misdirected Request.
 */

/**
 * @param {string} host a Host header, lower-cased
 * @returns {{ name: string, port: number|null }|null} null: not a host[:port]
 */
function splitHost (host) {
  let name = host
  let rest = ''
  if (host.startsWith('[')) {
    const close = host.indexOf(']')
    if (close < 0) return null
    name = host.slice(1, close)
    if (!net.isIPv6(name)) return null
    rest = host.slice(close + 1)
  } else {
    const colon = host.indexOf(':')
    if (colon >= 0) {
      name = host.slice(0, colon)
      rest = host.slice(colon)
    }
  }
  if (name === '') return null
  if (rest === '') return { name, port: null }
  return /^:\d{1,5}$/.test(rest) ? { name, port: Number(rest.slice(1)) } : null
}

/**
 * @param {object} options
 * @param {() => { address: string, port: number }|null} options.address where the admin port
 *   is bound (server.address()), null before it listens
 * @param {string[]} [options.allowedHosts] more names (settings.admin.allowedHosts), a name or name:port each
 * @returns {(host: string|undefined) => boolean} whether a request with this Host is the admin port's
 */
function createHostCheck ({ address, allowedHosts = [] }) {
  const names = new Set(['localhost'])
  /** @type {Set<string>} names given with a port: that port only */
  const withPort = new Set()
  for (const entry of allowedHosts) {
    const split = splitHost(entry.toLowerCase())
    if (split === null) continue // the settings schema refuses these
    if (split.port === null) names.add(split.name)
    else withPort.add(`${split.name}:${split.port}`)
  }
  /** @type {{ address: string, port: number, anyAddress: boolean }|null} */
  let bound = null
  return function isOwnHost (host) {
    // No Host at all (HTTP/1.0): no browser sends such a request, so no page can have made it.
    if (host === undefined) return true
    if (bound === null) {
      const where = address()
      if (where === null) return false
      const anyAddress = where.address === '0.0.0.0' || where.address === '::'
      bound = { address: where.address.toLowerCase(), port: where.port, anyAddress }
    }
    const split = splitHost(host.toLowerCase())
    if (split === null) return false
    if (split.port !== null && withPort.has(`${split.name}:${split.port}`)) return true
    if (split.port !== null && split.port !== bound.port) return false
    return names.has(split.name) || split.name === bound.address || (bound.anyAddress && net.isIP(split.name) !== 0)
  }
}

/**
 * Express middleware answering 421 to a request not addressed to the admin port by its own name.
 * @param {(host: string|undefined) => boolean} isOwnHost createHostCheck()
 * @returns {import('express').RequestHandler}
 */
function hostGuard (isOwnHost) {
  return (req, res, next) => {
    if (isOwnHost(req.headers.host)) return next()
    sendError(res, MISDIRECTED)
  }
}

const MISDIRECTED = Object.freeze(new ERRORS.MISDIRECTED_REQUEST())

module.exports = { createHostCheck, hostGuard, splitHost }
