'use strict'

/**
 * A seeded generator of numbers in [0, 1) (mulberry32), so a failure names the seed that made it.
 * @param {number} seed
 * @returns {() => number}
 */
function createRandom (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

module.exports = { createRandom }
