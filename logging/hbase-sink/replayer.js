'use strict'

const { TRANSIENT_CODES, formatRecord, parseRecord, isWholeValue } = require('./journal/files')
const { putRecords } = require('./batcher')
const { OrphanClaims } = require('./orphan-claims')
const { FileReads } = require('./file-reads')

/** @typedef {import('./journal/journal-file').JournalFile} JournalFile */
/** @typedef {import('./file-reads').ReplayProgress} ReplayProgress */

/**
 * Writes journal files back into HBase in the background and deletes each file once all its
 * entries were acknowledged. After an outage the first write is a small probe; failures back
 * off up to `replayMaxBackoffMs`, and the wait is cut short when a live write shows HBase answers
 * again (healthy()). Live entries come first: a pass stops while the live queue is more than
 * half full. Orphan journals (and write-ahead logs) of writers that no longer run are claimed at
 * start, every `claimIntervalMs` and by drain(): that is how a crashed worker's entries survive.
 *
 * At close the sink drains (drain(): every file, claimed ones included, until none is left or
 * the time is up), then stops (stop()): a pass in flight ends at its next step, and the file it
 * reads is closed only after that step, so a stop never looks like damage to the file.
 */
class Replayer {
  /**
   * @param {object} deps
   * @param {Readonly<import('./options').SinkOptions>} deps.opts
   * @param {ReturnType<typeof import('./journal').createJournal>} deps.journal
   * @param {import('./ledger').Ledger} deps.ledger
   * @param {import('./batcher').Batcher} deps.batcher the live load
   * @param {import('./health').Health} deps.health whether HBase answers (the replay reports here)
   */
  constructor ({ opts, journal, ledger, batcher, health }) {
    this.opts = opts
    this.journal = journal
    this.ledger = ledger
    this.batcher = batcher
    this.health = health
    /** @type {number} */
    this.backoff = opts.replayBaseMs
    this.timer = null
    this.timerDelay = 0
    /** @type {Promise<boolean>|null} the pass running now */
    this.running = null
    this.reads = new FileReads({ opts, journal, ledger })
    this.halted = false // no pass is scheduled any more (closing); one run by drain() still goes
    this.stopped = false // a pass in flight ends at its next step
    this.claims = new OrphanClaims({
      journal, ledger, intervalMs: opts.claimIntervalMs, logger: opts.logger, claimed: () => this.schedule(0)
    })
    this.started = this.claims.claim().catch((err) => {
      ledger.error(err.code || err.message)
      if (opts.logger) opts.logger.error({ err }, 'HBase access log: could not claim orphan journals')
    })
  }

  /** HBase answers again: the next outage starts from the base backoff. */
  resetBackoff () {
    this.backoff = this.opts.replayBaseMs
  }

  /**
   * A live write went through: a replay waiting out a long backoff goes now instead.
   */
  healthy () {
    this.resetBackoff()
    if (this.timer && this.timerDelay > this.opts.flushIntervalMs) {
      this.cancelTimer()
      this.schedule(this.opts.flushIntervalMs)
    }
  }

  /** @param {number} delay ms */
  schedule (delay) {
    if (this.timer || this.running || this.halted) return
    this.timerDelay = delay
    this.timer = setTimeout(() => {
      this.timer = null
      this.run()
    }, delay)
    this.timer.unref()
  }

  cancelTimer () {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /**
   * Runs a pass now rather than when scheduled (after the first orphan claim).
   * @returns {Promise<boolean>} true when the journal is empty
   */
  async runNow () {
    await this.started
    this.cancelTimer()
    return this.run()
  }

  /** @returns {Promise<boolean>} true when the journal is empty */
  run () {
    if (this.running) return this.running
    /** @param {boolean} done */
    const again = (done) => {
      this.running = null
      if (done) {
        this.backoff = this.opts.replayBaseMs
        if (this.ledger.journaled > 0) this.schedule(this.opts.flushIntervalMs)
      } else {
        this.backoff = Math.min(this.opts.replayMaxBackoffMs, this.backoff * 2)
        this.schedule(this.backoff)
      }
      return done
    }
    this.running = this.pass().then(again, (err) => {
      this.ledger.error(err.code || err.message)
      if (this.opts.logger) this.opts.logger.error({ err }, 'HBase access log: journal replay failed')
      return again(false)
    })
    return this.running
  }

  /** No more scheduled passes or claims (closing); drain() may still run passes. */
  halt () {
    this.halted = true
    this.claims.stop()
    this.cancelTimer()
  }

  /**
   * Replays every journal file, those of writers that died meanwhile included (claimed first),
   * pass after pass, until none is left, HBase stops answering, or `deadline`. A pass that did
   * not finish is followed by another after a short wait while HBase answers and time is left.
   * @param {number} deadline epoch ms
   * @returns {Promise<boolean>} true when the journal is empty
   */
  async drain (deadline) {
    this.halt()
    await this.started
    await this.claims.claim().catch((err) => this.ledger.error(err.code || err.message))
    for (;;) {
      if (this.stopped) return false
      if (await this.run()) return true
      const wait = Math.min(this.opts.replayBaseMs, this.opts.flushIntervalMs)
      if (this.health.down || Date.now() + wait >= deadline) return false
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }

  /**
   * Stops for good: a pass in flight ends at its next step; once it has, the file it was
   * reading is closed (never under a read, which would make a healthy file look damaged).
   * @returns {Promise<void>} resolves when no pass runs and no file is open
   */
  async stop () {
    this.halt()
    this.stopped = true
    if (this.running) await this.running
    await this.reads.closeOpen()
  }

  /** Replays journal files until none is left (true) or a write fails (false). */
  async pass () {
    await this.started
    const { journal, batcher, opts } = this
    for (;;) {
      if (this.stopped) return false
      if (!this.health.down && batcher.pending > opts.maxQueue / 2) return false
      let file = journal.nextSealed()
      if (!file) {
        if (journal.unsealedLines() === 0) return true
        // The disk refuses the journal's writes: what waits in memory goes to HBase directly.
        if (journal.failing()) {
          if (!(await this.replayBuffered())) return false
          continue
        }
        await journal.seal()
        file = journal.nextSealed()
        if (!file) return true
      }
      if (!(await this.replayFile(file))) return false
    }
  }

  /** Entries per write: a small probe while HBase is thought down. */
  chunkSize () {
    return this.health.down ? this.opts.probeSize : this.opts.batchSize
  }

  /**
   * Writes records to HBase and counts what was acknowledged as written and replayed.
   * @param {Array<{ key: string, value: string }>} records
   * @returns {Promise<Array<{ key: string, value: string }>>} the ones that failed (then HBase
   *   is marked down if none got through and the error says it is)
   */
  async write (records) {
    const { batcher, health, ledger, opts } = this
    const results = await putRecords(opts, records, batcher.writeAhead)
    ledger.batchSent()
    const failures = records.filter((_, i) => results[i])
    const acked = records.length - failures.length
    ledger.replayedOk(acked)
    if (acked > 0) health.markUp()
    if (failures.length) {
      const firstError = /** @type {import('./batcher').PutFailure} */ (results.find(Boolean)) // failures.length > 0
      ledger.error(firstError.code)
      if (acked === 0 && firstError.retryable && opts.overload === 'spill') health.markDown(firstError)
    }
    return failures
  }

  /**
   * Sends the lines waiting in memory for the journal's disk straight to HBase, while the disk
   * refuses them.
   * @returns {Promise<boolean>} false when a write failed or the replayer stopped
   */
  async replayBuffered () {
    const { journal } = this
    while (!this.stopped && journal.failing()) {
      const lines = journal.lend(this.chunkSize())
      // All that waits is in a write the journal is retrying now: try again after a backoff.
      if (lines.length === 0) return false
      // Lines this process wrote itself: whole records, no need to check them.
      const failures = await this.write(lines.map((line) =>
        /** @type {{ key: string, value: string }} */ (parseRecord(line))))
      journal.settleLent(lines.length - failures.length)
      if (failures.length) {
        journal.giveBack(failures.map((r) => formatRecord(r.key, r.value)))
        return false
      }
    }
    return !this.stopped
  }

  /**
   * Replays one sealed file, a batch at a time. Its bytes are read a block at a time into one
   * buffer (journal/reader.js) and parsed a batch ahead of each write, so a batch's records die
   * young and no file-sized buffer or string is ever made: reading 16 MiB files whole grew a
   * replaying worker's RSS by ~100 MiB for good. A damaged file (lines that are not whole
   * records) is quarantined once its whole records are written; a file that cannot be read is
   * quarantined at once, its unread lines counted. Either way the replay goes on with the next
   * file.
   * @param {JournalFile} file a sealed journal file (journal.nextSealed())
   * @returns {Promise<boolean>} false when a write failed
   */
  async replayFile (file) {
    const { journal } = this
    if (!file.replay?.reader && !(await this.reads.open(file))) return true
    const progress = /** @type {ReplayProgress} */ (file.replay)
    for (;;) {
      if (this.stopped) return false
      let chunk
      try {
        chunk = await this.reads.next(progress, this.chunkSize())
      } catch (caught) {
        const err = /** @type {NodeJS.ErrnoException} */ (caught)
        if (TRANSIENT_CODES.has(err.code)) throw err // the reader stays where it was: tried again
        await this.reads.unreadable(file, err)
        return true
      }
      if (this.stopped) {
        progress.retry = chunk.concat(progress.retry) // read, not written: first in line if it goes on
        return false
      }
      if (chunk.length === 0) break
      const whole = chunk.filter((r) => isWholeValue(r.value))
      this.reads.damaged(progress, chunk.length - whole.length)
      if (whole.length === 0) continue
      const failures = await this.write(whole)
      if (failures.length) {
        // first in line when the replay is tried again, after a backoff
        progress.retry = failures.concat(progress.retry)
        return false
      }
    }
    this.reads.settleLines(file)
    await this.reads.close(file)
    if (progress.damaged) {
      await journal.quarantine(file, 'lines that are not whole records skipped')
    } else {
      await journal.remove(file)
    }
    return true
  }
}

module.exports = { Replayer }
