'use strict'

/**
 * Deterministic sample toggles for ids 1..N, seeded into the config table by `npm run hbase:up`.
 * Tests compute the expected JSONP body from this same function.
 */

const FEATURES = ['search', 'recommendations', 'chat', 'darkMode', 'betaCheckout']
const VARIANTS = ['A', 'B', 'C']

/**
 * @param {number} id positive integer
 * @returns {{ id: number, variant: string, sampleRate: number, features: Record<string, boolean> }}
 */
function sampleConfig (id) {
  /** @type {Record<string, boolean>} */
  const features = {}
  for (let i = 0; i < FEATURES.length; i++) features[FEATURES[i]] = ((id >> i) & 1) === 1
  return {
    id,
    variant: VARIANTS[id % VARIANTS.length],
    sampleRate: ((id % 10) + 1) / 10,
    features
  }
}

module.exports = { sampleConfig, FEATURES }
