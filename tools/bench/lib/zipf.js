'use strict'

/**
 * Id draws for the scale bench's config load (tools/bench/lib/scale-config.js): uniform over ids
 * 1..n, or Zipf-skewed (rank k drawn with probability k^-s / H(n, s)), and what a cache of `c`
 * entries can at best hit under each. Pure: the random source is injected.
 *
 * The Zipf sampler is rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to
 * generate variates from monotone discrete distributions", 1996; the method of Apache Commons
 * RNG's RejectionInversionZipfSampler): O(1) per draw and no table, so 10 million ids cost no
 * memory. Ranks are spread over the ids by a fixed permutation, so the hot ids are not the
 * neighbours 1, 2, 3… (which would share HBase blocks and make the store look faster than it is).
 */

/** log1p(x) / x, exact near 0. */
function helper1 (x) {
  return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x * (0.5 - x * (1 / 3 - 0.25 * x))
}

/** expm1(x) / x, exact near 0. */
function helper2 (x) {
  return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x * 0.5 * (1 + (x / 3) * (1 + 0.25 * x))
}

/**
 * A Zipf sampler over ranks 1..n.
 * @param {{ n: number, s: number, random?: () => number }} spec n >= 1; s > 0 the exponent
 * @returns {() => number} a rank in 1..n
 */
function createZipfSampler ({ n, s, random = Math.random }) {
  if (!Number.isInteger(n) || n < 1) throw new RangeError('zipf: n must be an integer >= 1')
  if (!(s > 0)) throw new RangeError('zipf: s must be > 0')
  const h = (x) => Math.exp(-s * Math.log(x))
  const hIntegral = (x) => {
    const logX = Math.log(x)
    return helper2((1 - s) * logX) * logX
  }
  const hIntegralInverse = (x) => {
    let t = x * (1 - s)
    if (t < -1) t = -1 // rounding near the end of the support
    return Math.exp(helper1(t) * x)
  }
  const hIntegralX1 = hIntegral(1.5) - 1
  const hIntegralN = hIntegral(n + 0.5)
  const cut = 2 - hIntegralInverse(hIntegral(2.5) - h(2))
  return function sample () {
    for (;;) {
      const u = hIntegralN + random() * (hIntegralX1 - hIntegralN)
      const x = hIntegralInverse(u)
      let k = Math.floor(x + 0.5)
      if (k < 1) k = 1
      else if (k > n) k = n
      if (k - x <= cut || u >= hIntegral(k + 0.5) - h(k)) return k
    }
  }
}

/**
 * @param {number} a
 * @param {number} b
 * @returns {number}
 */
function gcd (a, b) {
  while (b) [a, b] = [b, a % b]
  return a
}

/**
 * A fixed bijection of 1..n onto itself, rank -> id: id = ((rank - 1) * step mod n) + 1 with a
 * step near 0.618 n coprime to n, so consecutive ranks land far apart.
 * @param {number} n
 * @returns {(rank: number) => number}
 */
function rankToId (n) {
  if (!Number.isInteger(n) || n < 1) throw new RangeError('rankToId: n must be an integer >= 1')
  if (n <= 2) return (rank) => rank
  let step = Math.max(1, Math.floor(n * 0.6180339887))
  while (gcd(step, n) !== 1) step++
  return (rank) => ((rank - 1) * step) % n + 1
}

/**
 * An id draw as the load worker builds it from a plain spec.
 * @param {{ dist: 'uniform'|'zipf', ids: number, s?: number }} spec
 * @param {() => number} [random]
 * @returns {() => number} an id in 1..ids
 */
function createIdDraw (spec, random = Math.random) {
  const { dist, ids } = spec
  if (!Number.isInteger(ids) || ids < 1) throw new RangeError('id draw: ids must be an integer >= 1')
  if (dist === 'uniform') return () => 1 + Math.floor(random() * ids)
  if (dist === 'zipf') {
    const sample = createZipfSampler({ n: ids, s: spec.s ?? 1.1, random })
    const toId = rankToId(ids)
    return () => toId(sample())
  }
  throw new TypeError(`id draw: unknown distribution ${JSON.stringify(dist)}`)
}

/**
 * The Zipf weights k^-s of ranks 1..n in groups of ranks of (almost) equal weight: every rank
 * alone up to `exact`, then runs of ranks 0.1% wide. Lets sums over 10 million ranks take
 * ~17,000 terms.
 * @param {number} n
 * @param {number} s
 * @param {number} [exact]
 * @returns {Array<{ weight: number, count: number }>} weight of one rank of the group
 */
function zipfGroups (n, s, exact = 10000) {
  const groups = []
  let k = 1
  while (k <= n) {
    const width = k <= exact ? 1 : Math.max(1, Math.floor(k * 0.001))
    const last = Math.min(n, k + width - 1)
    const count = last - k + 1
    // The mean weight over the run (nearly its midpoint's at 0.1% width).
    let weight = 0
    if (count === 1) weight = Math.pow(k, -s)
    else weight = (Math.pow(k, -s) + 4 * Math.pow((k + last) / 2, -s) + Math.pow(last, -s)) / 6
    groups.push({ weight, count })
    k = last + 1
  }
  return groups
}

/**
 * The hit ratio of an LRU of `c` entries under independent draws (Che's approximation: an id is
 * in the cache if it was drawn within the cache's characteristic time T, where the expected
 * number of distinct ids drawn within T is c). No TTL: a cache whose entries also expire hits
 * less (see the measured figures).
 * @param {{ n: number, c: number, dist: 'uniform'|'zipf', s?: number }} spec
 * @returns {number} 0..1
 */
function lruHitRatio ({ n, c, dist, s = 1.1 }) {
  if (c >= n) return 1
  if (c <= 0) return 0
  const probs = probabilities(n, dist, s)
  const inCache = (t) => probs.reduce((sum, g) => sum + g.count * -Math.expm1(-g.p * t), 0)
  let lo = 0
  let hi = 1
  while (inCache(hi) < c) hi *= 2
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2
    if (inCache(mid) < c) lo = mid
    else hi = mid
  }
  const t = (lo + hi) / 2
  return probs.reduce((sum, g) => sum + g.count * g.p * -Math.expm1(-g.p * t), 0)
}

/**
 * @param {number} n
 * @param {'uniform'|'zipf'} dist
 * @param {number} s
 * @returns {Array<{ p: number, count: number }>} each group's probability per id
 */
function probabilities (n, dist, s) {
  const groups = dist === 'uniform' ? [{ weight: 1, count: n }] : zipfGroups(n, s)
  const total = groups.reduce((sum, g) => sum + g.weight * g.count, 0)
  return groups.map((g) => ({ p: g.weight / total, count: g.count }))
}

/**
 * The fresh-hit ratio of the data plane's cache with no size limit, only its TTL
 * (lib/toggles/cache.js): an entry is fresh for `ttlS` after it was read. Under independent draws
 * at `rate` per second (one worker's share), an id drawn at λ per second gets λ·ttl fresh hits
 * per read, so its hit ratio is λ·ttl / (1 + λ·ttl).
 * @param {{ n: number, dist: 'uniform'|'zipf', s?: number, rate: number, ttlS: number }} spec
 * @returns {number} 0..1
 */
function ttlHitRatio ({ n, dist, s = 1.1, rate, ttlS }) {
  return probabilities(n, dist, s).reduce((hit, g) => {
    const x = g.p * rate * ttlS
    return hit + g.count * g.p * (x / (1 + x))
  }, 0)
}

/**
 * The expected number of distinct ids among the draws of `seconds` at `rate` per second: the
 * entries a cache needs to hold every id asked for within that window.
 * @param {{ n: number, dist: 'uniform'|'zipf', s?: number, rate: number, seconds: number }} spec
 * @returns {number}
 */
function distinctIds ({ n, dist, s = 1.1, rate, seconds }) {
  return probabilities(n, dist, s).reduce((sum, g) => sum + g.count * -Math.expm1(-g.p * rate * seconds), 0)
}

module.exports = { createZipfSampler, rankToId, createIdDraw, zipfGroups, lruHitRatio, ttlHitRatio, distinctIds }
