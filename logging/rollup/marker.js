'use strict'

const { ROLLUP_FAMILY, rollupKey, minuteOfLogRow } = require('./layout')

const RETRY_BASE_MS = 100
const RETRY_MAX_MS = 5000

/**
 * The writers' side of the rollups (layout.js): after HBase acknowledged a batch of access-log
 * rows, mark each minute they fall in. The marks are the marker's own business: a mark that
 * cannot be written for a reason that passes (HBase busy, a region moving) keeps its minutes
 * waiting here and is tried again on its own, with backoff, so the access log never waits for,
 * fails or journals a row because of its rollups. A mark written later than its rows is still
 * exact: the minute is counted again after it. A reason that does not pass (no rollup table)
 * switches rollups off for this sink, said once in the log and in stats().
 *
 * Minutes waiting (markPending) are in memory only: a process killed meanwhile leaves those
 * minutes' rollups behind their rows until another write marks them (`beacon log check` shows it).
 *
 * @param {object} deps
 * @param {{ multiPut: Function }} deps.client
 * @param {string} deps.rollupTable
 * @param {string} deps.logTable
 * @param {string} deps.writerId unique among writers (as the log's row keys need anyway)
 * @param {any} [deps.logger]
 */
function createRollupMarker ({ client, rollupTable, logTable, writerId, logger }) {
  let seq = 0
  const stats = { marks: 0, markFailures: 0, disabled: /** @type {string|null} */ (null) }
  /** @type {Set<number>} minutes whose rows are written and whose mark is not yet */
  const waiting = new Set()
  /** @type {Promise<any>|null} the mark write in flight: one at a time */
  let writing = null
  let retryTimer = null
  let backoff = RETRY_BASE_MS
  let closed = false

  /** @param {number[]} minutes @param {number} [timeout] @returns {Promise<any>} an HBaseError, or null */
  async function put (minutes, timeout) {
    const token = `${writerId}.${seq++}`
    const puts = minutes.map((minute) => ({
      row: rollupKey('m', logTable, minute),
      cells: [{ family: ROLLUP_FAMILY, qualifier: token, value: '' }]
    }))
    let results
    try {
      results = await client.multiPut(rollupTable, puts, { timeout })
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
   * Writes the marks of every waiting minute, after the write in flight.
   * @param {number} [timeout] ms
   * @returns {Promise<any>} null when they landed (or rollups are off), else why not (an HBaseError)
   */
  async function write (timeout) {
    // One write at a time; minutes added meanwhile go in the next one.
    for (let inFlight = writing; inFlight; inFlight = writing) await inFlight
    if (stats.disabled || waiting.size === 0) return null
    const minutes = [...waiting]
    waiting.clear()
    writing = put(minutes, timeout)
    const err = await writing
    writing = null
    if (!err) {
      stats.marks += minutes.length
      backoff = RETRY_BASE_MS
      return null
    }
    stats.markFailures++
    if (!err.retryable) {
      stats.disabled = err.code || err.message
      if (logger) {
        logger.error({ err, rollupTable },
          'access-log rollups: cannot mark minutes in the rollup table; rollups are off for this process (the access log goes on)')
      }
      return null
    }
    for (const minute of minutes) waiting.add(minute)
    scheduleRetry()
    return err
  }

  return {
    /**
     * Marks the minutes of these rows (after HBase acknowledged them). Never rejects.
     * @param {string[]} rowKeys access-log row keys
     * @param {number} [timeout] ms
     * @returns {Promise<Error|null>} how the write that carried them went; on an error they
     *   wait and are tried again by themselves
     */
    mark (rowKeys, timeout) {
      if (stats.disabled || rowKeys.length === 0) return Promise.resolve(null)
      for (const key of rowKeys) waiting.add(minuteOfLogRow(key))
      return write(timeout)
    },

    /**
     * Tries the waiting marks now. Never rejects.
     * @param {number} [timeout] ms
     * @returns {Promise<Error|null>}
     */
    flush: (timeout) => write(timeout),

    /** Stops the retries; what still waits is said in the log. */
    close () {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      retryTimer = null
      if (waiting.size && logger) {
        logger.warn({ minutes: waiting.size, rollupTable },
          'access-log rollups: marks not written at close; ' +
          'these minutes\' rollups miss rows until a later write marks them (beacon log check finds them)')
      }
    },

    /** @returns {{ marks: number, markFailures: number, markPending: number, disabled: string|null }} */
    stats: () => ({ ...stats, markPending: waiting.size })
  }
}

module.exports = { createRollupMarker }
