'use strict'

const { setTimeout: sleep } = require('node:timers/promises')
const { HBaseError, clientClosed } = require('./errors')

/** HBase's own retry schedule (HConstants.RETRY_BACKOFF), as multiples of the base pause. */
const BACKOFF = Object.freeze([1, 2, 3, 5, 10, 20, 40, 100])

/**
 * Time kept for one last attempt (a meta lookup and one RPC) when the backoff would end past the
 * deadline: a region that comes back just before the deadline (a split's daughters opening) is
 * still reached, instead of giving up a backoff early.
 */
const LAST_TRY_MS = 100

/**
 * The timeout for one RPC: `rpcTimeout`, or what is left before `deadline` if that is less
 * (at least 1 ms).
 * @param {number} rpcTimeout ms
 * @param {number} deadline epoch ms
 * @returns {number}
 */
function callTimeout (rpcTimeout, deadline) {
  return Math.max(1, Math.min(rpcTimeout, deadline - Date.now()))
}

/**
 * When and how long to wait before trying again, inside a total deadline. The waits follow
 * BACKOFF with 0-25 % jitter, three times longer when the server said it is overloaded, never
 * above `maxPause`. An aborted `signal` (the client was destroyed) ends every wait and every
 * retry loop at once with HBASE_CLIENT_CLOSED.
 */
class RetryPolicy {
  /**
   * @param {{ pause: number, maxPause: number, rpcTimeout: number, signal?: AbortSignal }} options
   *   pause: base wait in ms; maxPause: longest wait in ms; rpcTimeout: ms per RPC
   */
  constructor ({ pause, maxPause, rpcTimeout, signal }) {
    this.basePause = pause
    this.maxPause = maxPause
    this.rpcTimeoutMs = rpcTimeout
    this.signal = signal || new AbortController().signal
  }

  /**
   * How long to wait before attempt number `attempt + 1`.
   * @param {number} attempt attempts made so far, minus one (0 after the first failure)
   * @param {{ serverOverloaded?: boolean }} [err] the error of the last attempt
   * @returns {number} ms
   */
  pause (attempt, err) {
    const base = this.basePause * BACKOFF[Math.min(attempt, BACKOFF.length - 1)] * (err && err.serverOverloaded ? 3 : 1)
    const jittered = base + Math.random() * base * 0.25
    return Math.min(this.maxPause, jittered)
  }

  /**
   * How long to wait before the next attempt of an operation that must end by `deadline`: the
   * backoff, cut short so that one last attempt keeps LAST_TRY_MS; null when even that does not fit.
   * @param {number} attempt attempts made so far, minus one
   * @param {{ serverOverloaded?: boolean }|undefined} err the error of the last attempt
   * @param {number} deadline epoch ms
   * @returns {number|null} ms
   */
  waitBefore (attempt, err, deadline) {
    const left = deadline - Date.now()
    if (left <= LAST_TRY_MS) return null
    return Math.min(this.pause(attempt, err), left - LAST_TRY_MS)
  }

  /**
   * The timeout for one RPC of an operation that must end by `deadline`.
   * @param {number} deadline epoch ms
   * @returns {number} ms
   */
  rpcTimeout (deadline) {
    return callTimeout(this.rpcTimeoutMs, deadline)
  }

  /**
   * Whether the client was destroyed: nothing may be retried any more.
   * @returns {boolean}
   */
  get aborted () {
    return this.signal.aborted
  }

  /**
   * Waits `ms`; rejects with HBASE_CLIENT_CLOSED at once if the client is destroyed meanwhile.
   * @param {number} ms
   * @returns {Promise<void>}
   */
  async sleep (ms) {
    try {
      await sleep(ms, undefined, { signal: this.signal })
    } catch (err) {
      throw clientClosed(/** @type {Error} */ (err))
    }
  }

  /**
   * Runs `attempt` until it succeeds, fails with an error that is not retryable, or no attempt
   * fits before `deadline` any more (then HBASE_TIMEOUT, `cause` the last error).
   * @template T
   * @param {string} what names the operation in the timeout message
   * @param {number} deadline epoch ms
   * @param {() => Promise<T>} attempt
   * @returns {Promise<T>}
   */
  async retry (what, deadline, attempt) {
    for (let n = 0; ; n++) {
      try {
        return await attempt()
      } catch (err) {
        const e = /** @type {Error & { code?: string }} */ (err)
        if (this.aborted) throw e.code === 'HBASE_CLIENT_CLOSED' ? err : clientClosed(e)
        if (!(err instanceof HBaseError) || !err.retryable) throw err
        const wait = this.waitBefore(n, err, deadline)
        if (wait === null) {
          throw new HBaseError(
            'HBASE_TIMEOUT',
            `${what} did not succeed within its deadline after ${n + 1} attempt(s); last error: ${err.message}`,
            { retryable: true, cause: err }
          )
        }
        await this.sleep(wait)
      }
    }
  }
}

module.exports = { BACKOFF, LAST_TRY_MS, RetryPolicy, callTimeout }
