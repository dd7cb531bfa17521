'use strict'

const { createWal } = require('./journal/wal')

/** @typedef {import('./journal/wal').Segment} Segment */

const WARN_EVERY_MS = 5000
const RELEASE_RETRY_MS = 1000
const PAUSE_AFTER_FAILURE_MS = 1000

/**
 * Durable mode's write-ahead log (logging/hbase-sink/journal/wal.js), guarded: an append that fails (a full disk)
 * is counted and logged at most every 5 s, and the entry goes on the normal way, only not
 * crash-proof; for a second after a failure appends are not even tried (counted the same). A
 * segment is released once its entries are in HBase (done()) or in the journal
 * and the journal's write of them is on disk (afterJournal()).
 */
class WalGuard {
  /**
   * @param {object} options
   * @param {string} options.dir
   * @param {string} options.writerId
   * @param {ReturnType<typeof import('./journal').createJournal>} options.journal
   * @param {import('./ledger').Ledger} options.ledger counts the entries it could not take
   * @param {{ error: Function }} [options.logger]
   */
  constructor ({ dir, writerId, journal, ledger, logger }) {
    this.wal = createWal({ dir, writerId })
    this.journal = journal
    this.ledger = ledger
    this.logger = logger
    this.lastWarn = 0
    /** @type {Segment[]} segments of spilled entries, released once the journal is flushed */
    this.awaitingJournal = []
    this.flushing = false
    this.closed = false
    this.pausedUntil = 0 // appends skipped (counted as failures) until then, after a failure
  }

  /**
   * @param {Buffer} line the entry's record, encoded (journal/record-bytes.js)
   * @returns {Segment|null} the segment holding the entry, or null when the append failed
   */
  append (line) {
    // After a failure the log is left alone for a second: a full disk must not cost every
    // request a file created, refused and deleted on the request thread.
    if (this.pausedUntil > 0 && Date.now() < this.pausedUntil) {
      this.ledger.walFailed()
      return null
    }
    try {
      return this.wal.appendLine(line)
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      this.ledger.walFailed()
      this.ledger.error(err.code || err.message)
      const now = Date.now()
      this.pausedUntil = now + PAUSE_AFTER_FAILURE_MS
      if (this.logger && now - this.lastWarn > WARN_EVERY_MS) {
        this.lastWarn = now
        this.logger.error({ err, walFailures: this.ledger.walFailures },
          'HBase access log: write-ahead log write failed; entry kept in memory only')
      }
      return null
    }
  }

  /** @param {Segment|null} segment the entry is in HBase, or counted as shed */
  done (segment) {
    if (segment) this.wal.done(segment)
  }

  /** @param {Segment|null} segment the entry was handed to the journal: release once that is on disk */
  afterJournal (segment) {
    if (!segment) return
    this.awaitingJournal.push(segment)
    if (this.flushing) return
    this.flushing = true
    setImmediate(() => this.releaseJournaled())
  }

  async releaseJournaled () {
    while (this.awaitingJournal.length && !this.closed) {
      const batch = this.awaitingJournal
      this.awaitingJournal = []
      try {
        await this.journal.flush()
        for (const s of batch) this.wal.done(s)
      } catch {
        // The journal cannot write now (a full disk): keep the WAL records and try again.
        this.awaitingJournal = batch.concat(this.awaitingJournal)
        await new Promise((resolve) => setTimeout(resolve, RELEASE_RETRY_MS).unref())
      }
    }
    this.flushing = false
  }

  /**
   * @param {{ discard: boolean }} how discard: every entry is in HBase or in the closed journal,
   *   so the files are redundant; else they stay for a claim
   * @returns {Promise<void>}
   */
  close ({ discard }) {
    this.closed = true
    return this.wal.close({ discard })
  }

  stats () {
    return this.wal.stats()
  }
}

module.exports = { WalGuard }
