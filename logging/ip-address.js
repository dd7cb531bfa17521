'use strict'

const net = require('node:net')
const crypto = require('node:crypto')

/**
 * Client addresses as the access log may store them: cut to a network prefix, or replaced by a
 * keyed hash (logging/privacy.js picks which, per sink). Input is `socket.remoteAddress`, which
 * node gives as dotted IPv4, IPv6 text (compressed, maybe with a `%zone`), or, on a dual-stack
 * socket (`HOST=::`), an IPv4 client as the IPv4-mapped `::ffff:a.b.c.d`. Anything else (null,
 * not a string, not an address) maps to null: nothing here throws.
 *
 * An IPv4-mapped address is an IPv4 client, so it is treated, and printed, as plain IPv4: the
 * same visitor gives the same stored value whether the server listens on 0.0.0.0 or on ::.
 */

/** Hex characters of a hashed address: 64 bits (see hashAddress). */
const HASH_HEX_CHARS = 16

/**
 * @typedef {{ v4: number[] } | { v6: number[] }} Parsed 4 octets, or 8 hextets (16-bit numbers)
 */

/**
 * @param {unknown} ip
 * @returns {Parsed|null} null: not an address
 */
function parseAddress (ip) {
  if (typeof ip !== 'string') return null
  // An IPv6 zone (`fe80::1%eth0`) names this host's interface: not part of the client's address.
  const zone = ip.indexOf('%')
  const bare = zone === -1 ? ip : ip.slice(0, zone)
  const kind = net.isIP(bare)
  if (kind === 4) return zone === -1 ? { v4: bare.split('.').map(Number) } : null
  if (kind !== 6) return null
  const h = hextets(bare)
  // ::ffff:0:0/96 is an IPv4 client on an IPv6 socket.
  if (h[0] === 0 && h[1] === 0 && h[2] === 0 && h[3] === 0 && h[4] === 0 && h[5] === 0xffff) {
    return { v4: [h[6] >> 8, h[6] & 0xff, h[7] >> 8, h[7] & 0xff] }
  }
  return { v6: h }
}

/**
 * Expands IPv6 text that net.isIPv6 accepted (`::1`, `2001:db8::1`, `::ffff:1.2.3.4`, full
 * forms) to its 8 hextets: `::` stands for as many zero hextets as are missing, and a dotted
 * IPv4 tail for the last two.
 * @param {string} text
 * @returns {number[]}
 */
function hextets (text) {
  const out = [0, 0, 0, 0, 0, 0, 0, 0]
  let s = text
  let last = 8 // one past the last hextet the text's groups fill
  const lastColon = s.lastIndexOf(':')
  if (s.indexOf('.', lastColon) !== -1) {
    const v4 = s.slice(lastColon + 1).split('.')
    out[6] = (Number(v4[0]) << 8) | Number(v4[1])
    out[7] = (Number(v4[2]) << 8) | Number(v4[3])
    last = 6
    s = s.slice(0, s.endsWith('::', lastColon + 1) ? lastColon + 1 : lastColon)
  }
  const gap = s.indexOf('::')
  const head = gap === -1 ? s : s.slice(0, gap)
  if (head !== '') head.split(':').forEach((g, i) => { out[i] = parseInt(g, 16) })
  const rest = gap === -1 ? '' : s.slice(gap + 2)
  if (rest !== '') {
    const groups = rest.split(':')
    groups.forEach((g, i) => { out[last - groups.length + i] = parseInt(g, 16) })
  }
  return out
}

/**
 * The client's network: IPv4 /24 (`a.b.c.0`), IPv6 /48 (its first three hextets, then `::`,
 * always three, in lower case without leading zeros: `2001:db8:0::`), an IPv4-mapped address as
 * IPv4. A /24 and a /48 are what a site, an office or a home line is given; they still tell a
 * region and a provider apart, which is what the log is read for.
 * @param {unknown} ip
 * @returns {string|null} null for null or anything that is not an address
 */
function truncateAddress (ip) {
  const a = parseAddress(ip)
  if (a === null) return null
  if ('v4' in a) return `${a.v4[0]}.${a.v4[1]}.${a.v4[2]}.0`
  return `${a.v6[0].toString(16)}:${a.v6[1].toString(16)}:${a.v6[2].toString(16)}::`
}

/**
 * HMAC-SHA256 of the address's bytes (4 for IPv4 and IPv4-mapped, 16 for IPv6, so every text
 * form of one address gives one hash) under `key`, as its first 16 hex characters (64 bits).
 * 64 bits keep accidental collisions negligible for a day's addresses (about 3 in a million
 * for ten million distinct ones) while the stored value stays short; more bits would not make
 * it harder to reverse, since that needs the key, not the bits.
 * @param {unknown} ip
 * @param {Buffer|null} key the day's key; null (no key yet): null
 * @returns {string|null} null for null, anything that is not an address, or no key
 */
function hashAddress (ip, key) {
  if (key === null) return null
  const a = parseAddress(ip)
  if (a === null) return null
  let bytes
  if ('v4' in a) {
    bytes = Buffer.from(a.v4)
  } else {
    bytes = Buffer.allocUnsafe(16)
    for (let i = 0; i < 8; i++) bytes.writeUInt16BE(a.v6[i], 2 * i)
  }
  return crypto.createHmac('sha256', key).update(bytes).digest('hex').slice(0, HASH_HEX_CHARS)
}

module.exports = { parseAddress, truncateAddress, hashAddress, HASH_HEX_CHARS }
