'use strict'

const net = require('node:net')
const { parseAddress } = require('../../logging/ip-address')
const { createProxyTrust } = require('./trusted-proxies')

/**
 * Per-client limits on the public port: a token bucket per client and endpoint, in this
 * worker's memory. A client is an IPv4 address or an IPv6 /64 (one subscriber's usual share),
 * taken from `X-Forwarded-For` only when the peer is a trusted proxy. Over the limit the data
 * plane answers 429 with Retry-After (api/public/data-plane.js), counts it, and logs no entry.
 *
 * Written here rather than taken from rate-limiter-flexible: its memory limiter answers through
 * a promise per request and keeps a timer per key; this is a Map lookup and two multiplications
 * on the hot path (docs/configuration.md has the measured cost of both).
 */

/**
 * @typedef {object} RateLimiter
 * @property {(client: string) => number} take 0: allowed (a token taken); else the whole
 *   seconds until the next token (Retry-After)
 * @property {() => number} size clients held
 */

/**
 * @param {{ perSecond: number, burst?: number, maxClients?: number, now?: () => number }} options
 *   perSecond > 0; burst: the bucket's size (default twice perSecond, at least 1); maxClients:
 *   the table's bound; now: milliseconds, monotonic
 * @returns {RateLimiter}
 */
function createRateLimiter ({ perSecond, burst = 0, maxClients = 100000, now = () => performance.now() }) {
  if (!(perSecond > 0)) throw new RangeError('perSecond must be > 0')
  const capacity = burst > 0 ? burst : Math.max(1, 2 * perSecond)
  const perMs = perSecond / 1000
  // How long an idle bucket takes to fill: past that it is the same as no bucket at all.
  const fillMs = capacity / perMs
  /** @type {Map<string, { tokens: number, at: number }>} */
  const buckets = new Map()

  /**
   * Makes room: buckets that would be full by now go first (they hold nothing a new bucket
   * would not), then the oldest, down to nine tenths of the bound, so this runs once per tenth
   * of the table's inserts at most. Dropping a bucket only ever lets a client through sooner.
   * @param {number} t
   */
  function evict (t) {
    for (const [client, b] of buckets) if (t - b.at >= fillMs) buckets.delete(client)
    const keep = Math.floor(maxClients * 0.9)
    for (const client of buckets.keys()) {
      if (buckets.size <= keep) break
      buckets.delete(client)
    }
  }

  return {
    take (client) {
      const t = now()
      const b = buckets.get(client)
      if (b === undefined) {
        if (buckets.size >= maxClients) evict(t)
        buckets.set(client, { tokens: capacity - 1, at: t })
        return 0
      }
      const tokens = Math.min(capacity, b.tokens + (t - b.at) * perMs)
      b.at = t
      if (tokens >= 1) {
        b.tokens = tokens - 1
        return 0
      }
      b.tokens = tokens
      return Math.max(1, Math.ceil((1 - tokens) / perMs / 1000))
    },
    size: () => buckets.size
  }
}

/**
 * The client a request counts for.
 * @param {{ socket: { remoteAddress?: string }, headers: Record<string, string|string[]|undefined> }} req
 * @param {(address: string) => boolean} isTrusted whether an address is a proxy whose
 *   X-Forwarded-For is believed (api/public/trusted-proxies.js)
 * @returns {string} an IPv4 address, `<first 4 hextets>::/64`, or '' when the socket has none
 */
function clientOf (req, isTrusted) {
  const peer = req.socket.remoteAddress || ''
  const forwarded = req.headers['x-forwarded-for']
  if (typeof forwarded !== 'string' || !isTrusted(peer)) return clientKey(peer)
  // The rightmost address that is not a trusted proxy's: each proxy appends the peer it saw,
  // so what lies left of the first untrusted one is whatever the client chose to send.
  const hops = forwarded.split(',')
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i].trim()
    if (isTrusted(hop)) continue
    return net.isIP(hop) ? clientKey(hop) : clientKey(peer)
  }
  return clientKey(peer)
}

/**
 * @param {string} address socket or header text
 * @returns {string} IPv4 as it is (an IPv4-mapped IPv6 address too), IPv6 cut to its /64
 */
function clientKey (address) {
  if (address.indexOf(':') === -1) return address
  if (address.startsWith('::ffff:') && address.indexOf('.') !== -1) return address.slice(7)
  const parsed = parseAddress(address)
  if (parsed === null) return address
  if ('v4' in parsed) return parsed.v4.join('.')
  return parsed.v6.slice(0, 4).map((h) => h.toString(16)).join(':') + '::/64'
}

/**
 * The limiters of these settings, one per endpoint that has a limit (the global `rateLimit`,
 * or the endpoint's own `rateLimit`, which wins; perSecond 0: none).
 * @param {import('../../config/load').Settings} settings validated (config/): `rateLimit` and each
 *   endpoint's `rateLimit`
 * @param {{ now?: () => number }} [deps] now: the buckets' clock in milliseconds (a test's own)
 * @returns {{ limiters: Map<string, RateLimiter>, clientOf: (req: import('http').IncomingMessage) => string,
 *   isTrusted: (peer: string) => boolean, describe: Record<string, { perSecond: number, burst: number }> }}
 *   isTrusted: whether a peer is a trusted proxy
 */
function createRateLimits (settings, { now } = {}) {
  const global = settings.rateLimit
  const isTrusted = createProxyTrust(global.trustedProxies)
  /** @type {Map<string, RateLimiter>} */
  const limiters = new Map()
  /** @type {Record<string, { perSecond: number, burst: number }>} */
  const describe = {}
  for (const [name, endpoint] of Object.entries(settings.endpoints)) {
    const own = endpoint.rateLimit || {}
    const perSecond = own.perSecond ?? global.perSecond
    const burst = own.burst ?? (own.perSecond !== undefined ? 0 : global.burst)
    if (!(perSecond > 0)) continue
    limiters.set(name, createRateLimiter({ perSecond, burst, maxClients: global.maxClients, ...(now ? { now } : {}) }))
    describe[name] = { perSecond, burst: burst > 0 ? burst : Math.max(1, 2 * perSecond) }
  }
  return { limiters, clientOf: (req) => clientOf(req, isTrusted), isTrusted, describe }
}

module.exports = { createRateLimiter, createRateLimits, clientOf, clientKey }
