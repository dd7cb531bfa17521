'use strict'

const { clientClosed } = require('./errors')

/**
 * The client's lifecycle: counts the operations in flight, refuses new ones once closed, and
 * aborts (an AbortSignal the retry policy listens to) when destroyed.
 *
 * The rule: an operation that started before `drain()` runs to completion under its own
 * deadline; one that starts after it is refused with HBASE_CLIENT_CLOSED; after `abort()` every
 * failure of an operation still in flight reads HBASE_CLIENT_CLOSED.
 */
class OperationGate {
  constructor () {
    /** True once drain() or abort() was called. */
    this.closed = false
    this._active = 0
    /** @type {(() => void)|null} resolves drain() */
    this._idle = null
    this._abort = new AbortController()
    /** Aborted by abort(). */
    this.signal = this._abort.signal
  }

  /**
   * Operations in flight.
   * @returns {number}
   */
  get active () {
    return this._active
  }

  /**
   * Runs one operation, counted as in flight until its promise settles. Rejects with
   * HBASE_CLIENT_CLOSED, without running it, once the gate is closed.
   * @template T
   * @param {() => Promise<T>} operation
   * @returns {Promise<T>}
   */
  async run (operation) {
    this.enter()
    try {
      return await operation()
    } catch (err) {
      throw this.failure(err)
    } finally {
      this.leave()
    }
  }

  /**
   * A generator's whole run as one operation (a scan: in flight from its first next() until its
   * loop ends), its failures read as run()'s are.
   * @template T
   * @param {AsyncGenerator<T, void, void>} source
   * @returns {AsyncGenerator<T, void, void>}
   */
  async * iterate (source) {
    this.enter()
    try {
      yield * source
    } catch (err) {
      throw this.failure(err)
    } finally {
      this.leave()
    }
  }

  /**
   * Counts one more operation in flight (for those that are not one promise, like a scan);
   * throws HBASE_CLIENT_CLOSED once the gate is closed. Pair with leave().
   * @returns {void}
   */
  enter () {
    if (this.closed) throw clientClosed()
    this._active++
  }

  /**
   * Counts one operation less in flight.
   * @returns {void}
   */
  leave () {
    if (--this._active === 0 && this._idle) this._idle()
  }

  /**
   * The error an operation in flight should end with: its own, or HBASE_CLIENT_CLOSED after abort().
   * @param {any} err
   * @returns {any}
   */
  failure (err) {
    return this.signal.aborted && !(err && err.code === 'HBASE_CLIENT_CLOSED') ? clientClosed(err) : err
  }

  /**
   * Closes the gate; resolves once no operation is in flight, or at abort().
   * @returns {Promise<void>}
   */
  drain () {
    this.closed = true
    if (this._active === 0 || this.signal.aborted) return Promise.resolve()
    return new Promise((resolve) => { this._idle = () => resolve(undefined) })
  }

  /**
   * Closes the gate and aborts the signal; a pending drain() resolves. Idempotent.
   * @returns {void}
   */
  abort () {
    this.closed = true
    if (this.signal.aborted) return
    this._abort.abort()
    if (this._idle) this._idle()
  }
}

module.exports = { OperationGate }
