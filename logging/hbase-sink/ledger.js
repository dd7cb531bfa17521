'use strict'

/**
 * Why entries were shed: the overload policy, or a journal that could not take them (its
 * budget on disk spent, the disk full or failing, or the disk slower than the entries come).
 */
const SHED_REASONS = Object.freeze(['overload', 'journal_full', 'disk_full', 'write_error', 'write_backlog'])

/**
 * The HBase sink's accounting: every entry the sink took is in exactly one place, and each move
 * from one place to another is one named transition here (the batcher, the replayer and the sink
 * call them; the numbers are private, so nothing else can write them). At every instant:
 *
 *   accepted + claimed == written + pending + journaled + shed + corrupt + lostInMemory
 *
 * accepted: taken by write(); claimed: adopted from the files of writers that are gone (a dead
 * worker's journal or write-ahead log, found at a claim or when a file turns out longer than
 * counted); written: acknowledged by HBase; pending: in memory on the live path; journaled:
 * handed to the spill journal and not yet replayed, in memory waiting for its disk or on disk
 * (stats() splits it); shed: dropped and counted, by reason in shedBy; corrupt: lines of damaged
 * journal files that could not be replayed; lostInMemory: held in memory only when a stop could
 * write them nowhere (0 unless the journal's disk failed at the stop, and the write-ahead log too).
 *
 * With `strict`, every transition checks the balance and throws when it breaks (the property
 * test runs so); otherwise balanced() says it.
 */
class Ledger {
  #strict
  // The places an entry is in, and the flows between them: written only by the methods below.
  #n = {
    accepted: 0,
    claimed: 0,
    written: 0,
    pending: 0,
    journaled: 0,
    shed: 0,
    corrupt: 0,
    lostInMemory: 0, // held in memory only when a stop could not write them anywhere: lost with the process
    // Flows, for metrics: they add detail, not places.
    spilled: 0, // live path → journal
    replayed: 0, // journal → HBase
    claimedFromWal: 0,
    failed: 0, // live writes HBase refused for good (then spilled)
    // Of the shed: entries a write had been sent for whose outcome is unknown (timed out,
    // connection lost): HBase may have applied it, so each may be a row after all.
    shedUnconfirmed: 0,
    // Of the shed: entries the journal refused whose write-ahead-log record is kept (the journal
    // of last resort): the next sink to start on this state dir replays them.
    shedKeptInWal: 0,
    // Entries never taken, and what failed around them.
    rejectedAfterClose: 0,
    invalid: 0,
    walFailures: 0, // entries the write-ahead log could not take: not durable
    batches: 0
  }

  /** @type {Record<string, number>} shed, by reason (SHED_REASONS) */
  #shedBy = Object.fromEntries(SHED_REASONS.map((r) => [r, 0]))
  /** @type {string|null} */
  #lastError = null

  /** @param {{ strict?: boolean }} [options] */
  constructor ({ strict = false } = {}) {
    this.#strict = strict
  }

  get accepted () { return this.#n.accepted }
  get claimed () { return this.#n.claimed }
  get written () { return this.#n.written }
  get pending () { return this.#n.pending }
  get journaled () { return this.#n.journaled }
  get shed () { return this.#n.shed }
  get corrupt () { return this.#n.corrupt }
  get lostInMemory () { return this.#n.lostInMemory }
  get spilled () { return this.#n.spilled }
  get replayed () { return this.#n.replayed }
  get claimedFromWal () { return this.#n.claimedFromWal }
  get failed () { return this.#n.failed }
  get shedUnconfirmed () { return this.#n.shedUnconfirmed }
  get shedKeptInWal () { return this.#n.shedKeptInWal }
  get rejectedAfterClose () { return this.#n.rejectedAfterClose }
  get invalid () { return this.#n.invalid }
  get walFailures () { return this.#n.walFailures }
  get batches () { return this.#n.batches }
  /** @returns {Readonly<Record<string, number>>} */
  get shedBy () { return Object.freeze({ ...this.#shedBy }) }
  get lastError () { return this.#lastError }

  /** One entry taken by write(); it is pending until it is written, journaled or shed. */
  accept () {
    this.#n.accepted++
    this.#n.pending++
    this.check()
  }

  /** @param {number} n live entries HBase acknowledged */
  writtenLive (n) {
    this.#n.pending -= n
    this.#n.written += n
    this.check()
  }

  /** One live entry handed to the journal (HBase down, refused it, or the queue is full). */
  spill () {
    this.#n.pending--
    this.#n.journaled++
    this.#n.spilled++
    this.check()
  }

  /**
   * One live entry dropped.
   * @param {string} reason one of SHED_REASONS
   * @param {boolean} [unconfirmed] a write of it may have reached HBase
   * @param {boolean} [keptInWal] its write-ahead-log record stays, for a replay after a restart
   */
  shedOne (reason, unconfirmed = false, keptInWal = false) {
    this.#n.pending--
    this.#n.shed++
    this.#shedBy[reason]++
    if (unconfirmed) this.#n.shedUnconfirmed++
    if (keptInWal) this.#n.shedKeptInWal++
    this.check()
  }

  /** @param {number} n journaled entries HBase acknowledged */
  replayedOk (n) {
    this.#n.journaled -= n
    this.#n.written += n
    this.#n.replayed += n
    this.check()
  }

  /**
   * Entries adopted from the files of a writer that is gone.
   * @param {number} n
   * @param {boolean} [fromWal] the files were a write-ahead log
   */
  claim (n, fromWal = false) {
    this.#n.claimed += n
    this.#n.journaled += n
    if (fromWal) this.#n.claimedFromWal += n
    this.check()
  }

  /** @param {number} n journaled lines that cannot be replayed (damaged, unreadable, vanished) */
  damaged (n) {
    this.#n.journaled -= n
    this.#n.corrupt += n
    this.check()
  }

  /**
   * @param {number} n journaled entries in memory that a stop could not write to a file, and that
   *   no write-ahead-log file holds: they die with the process
   */
  lostAtClose (n) {
    this.#n.journaled -= n
    this.#n.lostInMemory += n
    this.check()
  }

  /** One live write HBase refused for good (the entry is then spilled). */
  refused () {
    this.#n.failed++
  }

  /** One multi-put sent (live or replay). */
  batchSent () {
    this.#n.batches++
  }

  /** One write() after close(): not taken. */
  rejectAfterClose () {
    this.#n.rejectedAfterClose++
  }

  /** One write() of an entry that cannot be serialized (a BigInt, a cycle): not taken. */
  rejectInvalid () {
    this.#n.invalid++
  }

  /** @param {number} [n] entries the write-ahead log could not take: answered, but not durable */
  walFailed (n = 1) {
    this.#n.walFailures += n
  }

  /** @param {string|null|undefined} code why the last write or read failed */
  error (code) {
    this.#lastError = code || 'ERROR'
  }

  /** @returns {number} places minus sources: 0 when every entry is accounted for */
  imbalance () {
    const n = this.#n
    return n.written + n.pending + n.journaled + n.shed + n.corrupt + n.lostInMemory - n.accepted - n.claimed
  }

  /** @returns {boolean} */
  balanced () {
    return this.imbalance() === 0 && this.#n.pending >= 0 && this.#n.journaled >= 0
  }

  check () {
    if (this.#strict && !this.balanced()) {
      throw new Error(`ledger out of balance by ${this.imbalance()}: ${JSON.stringify(this.snapshot())}`)
    }
  }

  /** The numbers, plain (stats()): the counters, lastError and shedBy (a type tsc infers). */
  snapshot () {
    return { ...this.#n, lastError: this.#lastError, shedBy: { ...this.#shedBy } }
  }
}

module.exports = { Ledger, SHED_REASONS }
