'use strict'

const net = require('node:net')

/**
 * Which peers are proxies whose `X-Forwarded-For` is believed (settings
 * `rateLimit.trustedProxies`): addresses, CIDR blocks (`10.0.0.0/8`, `fd00::/8`) and two names,
 * `loopback` and `private`, for the networks a load balancer in front of beacon sits on. A
 * client on the public internet has none of those addresses, so by default its own address
 * counts, while a balancer on a private network passes on its clients' (docs/configuration.md,
 * "Rate limits").
 *
 * node's BlockList matches, at about a microsecond a check; the answer is remembered per peer
 * (a bounded table), and a request without the header never asks.
 */

/** @type {Readonly<Record<string, [string, number, 'ipv4'|'ipv6'][]>>} */
const NAMED = Object.freeze({
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  // RFC 1918, link-local, and IPv6 unique-local and link-local.
  private: [
    ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['169.254.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'], ['fe80::', 10, 'ipv6']
  ]
})
const MAX_REMEMBERED = 10000

/**
 * @param {readonly string[]} entries addresses, CIDR blocks, `loopback`, `private`
 * @returns {(peer: string) => boolean} whether a peer address is a trusted proxy's
 * @throws {RangeError} naming the entry that is none of those
 */
function createProxyTrust (entries) {
  if (entries.length === 0) return () => false
  const list = new net.BlockList()
  for (const entry of entries) addEntry(list, entry)
  /** @type {Map<string, boolean>} */
  const remembered = new Map()
  return function isTrusted (peer) {
    let trusted = remembered.get(peer)
    if (trusted !== undefined) return trusted
    const kind = net.isIP(peer)
    trusted = kind !== 0 && list.check(peer, kind === 4 ? 'ipv4' : 'ipv6')
    // A full table starts over: the peers of a balanced deployment are few, so this is rare.
    if (remembered.size >= MAX_REMEMBERED) remembered.clear()
    remembered.set(peer, trusted)
    return trusted
  }
}

/**
 * @param {import('node:net').BlockList} list
 * @param {string} entry
 */
function addEntry (list, entry) {
  const named = NAMED[entry]
  if (named !== undefined) {
    for (const [network, prefix, type] of named) list.addSubnet(network, prefix, type)
    return
  }
  const slash = entry.indexOf('/')
  const address = slash === -1 ? entry : entry.slice(0, slash)
  const kind = net.isIP(address)
  const bits = kind === 4 ? 32 : 128
  const prefix = slash === -1 ? bits : Number(entry.slice(slash + 1))
  if (kind === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
    throw new RangeError(`rateLimit.trustedProxies: ${JSON.stringify(entry)} ` +
      'is not an address, a CIDR block, loopback or private')
  }
  list.addSubnet(address, prefix, kind === 4 ? 'ipv4' : 'ipv6')
}

module.exports = { createProxyTrust }
