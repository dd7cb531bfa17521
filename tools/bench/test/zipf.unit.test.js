'use strict'

const { createZipfSampler, rankToId, createIdDraw, zipfGroups, lruHitRatio, ttlHitRatio, distinctIds } = require('../lib/zipf')
const { createRandom } = require('../../chaos')

/** k^-s / H(n, s), exactly. */
function pmf (n, s) {
  const w = Array.from({ length: n }, (_, i) => Math.pow(i + 1, -s))
  const total = w.reduce((a, b) => a + b, 0)
  return w.map((x) => x / total)
}

/** The share of draws on the `c` most popular ranks (grouped weights): an oracle for the sampler and the LRU model. */
function zipfTopShare ({ n, s, c }) {
  let top = 0
  let all = 0
  let k = 0
  for (const g of zipfGroups(n, s)) {
    top += g.weight * Math.max(0, Math.min(g.count, c - k))
    all += g.weight * g.count
    k += g.count
  }
  return top / all
}

test('the Zipf sampler draws ranks with probability k^-s / H(n, s)', () => {
  for (const [n, s] of [[20, 1.1], [50, 0.8], [5, 2]]) {
    const sample = createZipfSampler({ n, s, random: createRandom(7) })
    const draws = 100000
    const counts = new Array(n).fill(0)
    let outside = 0
    for (let i = 0; i < draws; i++) {
      const k = sample()
      if (!(Number.isInteger(k) && k >= 1 && k <= n)) outside++
      else counts[k - 1]++
    }
    expect(outside).toBe(0)
    const p = pmf(n, s)
    for (let k = 0; k < n; k++) {
      // 5 standard deviations of a binomial count
      const sd = Math.sqrt(draws * p[k] * (1 - p[k]))
      expect(Math.abs(counts[k] - draws * p[k])).toBeLessThan(5 * sd + 1)
    }
  }
})

test('the sampler covers 10 million ranks with no table, the head as often as it should be', () => {
  const sample = createZipfSampler({ n: 1e7, s: 1.1, random: createRandom(3) })
  let first = 0
  let tail = 0
  const draws = 100000
  for (let i = 0; i < draws; i++) {
    const k = sample()
    if (k === 1) first++
    if (k > 1e6) tail++
  }
  const h = zipfGroups(1e7, 1.1).reduce((sum, g) => sum + g.weight * g.count, 0)
  expect(first / draws).toBeCloseTo(1 / h, 2)
  expect(tail / draws).toBeCloseTo(1 - zipfTopShare({ n: 1e7, s: 1.1, c: 1e6 }), 2)
})

test('a sampler of one rank always draws it; bad parameters throw', () => {
  expect(createZipfSampler({ n: 1, s: 1.1 })()).toBe(1)
  expect(() => createZipfSampler({ n: 0, s: 1.1 })).toThrow(RangeError)
  expect(() => createZipfSampler({ n: 10, s: 0 })).toThrow(RangeError)
})

test('rankToId is a bijection of 1..n that spreads neighbouring ranks', () => {
  for (const n of [1, 2, 3, 10, 97, 1000, 1024]) {
    const toId = rankToId(n)
    const seen = new Set()
    for (let r = 1; r <= n; r++) {
      const id = toId(r)
      if (id >= 1 && id <= n) seen.add(id)
    }
    expect(seen.size).toBe(n)
  }
  const toId = rankToId(1e7)
  expect(Math.abs(toId(2) - toId(1))).toBeGreaterThan(1e6)
})

test('id draws: uniform and zipf over 1..ids; unknown distributions throw', () => {
  const uniform = createIdDraw({ dist: 'uniform', ids: 10 }, createRandom(1))
  const zipf = createIdDraw({ dist: 'zipf', ids: 10, s: 1.1 }, createRandom(1))
  const counts = new Map()
  let outside = 0
  for (let i = 0; i < 10000; i++) {
    const u = uniform()
    if (!(u >= 1 && u <= 10)) outside++
    const z = zipf()
    counts.set(z, (counts.get(z) || 0) + 1)
  }
  expect(outside).toBe(0)
  // rank 1 is the id rankToId puts it on, and it is the most frequent
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0]
  expect(top).toBe(rankToId(10)(1))
  expect(() => createIdDraw({ dist: /** @type {any} */ ('pareto'), ids: 10 })).toThrow(TypeError)
})

test('the grouped weights sum like the exact ones', () => {
  const n = 200000
  const groups = zipfGroups(n, 1.1, 1000)
  expect(groups.reduce((c, g) => c + g.count, 0)).toBe(n)
  let exact = 0
  for (let k = 1; k <= n; k++) exact += Math.pow(k, -1.1)
  const grouped = groups.reduce((sum, g) => sum + g.weight * g.count, 0)
  expect(Math.abs(grouped - exact) / exact).toBeLessThan(1e-6)
})

test('top share and the LRU model: uniform c/n, zipf above it, the LRU under the top share', () => {
  expect(lruHitRatio({ n: 1000, c: 100, dist: 'uniform' })).toBeCloseTo(0.1, 6)
  expect(lruHitRatio({ n: 1000, c: 1000, dist: 'zipf' })).toBe(1)
  expect(lruHitRatio({ n: 1000, c: 0, dist: 'zipf' })).toBe(0)
  const top = zipfTopShare({ n: 2e5, s: 1.1, c: 2e3 })
  const lru = lruHitRatio({ n: 2e5, c: 2e3, dist: 'zipf', s: 1.1 })
  expect(lru).toBeLessThan(top)
  expect(lru).toBeGreaterThan(0.5)
  expect(zipfTopShare({ n: 10, s: 1, c: 1 })).toBeCloseTo(pmf(10, 1)[0], 6)
  expect(zipfTopShare({ n: 10, s: 1, c: 3 })).toBeCloseTo(pmf(10, 1).slice(0, 3).reduce((a, b) => a + b, 0), 6)
})

test('the LRU model agrees with a simulated LRU under Zipf draws', () => {
  const n = 5000
  const c = 200
  const draw = createZipfSampler({ n, s: 1.1, random: createRandom(11) })
  const cache = new Map()
  let hits = 0
  const draws = 200000
  for (let i = 0; i < draws; i++) {
    const k = draw()
    if (cache.has(k)) {
      hits++
      cache.delete(k)
    } else if (cache.size >= c) {
      cache.delete(cache.keys().next().value)
    }
    cache.set(k, true)
  }
  expect(hits / draws).toBeCloseTo(lruHitRatio({ n, c, dist: 'zipf', s: 1.1 }), 1)
})

test('the TTL model: one id asked λ times a second hits λT / (1 + λT)', () => {
  // one id: every draw is it, at 2 a second, fresh for 10 s: 20 hits per read
  expect(ttlHitRatio({ n: 1, dist: 'uniform', rate: 2, ttlS: 10 })).toBeCloseTo(20 / 21, 9)
  // two ids of weights 2/3 and 1/3 (Zipf s = 1) at 3 a second: 2 and 1 a second each
  expect(ttlHitRatio({ n: 2, dist: 'zipf', s: 1, rate: 3, ttlS: 10 })).toBeCloseTo((2 / 3) * (20 / 21) + (1 / 3) * (10 / 11), 9)
  // a longer TTL hits more; a skew hits more than uniform draws
  const zipf30 = ttlHitRatio({ n: 1e5, dist: 'zipf', rate: 500, ttlS: 30 })
  expect(ttlHitRatio({ n: 1e5, dist: 'zipf', rate: 500, ttlS: 120 })).toBeGreaterThan(zipf30)
  expect(ttlHitRatio({ n: 1e5, dist: 'uniform', rate: 500, ttlS: 30 })).toBeCloseTo(0.15 / 1.15, 9)
  expect(zipf30).toBeGreaterThan(0.15 / 1.15)
})

test('distinct ids in a window: all of a few hot ids, about the draws when the set is huge', () => {
  expect(distinctIds({ n: 10, dist: 'uniform', rate: 1000, seconds: 10 })).toBeCloseTo(10, 6)
  expect(distinctIds({ n: 1e9, dist: 'uniform', rate: 100, seconds: 10 })).toBeCloseTo(1000, 0)
  const zipf = distinctIds({ n: 1e6, dist: 'zipf', rate: 500, seconds: 330 })
  expect(zipf).toBeLessThan(distinctIds({ n: 1e6, dist: 'uniform', rate: 500, seconds: 330 }))
  expect(zipf).toBeGreaterThan(1000)
})
