'use strict'

/**
 * Why entries were shed: the overload policy, or a journal that could not take them (its
 * budget on disk spent, the disk full or failing, or the disk slower than the entries come).
 */
const SHED_REASONS = Object.freeze(['overload', 'journal_full', 'disk_full', 'write_error', 'write_backlog'])

/**
 * The HBase sink's accounting: every entry the sink took is in exactly one place, and each move
 * from one place to another is one named transition here (the batcher, the replayer and the sink
 * call them; nothing else writes these numbers). At every instant:
 *
 *   accepted + claimed == written + pending + journaled + shed + corrupt
 *
 * accepted: taken by write(); claimed: adopted from the files of writers that are gone (a dead
 * worker's journal or write-ahead log, found at a claim or when a file turns out longer than
 * counted); written: acknowledged by HBase; pending: in memory on the live path; journaled:
 * handed to the spill journal and not yet replayed, in memory waiting for its disk or on disk
 * (stats() splits it); shed: dropped and counted, by reason in shedBy; corrupt: lines of damaged
 * journal files that could not be replayed.
 *
 * With `strict`, every transition checks the balance and throws when it breaks (the property
 * test runs so); otherwise balanced() says it.
 */
class Ledger {
  /** @param {{ strict?: boolean }} [options] */
  constructor ({ strict = false } = {}) {
    this.strict = strict
    this.accepted = 0
    this.claimed = 0
    this.written = 0
    this.pending = 0
    this.journaled = 0
    this.shed = 0
    this.corrupt = 0
    /** @type {Record<string, number>} shed, by reason (SHED_REASONS) */
    this.shedBy = Object.fromEntries(SHED_REASONS.map((r) => [r, 0]))
    // Flows, for metrics: they add detail, not places.
    this.spilled = 0 // live path → journal
    this.replayed = 0 // journal → HBase
    this.claimedFromWal = 0
    this.failed = 0 // live writes HBase refused for good (then spilled)
    // Of the shed: entries a write had been sent for whose outcome is unknown (timed out, connection
    // lost): HBase may have applied it, so each may be a row after all.
    this.shedUnconfirmed = 0
    // Entries never taken, and what failed around them.
    this.rejectedAfterClose = 0
    this.invalid = 0
    this.walFailures = 0 // entries the write-ahead log could not take: not durable
    this.batches = 0
    /** @type {string|null} */
    this.lastError = null
  }

  /** One entry taken by write(); it is pending until it is written, journaled or shed. */
  accept () {
    this.accepted++
    this.pending++
    this.check()
  }

  /** @param {number} n live entries HBase acknowledged */
  writtenLive (n) {
    this.pending -= n
    this.written += n
    this.check()
  }

  /** One live entry handed to the journal (HBase down, refused it, or the queue is full). */
  spill () {
    this.pending--
    this.journaled++
    this.spilled++
    this.check()
  }

  /**
   * One live entry dropped.
   * @param {string} reason one of SHED_REASONS
   * @param {boolean} [unconfirmed] a write of it may have reached HBase
   */
  shedOne (reason, unconfirmed = false) {
    this.pending--
    this.shed++
    this.shedBy[reason]++
    if (unconfirmed) this.shedUnconfirmed++
    this.check()
  }

  /** @param {number} n journaled entries HBase acknowledged */
  replayedOk (n) {
    this.journaled -= n
    this.written += n
    this.replayed += n
    this.check()
  }

  /**
   * Entries adopted from the files of a writer that is gone.
   * @param {number} n
   * @param {boolean} [fromWal] the files were a write-ahead log
   */
  claim (n, fromWal = false) {
    this.claimed += n
    this.journaled += n
    if (fromWal) this.claimedFromWal += n
    this.check()
  }

  /** @param {number} n journaled lines that cannot be replayed (damaged, unreadable, vanished) */
  damaged (n) {
    this.journaled -= n
    this.corrupt += n
    this.check()
  }

  /** One live write HBase refused for good (the entry is then spilled). */
  refused () {
    this.failed++
  }

  /** @param {string|null|undefined} code why the last write or read failed */
  error (code) {
    this.lastError = code || 'ERROR'
  }

  /** @returns {number} places minus sources: 0 when every entry is accounted for */
  imbalance () {
    return this.written + this.pending + this.journaled + this.shed + this.corrupt - this.accepted - this.claimed
  }

  /** @returns {boolean} */
  balanced () {
    return this.imbalance() === 0 && this.pending >= 0 && this.journaled >= 0
  }

  check () {
    if (this.strict && !this.balanced()) {
      throw new Error(`ledger out of balance by ${this.imbalance()}: ${JSON.stringify(this.snapshot())}`)
    }
  }

  /** @returns {object} the numbers, plain (stats()) */
  snapshot () {
    const { strict, shedBy, ...numbers } = this
    return { ...numbers, shedBy: { ...shedBy } }
  }
}

module.exports = { Ledger, SHED_REASONS }
