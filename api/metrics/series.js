'use strict'

/**
 * @typedef {Record<string, string>} Labels
 * @typedef {{ inc: (n?: number) => void }} CounterLike
 * @typedef {{ observe: (value: number) => void }} HistogramLike
 */

/**
 * The series of a label pair, looked up by the two values: the first the caller's endpoint
 * name (or method), the second a status code or an outcome, each a constant string or a small
 * integer, so a lookup neither concatenates nor allocates; the label set is built once.
 * @template {string|number|null} B
 * @template S
 * @param {Map<string, Map<B, S>>} cache
 * @param {{ child?: (labels: Labels) => S, labels?: (labels: Labels) => S }} metric a hot metric
 *   (./hot.js, `child`) or a prom-client one (`labels`)
 * @param {string} a
 * @param {B} b
 * @param {(a: string, b: B) => Labels} labelsOf
 * @returns {S}
 */
function series (cache, metric, a, b, labelsOf) {
  let inner = cache.get(a)
  if (inner === undefined) cache.set(a, (inner = new Map()))
  let c = inner.get(b)
  if (c === undefined) {
    const labels = labelsOf(a, b)
    // Without child it is a prom-client metric, which has labels.
    c = metric.child ? metric.child(labels) : /** @type {(labels: Labels) => S} */ (metric.labels)(labels)
    inner.set(b, c)
  }
  return c
}

module.exports = { series }
