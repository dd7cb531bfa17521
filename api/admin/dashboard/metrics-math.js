'use strict'

// The dashboard's math, shared by the browser (served as a plain script, sets
// globalThis.BeaconMetrics) and node (require, so jest tests it on fixed inputs). It parses the
// Prometheus text of GET /metrics and turns two scrapes into rates and latency quantiles, the
// way Prometheus's rate() and histogram_quantile() would over that one interval.
;(function (root) {
  const SAMPLE_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
  const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/

  // Config lookups answered from the cache. `miss` and `coalesced` waited for HBase;
  // `refresh_error` is a failed background refresh, not a lookup, so it is left out of the ratio.
  const CACHE_HITS = ['hit', 'negative_hit', 'stale', 'stale_on_error']
  const CACHE_MISSES = ['miss', 'coalesced']
  const SINK_RATES = ['accepted', 'written', 'spilled', 'replayed', 'shed', 'failed']

  function parseValue (token) {
    if (token === '+Inf' || token === 'Inf') return Infinity
    if (token === '-Inf') return -Infinity
    if (token === 'NaN') return NaN
    const n = Number(token)
    return token !== '' && !Number.isNaN(n) ? n : undefined
  }

  /** Parses `{a="x",b="y\"z"}` starting at line[i] === '{'; returns [labels, index after '}'] or null. */
  function parseLabels (line, i) {
    const labels = {}
    i++
    for (;;) {
      while (line[i] === ' ') i++
      if (line[i] === '}') return [labels, i + 1]
      const name = LABEL_NAME.exec(line.slice(i))
      if (!name) return null
      i += name[0].length
      while (line[i] === ' ') i++
      if (line[i] !== '=') return null
      i++
      while (line[i] === ' ') i++
      if (line[i] !== '"') return null
      i++
      let value = ''
      for (;;) {
        const c = line[i]
        if (c === undefined) return null
        if (c === '"') break
        if (c === '\\') {
          const next = line[i + 1]
          value += next === 'n' ? '\n' : next
          i += 2
        } else {
          value += c
          i++
        }
      }
      labels[name[0]] = value
      i++
      while (line[i] === ' ') i++
      if (line[i] === ',') i++
      else if (line[i] !== '}') return null
    }
  }

  /**
   * Parses Prometheus text exposition (version 0.0.4) into samples grouped by sample name.
   * Comments and malformed lines are skipped: one odd line must not blank the whole dashboard.
   * @param {string} text
   * @returns {Map<string, Array<{ labels: Record<string, string>, value: number }>>}
   */
  function parsePrometheusText (text) {
    const samples = new Map()
    for (const raw of String(text).split('\n')) {
      const line = raw.trim()
      if (line === '' || line[0] === '#') continue
      const name = SAMPLE_NAME.exec(line)
      if (!name) continue
      let i = name[0].length
      let labels = {}
      if (line[i] === '{') {
        const parsed = parseLabels(line, i)
        if (!parsed) continue
        labels = parsed[0]
        i = parsed[1]
      }
      const value = parseValue(line.slice(i).trim().split(/\s+/)[0])
      if (value === undefined) continue
      let list = samples.get(name[0])
      if (!list) samples.set(name[0], (list = []))
      list.push({ labels, value })
    }
    return samples
  }

  /** Samples of `name` whose labels include every pair of `match`. */
  function select (samples, name, match) {
    const list = samples.get(name) || []
    if (!match) return list
    const keys = Object.keys(match)
    return list.filter((s) => keys.every((k) => s.labels[k] === match[k]))
  }

  /**
   * Sum of the samples of `name` whose labels include `match`.
   * @param {Map<string, Array<{ labels: object, value: number }>>} samples
   * @param {string} name
   * @param {Record<string, string>} [match]
   * @returns {number|null} null when no sample matches
   */
  function sum (samples, name, match) {
    const list = select(samples, name, match)
    return list.length ? list.reduce((n, s) => n + s.value, 0) : null
  }

  /** Distinct values of `label` over the samples of `name`, sorted. */
  function labelValues (samples, name, label) {
    const values = new Set()
    for (const s of samples.get(name) || []) if (s.labels[label] !== undefined) values.add(s.labels[label])
    return [...values].sort()
  }

  /**
   * Increase of a counter between two readings. A decrease means a counter went back (a process
   * restarted; in cluster mode one worker of an aggregated sum), and the sum no longer says how
   * much happened in between: null (a gap) is more honest than Prometheus's "restarted from
   * zero", which here would show one huge spike.
   * @param {number|null|undefined} prev
   * @param {number|null|undefined} cur
   * @returns {number|null}
   */
  function counterDelta (prev, cur) {
    if (cur === null || cur === undefined) return null
    if (prev === null || prev === undefined) return null
    const d = cur - prev
    return d >= 0 ? d : null
  }

  /**
   * Quantile from cumulative histogram buckets, as Prometheus's histogram_quantile: linear
   * interpolation inside the bucket that holds the rank, 0 as the lower bound of the first
   * bucket, and the highest finite bound when the rank falls in the +Inf bucket.
   * @param {number} q quantile, 0..1
   * @param {Array<{ le: number, count: number }>} buckets cumulative counts; must include le=+Inf
   * @returns {number|null} null when there were no observations (or no +Inf bucket)
   */
  function histogramQuantile (q, buckets) {
    const sorted = buckets.slice().sort((a, b) => a.le - b.le)
    const n = sorted.length
    if (n < 2 || sorted[n - 1].le !== Infinity) return null
    const total = sorted[n - 1].count
    if (!(total > 0)) return null
    const rank = Math.min(Math.max(q, 0), 1) * total
    let b = 0
    while (b < n - 1 && sorted[b].count < rank) b++
    if (b === n - 1) return sorted[n - 2].le
    if (b === 0 && sorted[0].le <= 0) return sorted[0].le
    const start = b === 0 ? 0 : sorted[b - 1].le
    const below = b === 0 ? 0 : sorted[b - 1].count
    const inBucket = sorted[b].count - below
    if (inBucket <= 0) return start
    return start + (sorted[b].le - start) * ((rank - below) / inBucket)
  }

  /** Cumulative bucket counts of histogram `name` (all series matching `match` summed) by le. */
  function bucketCounts (samples, name, match) {
    const byLe = new Map()
    for (const s of select(samples, name + '_bucket', match)) {
      const le = parseValue(s.labels.le)
      if (le === undefined) continue
      byLe.set(le, (byLe.get(le) || 0) + s.value)
    }
    return byLe
  }

  /**
   * Buckets of what a histogram observed between two scrapes (per-bucket counter deltas).
   * @returns {Array<{ le: number, count: number }>|null} null if a bucket is missing or went back
   */
  function bucketDeltas (prev, cur, name, match) {
    const before = bucketCounts(prev, name, match)
    const after = bucketCounts(cur, name, match)
    if (after.size === 0) return null
    const buckets = []
    for (const [le, count] of after) {
      const d = counterDelta(before.has(le) ? before.get(le) : (before.size === 0 ? 0 : undefined), count)
      if (d === null) return null
      buckets.push({ le, count: d })
    }
    return buckets
  }

  function perSecond (delta, seconds) {
    return delta === null ? null : delta / seconds
  }

  /**
   * Everything the dashboard shows for one interval between two scrapes of GET /metrics.
   * Rates are per second over `seconds`; latencies are in seconds; `null` means "unknown for
   * this interval" (no traffic, or a counter went back). A series absent from `prev` counts
   * from zero: prom-client creates a labelled series on its first increment.
   * @param {Map<string, Array<{ labels: object, value: number }>>} prev parsed earlier scrape
   * @param {Map<string, Array<{ labels: object, value: number }>>} cur parsed later scrape
   * @param {number} seconds time between the two scrapes
   */
  function derive (prev, cur, seconds) {
    const dt = seconds > 0 ? seconds : NaN
    const delta = (name, match) => counterDelta(sum(prev, name, match) || 0, sum(cur, name, match) || 0)
    const rate = (name, match) => perSecond(delta(name, match), dt)
    const quantiles = (name, match) => {
      const buckets = bucketDeltas(prev, cur, name, match)
      return { p50: buckets && histogramQuantile(0.5, buckets), p99: buckets && histogramQuantile(0.99, buckets) }
    }
    const total = (name, outcomes, endpoint) => {
      const deltas = outcomes.map((outcome) => delta(name, { endpoint, outcome }))
      return deltas.includes(null) ? null : deltas.reduce((a, b) => a + b, 0)
    }

    const endpoints = labelValues(cur, 'beacon_http_requests_total', 'endpoint').map((endpoint) => {
      const serverErrors = select(cur, 'beacon_http_requests_total', { endpoint })
        .filter((s) => Number(s.labels.status) >= 500)
        .map((s) => delta('beacon_http_requests_total', s.labels))
      const hits = total('beacon_config_lookups_total', CACHE_HITS, endpoint)
      const misses = total('beacon_config_lookups_total', CACHE_MISSES, endpoint)
      const latency = quantiles('beacon_http_request_duration_seconds', { endpoint })
      return {
        endpoint,
        rps: rate('beacon_http_requests_total', { endpoint }),
        errorRps: serverErrors.includes(null) ? null : perSecond(serverErrors.reduce((a, b) => a + b, 0), dt),
        p50: latency.p50,
        p99: latency.p99,
        hitRatio: hits !== null && misses !== null && hits + misses > 0 ? hits / (hits + misses) : null,
        total: sum(cur, 'beacon_http_requests_total', { endpoint })
      }
    })

    const hbase = labelValues(cur, 'beacon_hbase_rpc_duration_seconds_count', 'method').map((method) => {
      const latency = quantiles('beacon_hbase_rpc_duration_seconds', { method })
      return {
        method,
        rps: rate('beacon_hbase_rpc_duration_seconds_count', { method }),
        p50: latency.p50,
        p99: latency.p99,
        errorRps: rate('beacon_hbase_rpc_errors_total', { method }),
        errors: sum(cur, 'beacon_hbase_rpc_errors_total', { method }) || 0
      }
    })
    const hbaseErrorsByCode = labelValues(cur, 'beacon_hbase_rpc_errors_total', 'code')
      .map((code) => ({ code, total: sum(cur, 'beacon_hbase_rpc_errors_total', { code }) }))

    const accessLog = labelValues(cur, 'beacon_access_log_entries_total', 'sink').map((sink) => {
      const row = { sink }
      for (const state of SINK_RATES) row[state + 'Rps'] = rate('beacon_access_log_entries_total', { sink, state })
      row.spilledTotal = sum(cur, 'beacon_access_log_entries_total', { sink, state: 'spilled' }) || 0
      row.shedTotal = sum(cur, 'beacon_access_log_entries_total', { sink, state: 'shed' }) || 0
      row.queueDepth = sum(cur, 'beacon_access_log_queue_depth', { sink })
      row.pending = sum(cur, 'beacon_access_log_pending', { sink })
      row.journalPending = sum(cur, 'beacon_access_log_journal_pending', { sink })
      row.oldestPendingSeconds = sum(cur, 'beacon_access_log_oldest_pending_seconds', { sink })
      return row
    })

    // Every worker's cache (the primary sums them); null where no endpoint caches.
    const cachedConfigs = sum(cur, 'beacon_config_cache_entries')

    return { endpoints, hbase, hbaseErrorsByCode, accessLog, cachedConfigs }
  }

  const api = { parsePrometheusText, sum, labelValues, counterDelta, histogramQuantile, bucketDeltas, derive }
  if (typeof module !== 'undefined' && module.exports) module.exports = api
  else root.BeaconMetrics = api
})(globalThis)
