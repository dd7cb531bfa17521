'use strict'

const { ROLLUP_FAMILY, MINUTE_MS, minuteOf, rollupKey, minuteOfRollupKey } = require('./layout')
const { recountMinute } = require('./recount')

/**
 * The rollup job (layout.js says why its counts are exact). Every `intervalMs` it looks for
 * marked minutes that ended at least `settleMs` ago, oldest first, and for each: reads its marks,
 * counts the minute's raw rows, writes the absolute counts with the newest mark's HBase timestamp
 * as their version, and deletes the marks it read (recount.js). Any number of rollers
 * (workers, hosts) may run at once: the result is the same, only the work is repeated.
 *
 * @param {object} deps
 * @param {import('../../lib/hbase').HBaseClient} deps.client
 * @param {string} deps.logTable
 * @param {string} deps.rollupTable
 * @param {number} deps.buckets the access log's salt buckets
 * @param {{ now(): number }} [deps.clock]
 * @param {number} [deps.settleMs] a minute is counted this long after it ended (rows still in flight)
 * @param {number} [deps.intervalMs]
 * @param {number} [deps.maxMinutesPerRun] bounds one run after a long outage
 * @param {number} [deps.timeoutMs] per HBase call
 * @param {any} [deps.logger]
 */
function createRoller ({
  client, logTable, rollupTable, buckets, clock = Date, settleMs = 5000, intervalMs = 5000, maxMinutesPerRun = 30, timeoutMs = 10000, logger
}) {
  const stats = {
    runs: 0,
    minutesRolled: 0,
    rowsCounted: 0,
    errors: 0,
    lastError: /** @type {string|null} */ (null),
    pendingMinutes: 0,
    lagSeconds: 0
  }
  let timer = null
  /** @type {Promise<number>|null} */
  let running = null
  let stopped = false

  /** Scans the marks of this log table: the marked minutes, oldest first. */
  async function markedMinutes (limit) {
    const marked = []
    const scan = client.scan(rollupTable, {
      startRow: rollupKey('m', logTable, 0),
      stopRow: rollupKey('m', logTable, 9999999999999),
      families: [ROLLUP_FAMILY],
      timeout: timeoutMs
    })
    for await (const row of scan) {
      marked.push({ key: row.row.toString('utf8'), cells: row.cells })
      if (marked.length >= limit) break
    }
    return marked
  }

  /**
   * Counts one marked minute and clears the marks read (./recount.js).
   * @param {{ key: string, cells: Array<{ qualifier: string, timestamp: number }> }} marked
   */
  async function rollMinute (marked) {
    const rows = await recountMinute({ client, logTable, rollupTable, buckets, timeout: timeoutMs }, marked)
    stats.minutesRolled++
    stats.rowsCounted += rows
  }

  /** @returns {Promise<number>} minutes rolled up */
  async function run () {
    const now = clock.now()
    const ready = minuteOf(now - settleMs) - MINUTE_MS // the last minute that ended settleMs ago
    // More than a run takes: those left tell the lag.
    const marked = await markedMinutes(maxMinutesPerRun * 2)
    const due = marked.filter((m) => minuteOfRollupKey(m.key) <= ready).slice(0, maxMinutesPerRun)
    for (const m of due) {
      if (stopped) break
      await rollMinute(m)
    }
    const left = marked.filter((m) => minuteOfRollupKey(m.key) <= ready).slice(due.length)
    stats.pendingMinutes = left.length
    // Lag: how long ago the oldest minute that is due and not yet counted ended (0: none is).
    stats.lagSeconds = left.length ? Math.max(0, (now - minuteOfRollupKey(left[0].key) - MINUTE_MS) / 1000) : 0
    if (due.length && logger) logger.debug({ logTable, minutes: due.length, left: left.length }, 'access-log rollups: minutes counted')
    return due.length
  }

  /** Runs once now (unless a run is in flight: then that one). */
  function runOnce () {
    if (running) return running
    stats.runs++
    running = run().then((n) => {
      if (stats.lastError && logger) logger.info({ logTable, rollupTable }, 'access-log rollups: running again')
      stats.lastError = null
      return n
    }, (err) => {
      stats.errors++
      // Said once per streak of failures (HBase down, no rollup table), not every interval.
      if (!stats.lastError && logger) {
        logger.warn({ err, logTable, rollupTable }, 'access-log rollups: run failed; tried again every interval')
      }
      stats.lastError = err.code || err.message
      return 0
    }).finally(() => { running = null })
    return running
  }

  function schedule () {
    if (stopped) return
    timer = setTimeout(() => {
      timer = null
      runOnce().then(schedule)
    }, intervalMs)
    timer.unref()
  }

  return {
    /** Starts the periodic runs. */
    start () {
      if (!timer && !stopped) schedule()
    },
    runOnce,
    /** @returns {typeof stats} */
    stats: () => ({ ...stats }),
    /**
     * Stops scheduling runs; a run in flight ends at its next minute, and its HBase calls end
     * with the client's close. Never waited for: with HBase down a run can take a whole call
     * timeout, which would eat the shutdown budget (and counts are only ever recomputed).
     */
    async close () {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = null
    }
  }
}

module.exports = { createRoller }
