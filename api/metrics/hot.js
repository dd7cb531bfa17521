'use strict'

/**
 * Counters and histograms for the per-request path, kept as plain numbers and handed to
 * prom-client's registry only when it is scraped.
 *
 * prom-client hashes the label set on every inc() and observe(), even through a child bound
 * once: in a profile of sample3 cache hits its counter and histogram cost more than the cache
 * lookup itself. Here a series is an object the caller holds:
 * inc() is an addition and observe() a short scan of the bucket bounds.
 *
 * The metric registers itself on the registry through prom-client's metric interface (name,
 * help, type, aggregator, get()), so /metrics, the JSON export and the cluster aggregator read
 * it like any prom-client metric.
 */

/**
 * @typedef {{ inc: (n?: number) => void }} HotCounterSeries
 * @typedef {{ observe: (value: number) => void }} HotHistogramSeries
 * @typedef {{ labels: Record<string, string|number>, value: number, metricName?: string }} Sample one of
 *   `get()`'s values, as prom-client's metric interface has them
 */

class HotMetric {
  /**
   * @param {object} options
   * @param {string} options.name
   * @param {string} options.help
   * @param {'counter'|'histogram'} options.type
   * @param {import('prom-client').Registry} options.register
   * @param {number[]} [options.buckets] histogram upper bounds, ascending
   */
  constructor ({ name, help, type, register, buckets = [] }) {
    this.name = name
    this.help = help
    this.type = type
    this.aggregator = 'sum'
    this.bounds = buckets
    /** @type {Map<string, CounterSeries|HistogramSeries>} */
    this.series = new Map()
    // Not a prom-client Metric class, but has the part of its interface the registry reads.
    register.registerMetric(/** @type {import('prom-client').Metric} */ (/** @type {unknown} */ (this)))
  }

  /**
   * The series of one label set, created at 0 on first use. Callers keep it (one per
   * endpoint/status, say) so the request path never builds a key.
   * @param {Record<string, string>} labels
   */
  child (labels) {
    const key = JSON.stringify(labels)
    let series = this.series.get(key)
    if (series === undefined) {
      series = this.type === 'counter' ? new CounterSeries(labels) : new HistogramSeries(labels, this.bounds)
      this.series.set(key, series)
    }
    return series
  }

  /** prom-client's metric interface: the samples, as `Registry#metrics()` formats them. */
  async get () {
    /** @type {Sample[]} */
    const values = []
    for (const series of this.series.values()) series.export(this.name, values)
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  reset () {
    for (const series of this.series.values()) series.reset()
  }
}

class CounterSeries {
  /** @param {Record<string, string>} labels */
  constructor (labels) {
    this.labels = labels
    this.value = 0
  }

  inc (n = 1) {
    this.value += n
  }

  /** @param {string} name @param {Sample[]} out */
  export (name, out) {
    out.push({ labels: this.labels, value: this.value })
  }

  reset () {
    this.value = 0
  }
}

class HistogramSeries {
  /** @param {Record<string, string>} labels @param {number[]} bounds */
  constructor (labels, bounds) {
    this.labels = labels
    this.bounds = bounds
    this.counts = new Float64Array(bounds.length) // per bucket, not cumulative; above the last: count - sum of these
    this.sum = 0
    this.count = 0
  }

  /** @param {number} value */
  observe (value) {
    const bounds = this.bounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++
        break
      }
    }
    this.sum += value
    this.count++
  }

  /** @param {string} name @param {Sample[]} out */
  export (name, out) {
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]
      out.push({ labels: { le: this.bounds[i], ...this.labels }, value: cumulative, metricName: name + '_bucket' })
    }
    out.push({ labels: { le: '+Inf', ...this.labels }, value: this.count, metricName: name + '_bucket' })
    out.push({ labels: this.labels, value: this.sum, metricName: name + '_sum' })
    out.push({ labels: this.labels, value: this.count, metricName: name + '_count' })
  }

  reset () {
    this.counts.fill(0)
    this.sum = 0
    this.count = 0
  }
}

/**
 * @param {{ name: string, help: string, register: import('prom-client').Registry }} options
 * @returns {{ child: (labels: Record<string, string>) => HotCounterSeries }}
 */
function hotCounter (options) {
  // A counter's series are all CounterSeries.
  return /** @type {{ child: (labels: Record<string, string>) => HotCounterSeries }} */ (
    new HotMetric({ ...options, type: 'counter' })
  )
}

/**
 * @param {{ name: string, help: string, buckets: number[], register: import('prom-client').Registry }} options
 * @returns {{ child: (labels: Record<string, string>) => HotHistogramSeries }}
 */
function hotHistogram (options) {
  // A histogram's series are all HistogramSeries.
  return /** @type {{ child: (labels: Record<string, string>) => HotHistogramSeries }} */ (
    new HotMetric({ ...options, type: 'histogram' }))
}

module.exports = { hotCounter, hotHistogram }
