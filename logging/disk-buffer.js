'use strict'

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT'])
const LOG_EVERY_MS = 30000

/** @typedef {'disk_full'|'write_error'|'write_backlog'} RefusalReason why a disk buffer refuses a line */

/**
 * @param {string|null|undefined} code an errno code
 * @returns {'disk_full'|'write_error'} why a write to local disk failed, as a shed reason
 */
function writeFailureReason (code) {
  return code && DISK_FULL_CODES.has(code) ? 'disk_full' : 'write_error'
}

/**
 * The "disk refuses writes" machine both disk sinks share (the file access log and the spill
 * journal): lines wait in memory within a bound, a refused write is tried again every `retryMs`
 * (never a busy loop), and a line past the bound is refused for a reason (disk_full, write_error,
 * or write_backlog when the disk is merely slower than the lines come). The owner keeps the lines
 * and counts what it sheds; this object owns whether the disk is failing, since when, its retry
 * timer and the log lines that go with it: one when writes start failing, one at most every 30 s
 * while they keep failing (a full disk must not flood the app log), one when a write works again.
 */
class DiskBuffer {
  #what
  #log
  #fields
  #waiting
  #retry
  #maxLines
  #retryMs
  #now
  /** @type {{ code: string, since: number }|null} */
  #failure = null
  #lastLog = 0
  /** @type {NodeJS.Timeout|null} */
  #timer = null
  #stopped = false
  #errors = 0
  /** @type {NodeJS.ErrnoException|null} */
  #lastError = null

  /**
   * @param {object} options
   * @param {string} options.what how the log names the writer ("access-log journal")
   * @param {number} options.maxLines lines that may wait in memory
   * @param {number} options.retryMs wait before a refused write is tried again
   * @param {() => number} options.waiting lines waiting now (not yet on disk)
   * @param {() => void} options.retry tries the waiting lines again (the retry timer fired)
   * @param {(level: string, fields: object, message: string) => void} options.log
   * @param {() => object} [options.fields] figures to add to each log line (what waits, what was shed)
   * @param {() => number} [options.now] the clock
   */
  constructor ({ what, maxLines, retryMs, waiting, retry, log, fields = () => ({}), now = Date.now }) {
    this.#what = what
    this.#maxLines = maxLines
    this.#retryMs = retryMs
    this.#waiting = waiting
    this.#retry = retry
    this.#log = log
    this.#fields = fields
    this.#now = now
  }

  /** @returns {boolean} whether one more line may wait */
  hasRoom () {
    return this.#waiting() < this.#maxLines
  }

  /** @returns {RefusalReason} why a line past the bound is refused now */
  refusalReason () {
    return this.#failure ? writeFailureReason(this.#failure.code) : 'write_backlog'
  }

  /**
   * A write failed: the lines wait and are tried again after `retryMs`.
   * @param {unknown} err a write's (an errno error)
   */
  failed (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    this.#errors++
    this.#lastError = e
    const now = this.#now()
    if (!this.#failure) {
      this.#failure = { code: e.code || e.message, since: now }
      this.#lastLog = now
      this.#log('error', { err, ...this.#fields() },
        `${this.#what} cannot be written; lines wait in memory and are retried`)
    } else if (now - this.#lastLog >= LOG_EVERY_MS) {
      this.#lastLog = now
      this.#log('error', { err, ...this.#fields(), failingMs: now - this.#failure.since },
        `${this.#what} still cannot be written`)
    }
    this.armRetry()
  }

  /** A write went through. */
  worked () {
    if (!this.#failure) return
    this.#log('info', { ...this.#fields(), failedMs: this.#now() - this.#failure.since },
      `${this.#what} writable again`)
    this.#failure = null
  }

  /**
   * Calls `retry` after `retryMs`, once however often it is asked meanwhile; never after stop().
   * unref: a disk that cannot be written must not keep the process alive by itself.
   */
  armRetry () {
    if (this.#timer || this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.#retry()
    }, this.#retryMs)
    this.#timer.unref()
  }

  /** No more retries (close). */
  stop () {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
  }

  /** @returns {boolean} whether a retry is due */
  get retrying () {
    return this.#timer !== null
  }

  /** @returns {{ code: string, since: number }|null} the failure, while it lasts */
  get failure () {
    return this.#failure
  }

  /** @returns {number} writes that failed */
  get errors () {
    return this.#errors
  }

  /** @returns {NodeJS.ErrnoException|null} the last write error */
  get lastError () {
    return this.#lastError
  }
}

module.exports = { DiskBuffer, writeFailureReason }
