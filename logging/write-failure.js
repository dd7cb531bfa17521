'use strict'

const LOG_EVERY_MS = 30000

/**
 * Whether the local disk refuses a sink's writes (the journal's or the file log's), since when,
 * and the log lines that go with it: one when writes start failing, one at most every 30 s
 * while they keep failing (a full disk must not flood the app log), one when a write works
 * again.
 *
 * @param {object} options
 * @param {string} options.what how the log names the writer ("access-log journal")
 * @param {(level: string, fields: object, message: string) => void} options.log
 * @param {() => object} [options.fields] figures to add to each line (what waits, what was shed)
 */
function createWriteFailure ({ what, log, fields = () => ({}) }) {
  /** @type {{ code: string, since: number }|null} */
  let failure = null
  let lastLog = 0

  return {
    /** @param {any} err a write failed */
    failed (err) {
      const now = Date.now()
      if (!failure) {
        failure = { code: err.code || err.message, since: now }
        lastLog = now
        log('error', { err, ...fields() }, `${what} cannot be written; lines wait in memory and are retried`)
      } else if (now - lastLog >= LOG_EVERY_MS) {
        lastLog = now
        log('error', { err, ...fields(), failingMs: now - failure.since }, `${what} still cannot be written`)
      }
    },

    /** A write went through. */
    worked () {
      if (!failure) return
      log('info', { ...fields(), failedMs: Date.now() - failure.since }, `${what} writable again`)
      failure = null
    },

    /** @returns {{ code: string, since: number }|null} the failure, while it lasts */
    current () {
      return failure
    }
  }
}

module.exports = { createWriteFailure }
