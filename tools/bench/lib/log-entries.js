'use strict'

/**
 * Realistic access-log entries for the storage bench (tools/bench/log-bytes.js), built with the data
 * plane's own constructors (logging/access-entry.js) so the rows carry what production rows
 * carry: ids 1..`ids` at random, the five endpoints' names, the statuses a `no-cache` endpoint
 * answers (mostly 200 and 304), real-looking user agents, referers, IPv4 and IPv6 addresses,
 * some events, and timestamps spread evenly over one day.
 *
 * A visitor keeps an address and a browser per id (most visits of an id come from the same
 * device), as real logs do; that is what lets compression find repeats. Seeded: every variant
 * of a run stores the same rows.
 */

const { log: { accessEntry, eventEntry }, settings: { DEFAULTS } } = require('../../../index.js')
const { createRandom } = require('../../chaos')

const DAY_MS = 86400000

/** The endpoints config/defaults.js declares (sample1..sample5). */
const ENDPOINTS = Object.keys(DEFAULTS.endpoints)

const BROWSERS = [
  (v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`,
  (v) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`,
  (v) => `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Mobile Safari/537.36`,
  (v) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`,
  (v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:${v - 2}.0) Gecko/20100101 Firefox/${v - 2}.0`,
  (v) => `Mozilla/5.0 (iPhone; CPU iPhone OS 18_${v % 7} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) ` +
    `Version/18.${v % 7} Mobile/15E148 Safari/604.1`,
  (v) => `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.${v % 7} Safari/605.1.15`,
  (v) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36 ` +
    `Edg/${v}.0.${2900 + v}.${v % 90}`
]

const SITES = ['https://shop.example.com', 'https://www.example.org', 'https://news.example.net', 'https://m.example.com']
const PATHS = [
  (r) => `/p/${r(90000) + 10000}`,
  (r) => `/news/2026/11/${r(28) + 1}/story-${r(5000)}`,
  (r) => `/search?q=item+${r(2000)}&page=${r(5) + 1}`,
  (r) => `/category/${['shoes', 'books', 'garden', 'toys', 'phones'][r(5)]}`,
  () => '/'
]
/** @type {Array<[number, number]>} status, share */
const STATUSES = [[200, 0.74], [304, 0.2], [400, 0.04], [503, 0.02]]

/**
 * @param {() => number} random
 * @returns {string} a global-looking IPv4 address (no private, loopback or multicast ranges)
 */
function ipv4 (random) {
  const first = [31, 46, 62, 77, 81, 84, 89, 91, 93, 95, 176, 178, 185, 188, 193, 212, 213, 217][Math.floor(random() * 18)]
  return `${first}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`
}

/**
 * @param {() => number} random
 * @returns {string} a global unicast IPv6 address as Node prints it (lower case, no zero groups)
 */
function ipv6 (random) {
  const hex = () => (0x1000 + Math.floor(random() * 0xefff)).toString(16)
  const prefix = ['2a02', '2a01', '2001', '2600', '2804', '2409'][Math.floor(random() * 6)]
  return [prefix, hex(), hex(), hex(), hex(), hex(), hex(), hex()].join(':')
}

/**
 * @param {() => number} random
 * @returns {{ ip: string, ua: string }} one visitor's device
 */
function visitor (random) {
  const ip = random() < 0.3 ? ipv6(random) : ipv4(random)
  const ua = BROWSERS[Math.floor(random() * BROWSERS.length)](128 + Math.floor(random() * 4))
  return { ip, ua }
}

/**
 * @param {Array<[number, number]>} weighted value, probability (summing to 1)
 * @param {number} u uniform in [0, 1)
 * @returns {number}
 */
function pick (weighted, u) {
  for (const [value, p] of weighted) {
    if (u < p) return value
    u -= p
  }
  return weighted[weighted.length - 1][0]
}

/**
 * A generator of `count` entries, in time order over [dayStart, dayStart + 1 day).
 * @param {{ count: number, ids?: number, dayStart?: number, seed?: number, eventShare?: number }} spec
 *   eventShare: the share of entries that are events (a page's exposure reports)
 * @returns {Generator<import('../../../logging/access-entry').AccessEntry|import('../../../logging/access-entry').EventEntry>}
 */
function * logEntries ({ count, ids = 10000, dayStart = Date.UTC(2026, 10, 25), seed = 24, eventShare = 0.1 }) {
  const random = createRandom(seed)
  const r = (n) => Math.floor(random() * n)
  /** @type {Map<number, { ip: string, ua: string }>} */
  const visitors = new Map()
  for (let i = 0; i < count; i++) {
    const id = 1 + r(ids)
    if (!visitors.has(id)) visitors.set(id, visitor(random))
    const device = random() < 0.15 ? visitor(random) : visitors.get(id)
    const ts = dayStart + Math.floor((i * DAY_MS) / count)
    const ref = random() < 0.3 ? null : SITES[r(SITES.length)] + PATHS[r(PATHS.length)](r)
    const common = { ts, endpoint: ENDPOINTS[r(ENDPOINTS.length)], id: String(id), ip: device.ip, ua: device.ua, ref }
    if (random() < eventShare) {
      yield eventEntry({ ...common, event: 'exposure', variant: random() < 0.5 ? 'A' : 'B' })
    } else {
      // Handler latency: mostly a cache hit (tens of µs), a tail of HBase reads.
      const ms = random() < 0.9 ? 0.02 + random() * 0.2 : 0.5 + random() * random() * 20
      yield accessEntry({ ...common, status: pick(STATUSES, random()), ms })
    }
  }
}

module.exports = { logEntries, ENDPOINTS, DAY_MS }
