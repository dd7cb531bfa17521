'use strict'

const { ERRORS } = require('../../lib/errors')
const { parseLogQuery } = require('./params')
const { scanLog } = require('./scan')
const { countLog } = require('./count')
const { DEFAULT_MAX_PAIRS } = require('./distinct-ids')
const { checkRollups } = require('../rollup/read')
const { eligible, countFromRollups } = require('./rollup-count')
const { ndjsonLine, csvLine, csvHeader } = require('./format')
const { countHorizon } = require('./horizon')

/**
 * The access log's read side: parse a query, scan rows in time order, count them. The admin API
 * (api/admin/log.js) serves it; the CLI (`beacon log`) drives the admin API.
 *
 * @param {object} options
 * @param {import('./scan').LogSource['client']} options.client
 * @param {string} options.table the access-log table
 * @param {number} options.buckets its salt buckets (the writers' setting)
 * @param {number} options.maxIdLength ids the data plane serves (settings.limits.maxIdLength)
 * @param {number} [options.timeout] ms per HBase operation (opening a region's scanner)
 * @param {number} [options.scanCaching] rows per scan RPC and read ahead per bucket (default 500)
 * @param {number} [options.countCaching] rows per scan RPC when counting (default 2000)
 * @param {number} [options.countConcurrency] buckets counted at once (default 4)
 * @param {number} [options.maxGroups] distinct `by` keys kept (default 100,000)
 * @param {number} [options.maxUniquePairs] (group, id) pairs a unique count holds (./distinct-ids.js)
 * @param {() => number} [options.now] clock for relative times and the default `to`
 * @param {string|null} [options.rollupTable] where the log's rollups are (count(), check()); null: none
 * @param {string[]} [options.endpoints] the endpoints (a count of one id from the rollups reads their groups)
 * @param {{ current: () => Promise<import('../retention').Ttls> }|null} [options.retention] the log's
 *   TTLs (../retention.js): a count says where they may have taken rows (./horizon.js)
 */
function createLogQuery ({
  client, table, buckets, maxIdLength, timeout, scanCaching = 500, countCaching = 2000, countConcurrency = 4,
  maxGroups = 100000, maxUniquePairs = DEFAULT_MAX_PAIRS, now = Date.now, rollupTable = null, endpoints = [], retention = null
}) {
  if (!client || typeof client.scan !== 'function') {
    throw new ERRORS.INVALID_OPTION('createLogQuery needs an HBase client')
  }
  if (typeof table !== 'string' || table === '') {
    throw new ERRORS.INVALID_OPTION('createLogQuery needs the access-log table')
  }
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 256) {
    throw new ERRORS.INVALID_OPTION('buckets must be 1..256')
  }
  let open = 0
  let queries = 0
  let stoppedEarly = 0
  const track = { opened: () => { open++ }, closed: () => { open-- } }
  const base = { client, table, buckets, timeout, track }

  return {
    table,
    /** The endpoints the settings declare: a count names an endpoint that is not one of them. */
    endpoints: Object.freeze([...endpoints]),

    /**
     * Parses the parameters of a scan or a count (the admin API's query string).
     * @param {'scan'|'count'} kind
     * @param {Record<string, unknown>} raw
     * @returns {any} ScanParams or CountParams (./params.js)
     */
    parse (kind, raw) {
      return parseLogQuery(kind, raw, { now: now(), maxIdLength })
    },

    /**
     * The matching rows in time order (./scan.js).
     * @param {import('./scan').ScanQuery} query
     * @returns {AsyncGenerator<import('./rows').LogRecord, void, void>}
     */
    async * scan (query) {
      queries++
      let finished = false
      try {
        yield * scanLog({ ...base, caching: scanCaching }, query)
        finished = true
      } finally {
        if (!finished) stoppedEarly++
      }
    },

    /**
     * Exact counts: from the rollups where they can answer (./rollup-count.js; `scan: true`
     * forces a scan), else by scanning (./count.js); with the retention known, where it may have
     * taken rows (`horizon`).
     * @param {import('./count').CountQuery} query
     * @param {{ signal?: AbortSignal }} [options]
     * @returns {Promise<import('./count').CountResult>}
     */
    async count (query, options) {
      queries++
      const source = { ...base, caching: countCaching, concurrency: countConcurrency, maxGroups, maxUniquePairs }
      try {
        const result = rollupTable && !query.scan && eligible(query)
          ? await countFromRollups(source, { rollupTable, endpoints }, query, options)
          : await countLog(source, query, options)
        if (retention) {
          const rawFrom = result.rawFrom !== undefined ? result.rawFrom : query.from
          // A master that cannot say (failing over) does not fail a count the RegionServers answered.
          result.horizon = countHorizon({ rawFrom }, await retention.current().catch(() => null), now())
        }
        return result
      } catch (err) {
        stoppedEarly++
        throw err
      }
    },

    /** Whether the log keeps rollups (../rollup/), which check() compares. */
    rollups: Boolean(rollupTable),

    /**
     * Compares the rollups of [from, to) with a count of the raw rows, minute by minute
     * (../rollup/read.js checkRollups).
     * @param {{ from: number, to: number }} query
     * @returns {ReturnType<typeof checkRollups>}
     */
    check (query) {
      if (!rollupTable) throw new ERRORS.LOG_NOT_CONFIGURED('this log keeps no rollups')
      queries++
      return checkRollups({ client, rollupTable, logTable: table, buckets, timeout }, query.from, query.to)
    },

    /**
     * @returns {{ queries: number, openScans: number, stoppedEarly: number }} queries started;
     *   bucket scans open now (0 once every query has ended, early or not); queries that ended
     *   before their last row (a scan's reader stopped, a count was aborted, or either failed)
     */
    stats () {
      return { queries, openScans: open, stoppedEarly }
    }
  }
}

/**
 * The line renderer of a scan's output format.
 * @param {'ndjson'|'csv'} format
 * @returns {{ contentType: string, header: string, line: (record: import('./rows').LogRecord) => string }}
 */
function formatter (format) {
  return format === 'csv'
    ? { contentType: 'text/csv; charset=utf-8', header: csvHeader(), line: csvLine }
    : { contentType: 'application/x-ndjson; charset=utf-8', header: '', line: ndjsonLine }
}

module.exports = { createLogQuery, formatter }
