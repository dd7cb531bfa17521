'use strict'

/** Latency histograms of the load generators: recorded in µs, summarized in ms. */

const hdr = require('hdr-histogram-js')

/** @type {import('hdr-histogram-js').BuildRequest} */
const HISTOGRAM = { lowestDiscernibleValue: 1, highestTrackableValue: 3600 * 1e6, numberOfSignificantValueDigits: 3 }

/**
 * @typedef {{ count: number, mean: number, stdev: number, min: number, p50: number, p90: number,
 *   p99: number, p999: number, max: number }} LatencySummary latency in ms
 */

/**
 * An empty histogram for latencies in µs, 1 µs to an hour, 3 significant digits.
 * @returns {import('hdr-histogram-js').Histogram}
 */
function newLatencyHistogram () {
  return hdr.build(HISTOGRAM)
}

/**
 * Latency summary (ms) of a histogram recorded in microseconds.
 * @param {import('hdr-histogram-js').Histogram} h
 * @returns {LatencySummary}
 */
function summarize (h) {
  const ms = (us) => Math.round(us) / 1000
  if (h.totalCount === 0) {
    return { count: 0, mean: null, stdev: null, min: null, p50: null, p90: null, p99: null, p999: null, max: null }
  }
  return {
    count: h.totalCount,
    mean: ms(h.mean),
    stdev: ms(h.stdDeviation),
    min: ms(h.minNonZeroValue),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue)
  }
}

module.exports = { newLatencyHistogram, summarize }
