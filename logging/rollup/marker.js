'use strict'

const { ROLLUP_FAMILY, rollupKey, minuteOfLogRow } = require('./layout')

const RETRY_BASE_MS = 100
const RETRY_MAX_MS = 5000

/**
 * The marks one write of the log takes along (ride()): puts into the rollup table, and what to say
 * once that write is answered.
 * @typedef {Error & { code?: string, retryable?: boolean }} MarkFailure why a mark write failed (an HBaseError)
 * @typedef {object} Ride
 * @property {Array<{ table: string, row: string,
 *   cells: Array<{ family: string, qualifier: string, value: string }> }>} puts
 * @property {(err: MarkFailure|null) => void} landed call once with the first error among the puts' results
 *   (an HBaseError), or null when all were written
 */

/**
 * The writers' side of the rollups (layout.js): after HBase acknowledged a batch of access-log
 * rows, mark each minute they fall in. The marks are the marker's own business: a mark that
 * cannot be written for a reason that passes (HBase busy, a region moving) keeps its minutes
 * waiting here and is tried again on its own, with backoff, so the access log never waits for,
 * fails or journals a row because of its rollups. A mark written later than its rows is still
 * exact: the minute is counted again after it. A reason that does not pass (no rollup table)
 * switches rollups off for this sink, said once in the log and in stats().
 *
 * With `rideMs`, when the sink says a write of the log is queued (mark()'s `ride`), a mark is not
 * a write of its own: the minutes wait for that write, which takes them along in its Multi RPC
 * (ride(): the sink's batcher asks before each write), so a batch of the log costs one RPC,
 * marks included, instead of two. A queued batch goes within one flush interval; minutes no write
 * took within `rideMs` (a safety net: HBase down, the writes in flight at their limit) are written
 * on their own, and so is every mark when no write is queued (the last batch before a pause).
 * Either way a mark is sent only after HBase acknowledged the rows it stands for, so it still
 * follows them, later by at most a flush interval while entries come.
 *
 * Minutes waiting (markPending) are in memory only: a process killed meanwhile leaves those
 * minutes' rollups behind their rows until another write marks them (`beacon log check` shows it).
 *
 * @param {object} deps
 * @param {{ multiPut: Function }} deps.client
 * @param {string} deps.rollupTable
 * @param {string} deps.logTable
 * @param {string} deps.writerId unique among writers (as the log's row keys need anyway)
 * @param {number} [deps.rideMs] how long marks wait for a write of the log to take them (0: mark()
 *   writes them at once)
 * @param {any} [deps.logger]
 */
function createRollupMarker ({ client, rollupTable, logTable, writerId, rideMs = 0, logger }) {
  let seq = 0
  const stats = { marks: 0, marksRidden: 0, markFailures: 0, disabled: /** @type {string|null} */ (null) }
  /** @type {Set<number>} minutes whose rows are written and whose mark is not yet */
  const waiting = new Set()
  /** @type {Promise<MarkFailure|null>|null} the mark write in flight: one at a time */
  let writing = null
  /** @type {Set<Promise<void>>} the writes of the log that took marks along, until answered */
  const rides = new Set()
  /** @type {NodeJS.Timeout|null} */
  let retryTimer = null
  /** @type {NodeJS.Timeout|null} */
  let rideTimer = null
  /** @type {number|undefined} the timeout of the marks waiting for a ride */
  let rideTimeout
  let backoff = RETRY_BASE_MS
  let closed = false
  let flushing = 0 // > 0: no rides, so that a flush's wait for them ends

  /** @param {number[]} minutes @returns {Ride['puts']} one put per minute, under one token */
  function putsOf (minutes) {
    const token = `${writerId}.${seq++}`
    return minutes.map((minute) => ({
      table: rollupTable,
      row: rollupKey('m', logTable, minute),
      cells: [{ family: ROLLUP_FAMILY, qualifier: token, value: '' }]
    }))
  }

  /** @param {number[]} minutes @param {number} [timeout] @returns {Promise<MarkFailure|null>} an HBaseError, or null */
  async function put (minutes, timeout) {
    const puts = putsOf(minutes)
    let results
    try {
      results = await client.multiPut(rollupTable, puts, { timeout, coalesce: true })
    } catch (err) {
      results = puts.map(() => err)
    }
    return results.find(Boolean) || null
  }

  function scheduleRetry () {
    if (retryTimer || closed || waiting.size === 0) return
    retryTimer = setTimeout(() => {
      retryTimer = null
      write().catch(() => {})
    }, backoff * (0.75 + Math.random() * 0.5))
    retryTimer.unref()
    backoff = Math.min(RETRY_MAX_MS, backoff * 2)
  }

  /**
   * How a write of these minutes' marks went: counted; on a reason that passes they wait again.
   * @param {number[]} minutes
   * @param {MarkFailure|null} err an HBaseError, or null
   * @returns {MarkFailure|null} err, or null when it switched rollups off
   */
  function settle (minutes, err) {
    if (!err) {
      stats.marks += minutes.length
      backoff = RETRY_BASE_MS
      return null
    }
    stats.markFailures++
    if (!err.retryable) {
      if (!stats.disabled && logger) {
        logger.error({ err, rollupTable },
          'access-log rollups: cannot mark minutes in the rollup table; ' +
            'rollups are off for this process (the access log goes on)')
      }
      stats.disabled = err.code || err.message
      waiting.clear()
      return null
    }
    for (const minute of minutes) waiting.add(minute)
    scheduleRetry()
    return err
  }

  /**
   * Writes the marks of every waiting minute, after the write in flight.
   * @param {number} [timeout] ms
   * @returns {Promise<MarkFailure|null>} null when they landed (or rollups are off), else why not (an HBaseError)
   */
  async function write (timeout) {
    // One write at a time; minutes added meanwhile go in the next one.
    for (let inFlight = writing; inFlight; inFlight = writing) await inFlight
    if (stats.disabled || waiting.size === 0) return null
    stopRideTimer()
    const minutes = [...waiting]
    waiting.clear()
    writing = put(minutes, timeout)
    const err = await writing
    writing = null
    return settle(minutes, err)
  }

  function stopRideTimer () {
    if (rideTimer) clearTimeout(rideTimer)
    rideTimer = null
  }

  /** Minutes no write of the log took within rideMs are written on their own. */
  function armRideTimer () {
    if (rideTimer || closed) return
    rideTimer = setTimeout(() => {
      rideTimer = null
      write(rideTimeout).catch(() => {})
    }, rideMs)
    rideTimer.unref()
  }

  return {
    /**
     * Marks the minutes of these rows (after HBase acknowledged them). Never rejects.
     * @param {string[]} rowKeys access-log row keys
     * @param {number} [timeout] ms
     * @param {boolean} [ride] a write of the log is queued: with rideMs the marks wait for it
     * @returns {Promise<Error|null>} how the write that carried them went; on an error they
     *   wait and are tried again by themselves. Waiting for a ride: null at once.
     */
    mark (rowKeys, timeout, ride = false) {
      if (stats.disabled || rowKeys.length === 0) return Promise.resolve(null)
      for (const key of rowKeys) waiting.add(minuteOfLogRow(key))
      if (rideMs <= 0 || !ride) return write(timeout)
      rideTimeout = timeout
      armRideTimer()
      return Promise.resolve(null)
    },

    /**
     * The marks waiting, for a write of the log about to be sent to take along in its Multi RPC
     * (their puts name the rollup table); null when none wait. The caller must call `landed`
     * once that write is answered.
     * @returns {Ride|null}
     */
    ride () {
      if (rideMs <= 0 || flushing > 0 || stats.disabled || waiting.size === 0) return null
      stopRideTimer()
      const minutes = [...waiting]
      waiting.clear()
      /** @type {() => void} */
      let done = () => {}
      const answered = new Promise((resolve) => { done = () => resolve(undefined) })
      rides.add(answered)
      let settled = false
      return {
        puts: putsOf(minutes),
        landed (err) {
          if (settled) return
          settled = true
          rides.delete(answered)
          if (!err) stats.marksRidden += minutes.length
          settle(minutes, err || null)
          done()
        }
      }
    },

    /**
     * Writes the waiting marks now, after the writes of the log that took marks along were
     * answered (the marks of those that failed wait again); meanwhile no write takes marks along.
     * Never rejects.
     * @param {number} [timeout] ms
     * @returns {Promise<Error|null>}
     */
    async flush (timeout) {
      flushing++
      try {
        while (rides.size) await Promise.all(rides)
        return await write(timeout)
      } finally {
        flushing--
      }
    },

    /** Stops the retries; what still waits is said in the log. */
    close () {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      retryTimer = null
      stopRideTimer()
      if (waiting.size && logger) {
        logger.warn({ minutes: waiting.size, rollupTable },
          'access-log rollups: marks not written at close; ' +
          'these minutes\' rollups miss rows until a later write marks them (beacon log check finds them)')
      }
    },

    /** @returns {{ marks: number, marksRidden: number, markFailures: number, markPending: number,
     *   disabled: string|null }} */
    stats: () => ({ ...stats, markPending: waiting.size })
  }
}

module.exports = { createRollupMarker }
