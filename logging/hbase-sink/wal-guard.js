'use strict'

const { createWal } = require('./journal/wal')

/** @typedef {import('./journal/wal').Segment} Segment */

const WARN_EVERY_MS = 5000
const RELEASE_RETRY_MS = 1000
const PAUSE_AFTER_FAILURE_MS = 1000

/**
 * The write-ahead log of a durable sink (journal/wal.js), guarded: a write that fails (a full
 * disk) is counted per entry and logged at most every 5 s, and its entries go on the normal
 * way, only not crash-proof; for a second after a failure appends are not even tried (counted
 * the same), and failing() names the error until a write works again (/readyz shows it). A
 * segment is released once its entries are in HBase (done()) or in the journal and the
 * journal's write of them is on disk (afterJournal()), and never when the journal refused one of
 * its entries (keep()).
 *
 * Entries are staged (stage()) and written together by commit(): the sink enlists the guard in
 * the process's group commit (logging/group-commit.js), which commits once per event-loop turn
 * before the turn's answers go out; without one, the sink commits each entry as it takes it.
 */
class WalGuard {
  /**
   * @param {object} options
   * @param {string} options.dir
   * @param {string} options.writerId
   * @param {ReturnType<typeof import('./journal').createJournal>} options.journal
   * @param {import('./ledger').Ledger} options.ledger counts the entries it could not take
   * @param {{ error: Function }} [options.logger]
   * @param {boolean} [options.sync] fdatasync each commit (durability 'host')
   * @param {typeof import('node:fs')|null} [options.fs] the file system (tests inject a full disk)
   * @param {number} [options.keepBytes] at most this many bytes of files kept for entries the
   *   journal refused (keep()); 0: no bound
   */
  constructor ({ dir, writerId, journal, ledger, logger, sync = false, fs = null, keepBytes = 0 }) {
    this.wal = createWal({ dir, writerId, sync, ...(fs ? { fs } : {}) })
    this.keepBytes = keepBytes
    /** @type {Set<Segment>} segments kept for a replay after a restart: never released */
    this.kept = new Set()
    this.keptBytes = 0
    this.journal = journal
    this.ledger = ledger
    this.logger = logger
    this.lastWarn = 0
    /** @type {Segment[]} segments of spilled entries, released once the journal is flushed */
    this.awaitingJournal = []
    this.flushing = false
    this.closed = false
    this.pausedUntil = 0 // appends skipped (counted as failures) until then, after a failure
    /** @type {string|null} the code of the last failed write, until one works again */
    this.failingCode = null
  }

  /**
   * Takes one entry for the next commit().
   * @param {Buffer} line the entry's record, encoded (journal/record-bytes.js)
   * @returns {Segment|null} the segment that will hold the entry, or null: the log is paused
   */
  stage (line) {
    // After a failure the log is left alone for a second: a full disk must not cost every
    // group a file created, refused and deleted on the request thread.
    if (this.pausedUntil > 0 && Date.now() < this.pausedUntil) {
      this.ledger.walFailed()
      return null
    }
    try {
      return this.wal.stage(line)
    } catch (err) {
      this.failed(/** @type {NodeJS.ErrnoException} */ (err), 1)
      return null
    }
  }

  /**
   * Writes the staged entries (the group commit's Committer). Never throws.
   * @returns {void}
   */
  commit () {
    const failed = this.wal.commit()
    if (failed) this.failed(failed.error, failed.entries)
    else if (this.failingCode !== null && Date.now() >= this.pausedUntil) this.failingCode = null
  }

  /**
   * @param {NodeJS.ErrnoException} err
   * @param {number} entries answered without their record
   */
  failed (err, entries) {
    this.ledger.walFailed(entries)
    this.ledger.error(err.code || err.message)
    this.failingCode = err.code || 'EIO'
    const now = Date.now()
    this.pausedUntil = now + PAUSE_AFTER_FAILURE_MS
    if (this.logger && now - this.lastWarn > WARN_EVERY_MS) {
      this.lastWarn = now
      this.logger.error({ err, walFailures: this.ledger.walFailures },
        'HBase access log: write-ahead log write failed; entries kept in memory only')
    }
  }

  /** @returns {string|null} the error code while the log refuses writes */
  failing () {
    return this.failingCode
  }

  /** @param {Segment|null} segment the entry is in HBase, or counted as shed */
  done (segment) {
    if (segment) this.wal.done(segment)
  }

  /**
   * The journal refused the entry: its record stays in the write-ahead log, the journal of last
   * resort, for the next sink to start on this state dir (an orphan claim replays the file;
   * the records of it that are in HBase already overwrite their rows).
   * @param {Segment|null} segment
   * @returns {boolean} kept; false: there is no record (the log failed), or the kept files
   *   would pass keepBytes
   */
  keep (segment) {
    if (!segment) return false
    if (this.kept.has(segment)) return true
    const bytes = segment.bytes + segment.stagedBytes
    if (this.keepBytes > 0 && this.keptBytes + bytes > this.keepBytes) return false
    this.kept.add(segment)
    this.keptBytes += bytes
    this.wal.keep(segment)
    return true
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
    return { ...this.wal.stats(), walKeptFiles: this.kept.size }
  }
}

module.exports = { WalGuard }
