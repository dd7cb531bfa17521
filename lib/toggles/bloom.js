'use strict'

/**
 * A Bloom filter of strings that grows: `has` never says no to a string that was added, and
 * says yes to one that was not with a probability near `falsePositiveRate` per layer. When a
 * layer holds its capacity a new one of four times the capacity is added (a scalable Bloom
 * filter), so a count far past the first guess costs a few more probes, never a wrong "no".
 *
 * Written here rather than taken from npm: a lookup is on the path of every cache miss, and the
 * packages at hand either hash through general-purpose dependencies or are no longer kept.
 * Ids are safe names (ASCII), so the hashes read UTF-16 code units.
 */

const LN2_SQUARED = Math.LN2 * Math.LN2
const GROWTH = 4

/**
 * Two 32-bit hashes of `s` (FNV-1a and a Murmur3-style finalized variant), for double hashing.
 * @param {string} s
 * @returns {[number, number]}
 */
function hashPair (s) {
  let a = 0x811c9dc5
  let b = 0x9747b28c
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b ^= b >>> 15
  }
  b ^= b >>> 13
  b = Math.imul(b, 0xc2b2ae35)
  b ^= b >>> 16
  // An odd step visits every bit position of a power-of-two table.
  return [a >>> 0, (b | 1) >>> 0]
}

/**
 * One fixed-size layer: `bits` a power of two, `probes` positions per string.
 * @param {number} capacity
 * @param {number} falsePositiveRate
 */
function createLayer (capacity, falsePositiveRate) {
  const wanted = Math.ceil((-capacity * Math.log(falsePositiveRate)) / LN2_SQUARED)
  const bits = 2 ** Math.max(5, Math.ceil(Math.log2(wanted)))
  const probes = Math.max(1, Math.round((bits / capacity) * Math.LN2))
  const words = new Uint32Array(bits / 32)
  const mask = bits - 1
  return {
    capacity,
    size: 0,
    bytes: words.byteLength,
    /** @param {[number, number]} h */
    add (h) {
      let x = h[0]
      for (let i = 0; i < probes; i++) {
        const at = x & mask
        words[at >>> 5] |= 1 << (at & 31)
        x = (x + h[1]) >>> 0
      }
      this.size++
    },
    /** @param {[number, number]} h */
    has (h) {
      let x = h[0]
      for (let i = 0; i < probes; i++) {
        const at = x & mask
        if ((words[at >>> 5] & (1 << (at & 31))) === 0) return false
        x = (x + h[1]) >>> 0
      }
      return true
    }
  }
}

/**
 * @param {{ capacity: number, falsePositiveRate: number }} options capacity: strings the first
 *   layer is sized for
 * @returns {{ add: (s: string) => void, has: (s: string) => boolean, size: () => number, bytes: () => number }}
 *   size: strings added, less those it seemed to hold already (repeats, and a few false positives)
 */
function createBloomFilter ({ capacity, falsePositiveRate }) {
  if (!(capacity >= 1) || !(falsePositiveRate > 0 && falsePositiveRate < 1)) {
    throw new RangeError('a Bloom filter needs a capacity of at least 1 and a false-positive rate in (0, 1)')
  }
  const layers = [createLayer(Math.ceil(capacity), falsePositiveRate)]
  return {
    add (s) {
      const h = hashPair(s)
      let last = layers[layers.length - 1]
      if (last.has(h)) return // counts strings, not repeats, so that a layer fills by what it holds
      if (last.size >= last.capacity) layers.push((last = createLayer(last.capacity * GROWTH, falsePositiveRate)))
      last.add(h)
    },
    has (s) {
      const h = hashPair(s)
      for (const layer of layers) if (layer.has(h)) return true
      return false
    },
    size: () => layers.reduce((n, layer) => n + layer.size, 0),
    bytes: () => layers.reduce((n, layer) => n + layer.bytes, 0)
  }
}

module.exports = { createBloomFilter, hashPair }
