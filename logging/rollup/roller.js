'use strict'

const { ROLLUP_FAMILY, MINUTE_MS, PARKED_QUALIFIER, minuteOf, rollupKey, minuteOfRollupKey } = require('./layout')
const { recountMinute } = require('./recount')
const { clearSpillLeftovers } = require('./group-counter')

const ATTEMPT_PREFIX = 'try.'

/**
 * The rollup job (layout.js says why its counts are exact). Every `intervalMs` it looks for
 * marked minutes that ended at least `settleMs` ago, oldest first, and for each: reads its marks,
 * counts the minute's raw rows, writes the absolute counts with the newest mark's HBase timestamp
 * as their version, and deletes the marks it read (recount.js). Any number of rollers
 * (workers, hosts) may run at once: the result is the same, only the work is repeated.
 *
 * A minute that cannot be counted must not hold up the later ones. Each attempt leaves a cell in
 * the minute's attempts row before it starts (so one whose process dies midway is seen too),
 * and the row goes once the minute is counted. A minute with `maxAttempts` attempts over at least
 * `parkAfterMs` is parked: skipped, said in the app log, the metrics, `/readyz` and `log check`,
 * and tried once every `parkRetryMs`. A failed minute is left for the next run; the run goes on
 * with the later ones.
 *
 * @param {object} deps
 * @param {import('@beacon/hbase-client').HBaseClient} deps.client
 * @param {string} deps.logTable
 * @param {string} deps.rollupTable
 * @param {number} deps.buckets the access log's salt buckets
 * @param {{ now(): number }} [deps.clock]
 * @param {number} [deps.settleMs] a minute is counted this long after it ended (rows still in flight)
 * @param {number} [deps.intervalMs]
 * @param {number} [deps.maxMinutesPerRun] bounds one run after a long outage
 * @param {number} [deps.timeoutMs] per HBase call
 * @param {number} [deps.maxGroups] groups held in memory while counting a minute (group-counter.js)
 * @param {string} [deps.spillDir] where the rest wait (a folder of this host's)
 * @param {number} [deps.maxAttempts] attempts before a minute is parked
 * @param {number} [deps.parkAfterMs] ... and over at least this long (an HBase failover is not a reason)
 * @param {number} [deps.parkRetryMs] a parked minute is tried again this long after its last attempt
 * @param {string} [deps.writerId] names this roller's attempts
 * @param {any} [deps.logger]
 */
function createRoller ({
  client, logTable, rollupTable, buckets, clock = Date, settleMs = 5000, intervalMs = 5000, maxMinutesPerRun = 30,
  timeoutMs = 10000, maxGroups, spillDir, maxAttempts = 5, parkAfterMs = 5 * MINUTE_MS, parkRetryMs = 60 * MINUTE_MS,
  writerId = `${process.pid}`, logger
}) {
  if (spillDir) clearSpillLeftovers(spillDir)
  const stats = {
    runs: 0,
    minutesRolled: 0,
    rowsCounted: 0,
    errors: 0,
    lastError: /** @type {string|null} */ (null),
    pendingMinutes: 0,
    parkedMinutes: 0,
    lagSeconds: 0
  }
  let attemptSeq = 0
  /** @type {NodeJS.Timeout|null} */
  let timer = null
  /** @type {Promise<number>|null} */
  let running = null
  let stopped = false

  /**
   * @param {'m'|'a'} kind
   * @returns {AsyncIterable<import('@beacon/hbase-client').Row>} every row of that kind, oldest minute first
   */
  function rowsOf (kind) {
    return client.scan(rollupTable, {
      startRow: rollupKey(kind, logTable, 0),
      stopRow: rollupKey(kind, logTable, 9999999999999),
      families: [ROLLUP_FAMILY],
      timeout: timeoutMs
    })
  }

  /** Scans the marks of this log table: the marked minutes, oldest first. */
  /** @param {number} limit @returns {Promise<Array<{ key: string, cells: import('@beacon/hbase-client').Cell[] }>>} */
  async function markedMinutes (limit) {
    const marked = []
    for await (const row of rowsOf('m')) {
      marked.push({ key: row.row.toString('utf8'), cells: row.cells })
      if (marked.length >= limit) break
    }
    return marked
  }

  /**
   * The attempts rows of this log table: minute → its attempts and whether it is parked.
   * @returns {Promise<Map<number, { attempts: number[], parked: boolean }>>} attempts: their times
   */
  async function attemptsByMinute () {
    const rows = new Map()
    for await (const row of rowsOf('a')) {
      const attempts = row.cells.filter((c) => String(c.qualifier).startsWith(ATTEMPT_PREFIX)).map((c) => c.timestamp)
      const parked = row.cells.some((c) => String(c.qualifier) === PARKED_QUALIFIER)
      rows.set(minuteOfRollupKey(row.row.toString('utf8')), { attempts, parked })
    }
    return rows
  }

  /**
   * Whether a minute is left alone this run: parked, and tried less than parkRetryMs ago.
   * @param {{ attempts: number[], parked: boolean }|undefined} tried
   * @param {number} now
   */
  function resting (tried, now) {
    return Boolean(tried && parks(tried) && now - Math.max(...tried.attempts) < parkRetryMs)
  }

  /** @param {{ attempts: number[] }} tried @returns {boolean} enough attempts, over long enough */
  function parks ({ attempts }) {
    return attempts.length >= maxAttempts && Math.max(...attempts) - Math.min(...attempts) >= parkAfterMs
  }

  /**
   * Counts one marked minute and clears the marks read (./recount.js), its attempt recorded
   * before and its attempts row deleted after.
   * @param {{ key: string, cells: Array<{ qualifier: string, timestamp: number }> }} marked
   */
  async function rollMinute (marked) {
    const minute = minuteOfRollupKey(marked.key)
    const attempts = rollupKey('a', logTable, minute)
    // Stamped with the job's clock: what parks() and resting() compare it with.
    const attempt = {
      family: ROLLUP_FAMILY,
      qualifier: `${ATTEMPT_PREFIX}${writerId}.${attemptSeq++}`,
      value: '',
      timestamp: clock.now()
    }
    await client.put(rollupTable, attempts, [attempt], { timeout: timeoutMs })
    const rows = await recountMinute(
      { client, logTable, rollupTable, buckets, timeout: timeoutMs, maxGroups, spillDir },
      marked
    )
    await client.delete(rollupTable, attempts, { timestamp: clock.now(), timeout: timeoutMs })
    stats.minutesRolled++
    stats.rowsCounted += rows
  }

  /**
   * Parks a minute (its cell read by `log check` and `/readyz`), said once.
   * @param {number} minute
   * @param {{ attempts: number[], parked: boolean }} tried
   * @param {string} why the last error, or that a process died counting it
   */
  async function park (minute, tried, why) {
    tried.parked = true
    const cells = [{ family: ROLLUP_FAMILY, qualifier: PARKED_QUALIFIER, value: why, timestamp: clock.now() }]
    await client.put(rollupTable, rollupKey('a', logTable, minute), cells, { timeout: timeoutMs })
    if (logger) {
      logger.error({ logTable, minute: new Date(minute).toISOString(), attempts: tried.attempts.length, why },
        'access-log rollups: a minute could not be counted and is parked; later minutes go on (tried again hourly)')
    }
  }

  /** @returns {Promise<{ rolled: number, failures: number, error: any }>} */
  async function run () {
    const now = clock.now()
    const ready = minuteOf(now - settleMs) - MINUTE_MS // the last minute that ended settleMs ago
    const tried = await attemptsByMinute()
    // Attempts that never ended (a process died counting): parked here if they are enough.
    for (const [minute, t] of tried) {
      if (!t.parked && parks(t)) await park(minute, t, 'a rollup process ended while counting it')
    }
    const parked = [...tried.values()].filter((t) => t.parked).length
    // More than a run takes: those left tell the lag. Resting minutes are read past.
    const marked = await markedMinutes(maxMinutesPerRun * 2 + parked)
    /** @param {{ key: string }} m */
    const isDue = (m) => minuteOfRollupKey(m.key) <= ready && !resting(tried.get(minuteOfRollupKey(m.key)), now)
    const due = marked.filter(isDue).slice(0, maxMinutesPerRun)
    let rolled = 0
    let failures = 0
    let error = null
    let streak = 0
    for (const m of due) {
      // Two failures in a row: HBase itself, most likely; the next run tries again.
      if (stopped || streak >= 2) break
      const minute = minuteOfRollupKey(m.key)
      try {
        await rollMinute(m)
        tried.delete(minute)
        rolled++
        streak = 0
      } catch (caught) {
        const err = /** @type {NodeJS.ErrnoException} */ (caught)
        failures++
        streak++
        error = err
        const before = tried.get(minute) || { attempts: [], parked: false }
        const after = { ...before, attempts: [...before.attempts, now] }
        tried.set(minute, after)
        if (!after.parked && parks(after)) await park(minute, after, err.code || err.message).catch(() => {})
      }
    }
    const left = marked.filter(isDue).slice(due.length)
    stats.pendingMinutes = left.length
    stats.parkedMinutes = [...tried.values()].filter((t) => t.parked).length
    // Lag: how long ago the oldest minute that is due and not yet counted ended (0: none is).
    stats.lagSeconds = left.length ? Math.max(0, (now - minuteOfRollupKey(left[0].key) - MINUTE_MS) / 1000) : 0
    if (rolled && logger) {
      logger.debug({ logTable, minutes: rolled, left: left.length }, 'access-log rollups: minutes counted')
    }
    return { rolled, failures, error }
  }

  /** Runs once now (unless a run is in flight: then that one). */
  function runOnce () {
    if (running) return running
    stats.runs++
    running = run().then(({ rolled, failures, error }) => {
      if (failures) {
        stats.errors += failures
        if (!stats.lastError && logger) {
          logger.warn({ err: error, logTable, failures }, 'access-log rollups: minutes failed; tried again next run')
        }
        stats.lastError = error.code || error.message
        return rolled
      }
      if (stats.lastError && logger) logger.info({ logTable, rollupTable }, 'access-log rollups: running again')
      stats.lastError = null
      return rolled
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
