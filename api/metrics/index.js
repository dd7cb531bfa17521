'use strict'

const client = require('prom-client')
const { hotCounter, hotHistogram } = require('./hot')
const { registerHBaseTraffic } = require('./hbase-traffic')
const { followStats, gaugeStats } = require('./stats')
const { watchEventLoop } = require('./event-loop')
const { watchProcessCpu } = require('./process-cpu')
const { series } = require('./series')

// prom-client's lag gauges sample the loop every 10 ms by default, waking an idle process 100
// times a second; the per-process histogram (event-loop.js) is the fine-grained one.
const DEFAULT_LAG_PRECISION_MS = 100

// Finer than prom-client's default (1 ms, 10 ms, 100 ms, 1 s...): a pause that holds requests
// past 5 or 50 ms should be told apart from one that does not.
const GC_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const CORS_OUTCOMES = ['allowed', 'denied', 'preflight', 'preflight_denied']
const ROLLUP_ERRORS_HELP = 'Access-log rollups: mark writes that failed (kind mark, by the workers: ' +
  'their minutes wait and are tried again; the rows are written) and runs of the rollup job that ' +
  'failed (kind run, by the rollup process)'
const SINK_COUNTERS = [
  'accepted', 'written', 'spilled', 'replayed', 'shed', 'shedUnconfirmed', 'failed', 'rejectedAfterClose', 'claimed',
  'claimedFromWal', 'walFailures', 'shedKeptInWal', 'corrupt'
]

/**
 * Prometheus metrics of one process on its own registry (never prom-client's global one), and
 * the hooks the data plane, caches and HBase client call. Names are prefixed `beacon_`.
 *
 * The per-request series (responses, latency, cache outcomes, HBase RPCs) are plain numbers
 * (hot.js), resolved once per label set and reused: prom-client hashes the labels on
 * every update, which cost more than a cache hit's own work.
 *
 * @param {{ register?: client.Registry, collectDefault?: boolean, processTag?: string }} [options]
 *   processTag: this process's tag in the cluster (`w1`, `rollup`): when given, its event-loop
 *   delay is sampled (event-loop.js) until close(), and its CPU time counted apart
 *   (process-cpu.js)
 */
function createMetrics ({ register = new client.Registry(), collectDefault = true, processTag } = {}) {
  if (collectDefault) {
    client.collectDefaultMetrics({
      register, prefix: 'beacon_', gcDurationBuckets: GC_BUCKETS, eventLoopMonitoringPrecision: DEFAULT_LAG_PRECISION_MS
    })
  }
  const loop = processTag ? watchEventLoop(register, { processTag }) : null
  if (processTag) watchProcessCpu(register, { processTag })

  const requests = hotCounter({
    name: 'beacon_http_requests_total',
    help: 'JSONP endpoint responses by endpoint and status code',
    register
  })
  const duration = hotHistogram({
    name: 'beacon_http_request_duration_seconds',
    help: 'JSONP endpoint latency, from request to response written',
    buckets: LATENCY_BUCKETS,
    register
  })
  const cacheOutcomes = hotCounter({
    name: 'beacon_config_lookups_total',
    help: 'Config lookups by endpoint and outcome (hit, miss, coalesced, stale, negative_hit, stale_on_error, ' +
      'refresh_error)',
    register
  })
  const invalidConfigs = new client.Counter({
    name: 'beacon_config_invalid_total',
    help: 'Stored configs that were not a JSON object (the endpoint default was served)',
    registers: [register]
  })
  const rpcDuration = hotHistogram({
    name: 'beacon_hbase_rpc_duration_seconds',
    help: 'HBase RPC latency by method',
    buckets: LATENCY_BUCKETS,
    register
  })
  const rpcErrors = new client.Counter({
    name: 'beacon_hbase_rpc_errors_total',
    help: 'HBase RPC failures by method and error code',
    labelNames: ['method', 'code'],
    registers: [register]
  })

  // Registered at the first refusal: a host without limits has no family without samples.
  /** @type {import('prom-client').Counter|null} */
  let rateLimited = null
  const rateLimitedChildren = new Map()
  // Registered at the first answer counted without an entry: most deployments log everything.
  /** @type {import('prom-client').Counter|null} */
  let countedOnly = null
  const countedOnlyChildren = new Map()

  // Registered by declareBrowserPaths, only when some endpoint declares cors or events: a family
  // without samples would be noise.
  /** @type {import('prom-client').Counter|null} */
  let corsOutcomes = null
  /** @type {import('prom-client').Counter|null} */
  let eventRequests = null
  /** @type {import('prom-client').Counter|null} */
  let events = null

  /** @typedef {import('./series').CounterLike} CounterLike */
  /** @type {Map<string, Map<number, CounterLike>>} */
  const requestChildren = new Map()
  /** @type {Map<string, Map<null, import('./series').HistogramLike>>} */
  const durationChildren = new Map()
  /** @type {Map<string, Map<string, CounterLike>>} */
  const cacheChildren = new Map()
  /** @type {Map<string, Map<null, import('./series').HistogramLike>>} */
  const rpcChildren = new Map()
  /** @type {Map<string, Map<string, CounterLike>>} */
  const corsChildren = new Map()
  /** @type {Map<string, Map<string, CounterLike>>} */
  const eventRequestChildren = new Map()
  /** @type {Map<string, Map<string, CounterLike>>} */
  const eventChildren = new Map()

  const endpointStatus = (/** @type {string} */ endpoint, /** @type {number} */ status) => ({ endpoint, status: String(status) })
  const endpointOnly = (/** @type {string} */ endpoint) => ({ endpoint })
  const endpointOutcome = (/** @type {string} */ endpoint, /** @type {string} */ outcome) => ({ endpoint, outcome })
  const endpointEvent = (/** @type {string} */ endpoint, /** @type {string} */ event) => ({ endpoint, event })
  const methodOnly = (/** @type {string} */ method) => ({ method })

  const hooks = {
    /** @param {string} endpoint @param {number} status @param {number} seconds */
    onResponse (endpoint, status, seconds) {
      series(requestChildren, requests, endpoint, status, endpointStatus).inc()
      series(durationChildren, duration, endpoint, null, endpointOnly).observe(seconds)
    },
    /** @param {string} endpoint @param {string} outcome */
    onCacheOutcome (endpoint, outcome) {
      series(cacheChildren, cacheOutcomes, endpoint, outcome, endpointOutcome).inc()
    },
    /** @param {string} endpoint @param {string} reason */
    onCountedOnly (endpoint, reason) {
      countedOnly ??= new client.Counter({
        name: 'beacon_access_log_counted_only_total',
        help: 'Answers the endpoint\'s logPolicy counts without an access-log entry, by reason: ' +
          'client_error (a 4xx), unknown_id (an id with no config)',
        labelNames: ['endpoint', 'reason'],
        registers: [register]
      })
      const key = endpoint + ' ' + reason
      let c = countedOnlyChildren.get(key)
      if (c === undefined) countedOnlyChildren.set(key, (c = countedOnly.labels({ endpoint, reason })))
      c.inc()
    },
    /** @param {string} endpoint */
    onRateLimited (endpoint) {
      rateLimited ??= new client.Counter({
        name: 'beacon_rate_limited_total',
        help: 'Public-port requests refused with 429: their client was past its share of the endpoint ' +
          '(api/public/rate-limit.js); no access-log entry',
        labelNames: ['endpoint'],
        registers: [register]
      })
      let c = rateLimitedChildren.get(endpoint)
      if (c === undefined) rateLimitedChildren.set(endpoint, (c = rateLimited.labels({ endpoint })))
      c.inc()
    },
    /** @param {string} endpoint @param {string} outcome */
    onCors (endpoint, outcome) {
      if (corsOutcomes) series(corsChildren, corsOutcomes, endpoint, outcome, endpointOutcome).inc()
    },
    /** @param {string} endpoint @param {string} outcome */
    onEventRequest (endpoint, outcome) {
      if (eventRequests) series(eventRequestChildren, eventRequests, endpoint, outcome, endpointOutcome).inc()
    },
    /** @param {string} endpoint @param {string} event */
    onEvent (endpoint, event) {
      if (events) series(eventChildren, events, endpoint, event, endpointEvent).inc()
    },
    onInvalidConfig () {
      invalidConfigs.inc()
    },
    /** @param {{ method: string, ms: number, error?: Error & { code?: string } }} event */
    onRpc ({ method, ms, error }) {
      series(rpcChildren, rpcDuration, method, null, methodOnly).observe(ms / 1000)
      if (error) rpcErrors.inc({ method, code: error.code || 'UNKNOWN' })
    }
  }

  /**
   * Registers the CORS and event counters for the endpoints that declare them, each series at
   * 0 from the start (a rate over a series that appears late misses its first increase).
   * @param {{ cors: string[], events: Record<string, string[]> }} declared endpoint names with
   *   `cors`; endpoint name → its event names
   */
  function declareBrowserPaths ({ cors, events: eventNames }) {
    /** @type {(name: string, help: string, labelNames: string[]) => import('prom-client').Counter} */
    const counter = (name, help, labelNames) => new client.Counter({ name, help, labelNames, registers: [register] })
    if (cors.length > 0 && !corsOutcomes) {
      corsOutcomes = counter(
        'beacon_cors_requests_total',
        'Requests with an Origin to endpoints that declare cors, by outcome (allowed; denied: answered without CORS ' +
          'headers; preflight; preflight_denied)',
        ['endpoint', 'outcome']
      )
      for (const endpoint of cors) for (const outcome of CORS_OUTCOMES) corsOutcomes.inc({ endpoint, outcome }, 0)
    }
    const withEvents = Object.keys(eventNames)
    if (withEvents.length > 0 && !events) {
      eventRequests = counter(
        'beacon_event_requests_total',
        'Requests to the event paths (POST /api/<name>/events, GET .../events.gif) by outcome: accepted, preflight, ' +
          'or the error code',
        ['endpoint', 'outcome']
      )
      events = counter('beacon_events_total',
        "Events accepted and handed to the endpoint's event sinks, by endpoint and event name",
        ['endpoint', 'event'])
      for (const endpoint of withEvents) {
        eventRequests.inc({ endpoint, outcome: 'accepted' }, 0)
        for (const event of eventNames[endpoint]) events.inc({ endpoint, event }, 0)
      }
    }
  }

  /**
   * Exposes the access-log pipeline of the given sinks: monotonic counts as counters (advanced
   * by the difference at scrape time) and the backlog as gauges.
   * @param {Map<string, { stats: () => object }>} sinks
   */
  function watchSinks (sinks) {
    /** @type {(name: string, help: string, label: string|null,
     *   read: (stats: any) => Array<[string, number]>) => unknown} */
    const follow = (name, help, label, read) => followStats(register, sinks, { name, help, label, read })
    /** @type {(name: string, help: string, read: (stats: any) => number|undefined,
     *   aggregator?: client.Aggregator) => unknown} */
    const gauge = (name, help, read, aggregator = 'sum') =>
      gaugeStats(register, sinks, { name, help, read, aggregator })
    follow('beacon_access_log_entries_total',
      'Access-log entries by sink and what happened to them (accepted, written, spilled, replayed, shed, failed, ' +
        'rejectedAfterClose; shedUnconfirmed: of the shed, those whose write timed out or lost its connection, ' +
        'so HBase may hold them after all; claimed from a dead writer\'s journal, claimedFromWal of them from its ' +
        'write-ahead log; walFailures: not durable; shedKeptInWal: of the shed, those a restart replays from the ' +
        'write-ahead log; corrupt: lines of damaged journal files that could not be replayed)',
      'state', (stats) => SINK_COUNTERS.map((state) => [state, stats[state]]))
    follow('beacon_access_log_shed_total',
      'Access-log entries dropped, by reason: overload (the shed policy), journal_full (the spill journal holds its ' +
        'journalMaxSize), disk_full / write_error (the local disk refused the journal or file log), ' +
        'write_backlog (the disk is slower than the entries come)',
      'reason', (stats) => Object.entries(stats.shedBy || {}))
    follow('beacon_access_rollup_errors_total', ROLLUP_ERRORS_HELP, 'kind',
      (stats) => stats.rollup ? [['mark', stats.rollup.markFailures]] : [])
    follow('beacon_access_log_file_early_rotations_total',
      'File access-log rotations whose cleanup left less history than keepFiles periods promise ' +
        '(a flood rotating on size)',
      null, (stats) => stats.history ? [['', stats.history.earlyRotations]] : [])
    follow('beacon_access_log_quarantined_files_total',
      'Damaged journal or write-ahead-log files renamed <name>.damaged-<ms> and left for the operator',
      null, (stats) => [['', stats.quarantinedFiles]])
    gauge('beacon_access_log_queue_depth', 'Entries held in memory and not yet sent (queued or waiting for a retry)',
      (s) => s.queueDepth)
    gauge(
      'beacon_access_log_pending',
      'Entries accepted but not yet durable in the sink (queue depth + batches in flight)',
      (s) => s.pending
    )
    gauge('beacon_access_log_journal_pending', 'Entries in local journal files on disk, not yet replayed',
      (s) => s.journalPending)
    gauge(
      'beacon_access_log_journal_buffered',
      'Entries handed to the journal and still in memory, waiting for its disk (bounded; shed past the bound)',
      (s) => s.journalBuffered
    )
    gauge(
      'beacon_access_log_write_failing',
      "1 while the local disk refuses the sink's writes (journal, write-ahead log or file log)",
      (s) => (s.writeFailing === undefined ? undefined : s.writeFailing || s.walFailing ? 1 : 0),
      'max'
    )
    gauge('beacon_access_rollup_enabled',
      'Access-log rollups: 1 while this HBase sink marks minutes, 0 when its rollups are off ' +
        'or marking failed for good (no rollup table; said in the app log)',
      // Only HBase sinks have a `state` (up/down): a file sink has no rollups to report.
      (s) => (s.rollup ? (s.rollup.disabled ? 0 : 1) : 'state' in s ? 0 : undefined), 'min')
    gauge('beacon_access_log_left_on_disk',
      'Entries this sink left in journal files on the host\'s disk when it closed, ' +
        'HBase not taking them in time (0 until a close)',
      (s) => s.leftOnDisk)
    gauge('beacon_access_rollup_marks_pending',
      'Access-log rollups: minutes whose rows are written and whose mark is not yet (retried on its own)',
      (s) => (s.rollup ? s.rollup.markPending : undefined))
    gauge(
      'beacon_access_log_oldest_pending_seconds',
      'Age of the oldest entry not yet written',
      (s) => (typeof s.oldestPendingMs === 'number' ? s.oldestPendingMs / 1000 : undefined),
      'max'
    )
  }

  /**
   * Exposes the rollup job (logging/rollup/roller.js) of the process that runs it
   * (api/rollup-job.js), by sink: its runs that failed, the minutes and raw rows it counted, its
   * lag. The primary's /metrics sums them with the workers' series (the lag: the largest).
   * @param {Map<string, { stats: () => object }>} rollers sink name → roller
   */
  function watchRollers (rollers) {
    followStats(register, rollers, {
      name: 'beacon_access_rollup_errors_total', help: ROLLUP_ERRORS_HELP, label: 'kind', read: (s) => [['run', s.errors]]
    })
    followStats(register, rollers, {
      name: 'beacon_access_rollup_minutes_total',
      help: 'Access-log rollups: minutes counted from the raw rows by the rollup job (its process, one per host)',
      label: null,
      read: (s) => [['', s.minutesRolled]]
    })
    followStats(register, rollers, {
      name: 'beacon_access_rollup_rows_total',
      help: 'Access-log rollups: raw rows the rollup job read to count them ' +
        '(a row of a minute counted again is read again)',
      label: null,
      read: (s) => [['', s.rowsCounted]]
    })
    gaugeStats(register, rollers, {
      name: 'beacon_access_rollup_lag_seconds',
      help: 'Access-log rollups: how long ago the oldest minute due and not yet counted ended (0: all counted; ' +
        'the minute in progress is counted once it ended and settled)',
      read: (s) => s.lagSeconds,
      aggregator: 'max'
    })
    gaugeStats(register, rollers, {
      name: 'beacon_access_rollup_parked_minutes',
      help: 'Access-log rollups: marked minutes the rollup job failed to count too often and set aside ' +
        '(tried again hourly; later minutes go on; `beacon log check` names them). Above 0 is an alarm',
      read: (s) => s.parkedMinutes,
      aggregator: 'max'
    })
  }

  /**
   * Exposes the change streams (api/public/ofrep/stream-hub.js): open streams as a gauge, what they
   * did as counters advanced by the difference at scrape time.
   * @param {{ stats: () => { open: Record<string, number>, counts: Record<string, { opened: number, events: number,
   *   cut: number, aged: number, refused: Record<string, number> }> } }} hub
   */
  function watchStreams (hub) {
    if (Object.keys(hub.stats().open).length === 0) return
    new client.Gauge({ // eslint-disable-line no-new -- registered, read at scrape time
      name: 'beacon_change_streams',
      help: 'Change streams (GET /api/<name>/changes) open on this process, by endpoint',
      labelNames: ['endpoint'],
      registers: [register],
      collect () {
        for (const [endpoint, n] of Object.entries(hub.stats().open)) this.set({ endpoint }, n)
      }
    })
    const last = new Map()
    new client.Counter({ // eslint-disable-line no-new -- registered, read at scrape time
      name: 'beacon_change_stream_events_total',
      help: 'Change streams by endpoint and what happened: opened, event (a refetchEvaluation written), ' +
        'cut (the client stopped reading), aged (ended at its maximum age with a reconnect hint), ' +
        'or the error code a request for one was refused with',
      labelNames: ['endpoint', 'outcome'],
      registers: [register],
      collect () {
        for (const [endpoint, c] of Object.entries(hub.stats().counts)) {
          /** @type {Array<[string, number]>} */
          const outcomes = [['opened', c.opened], ['event', c.events], ['cut', c.cut], ['aged', c.aged],
            ...Object.entries(c.refused)]
          for (const [outcome, n] of outcomes) {
            const key = endpoint + ' ' + outcome
            const delta = n - (last.get(key) || 0)
            if (delta > 0 || !last.has(key)) this.inc({ endpoint, outcome }, Math.max(0, delta))
            last.set(key, n)
          }
        }
      }
    })
  }

  /**
   * Exposes what the HBase client sent and read, by kind and by connection
   * (hbase-traffic.js), read from the client at scrape time. Once per registry.
   * @param {{ trafficStats: () => import('@beacon/hbase-client').TrafficStats }} client
   */
  function watchHBaseTraffic (client) {
    if (register.getSingleMetric('beacon_hbase_rpcs_total')) return
    registerHBaseTraffic(register, client)
  }

  return {
    register,
    hooks,
    watchSinks,
    watchRollers,
    watchStreams,
    watchHBaseTraffic,
    declareBrowserPaths,
    metrics: () => register.metrics(),
    contentType: register.contentType,
    /** Stops the sampling this registry does on its own (the event-loop delay); idempotent. */
    close: () => loop?.stop()
  }
}

module.exports = { createMetrics }
