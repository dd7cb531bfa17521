'use strict'

/**
 * A sink with bytes to make durable before the answers of its entries go out: its write-ahead
 * log, or a file sink's lines. `commit()` writes everything it took since its last commit;
 * it may return a promise (a sync to the device runs in libuv's pool) and the answers then wait
 * for it. A commit that fails handles its own failure (counts it, keeps the entries in memory):
 * the answers go out all the same, only not durable, and the metrics say so.
 * @typedef {object} Committer
 * @property {() => void|Promise<void>} commit
 */

/**
 * Group commit: the answers of one event-loop turn wait for one write of their entries.
 *
 * A durable sink that takes an entry enlists itself (`enlist`) and the view holds its answer
 * (`hold`) instead of writing it. At the end of the turn (one `setImmediate`: a check-phase
 * callback, never a timer) every enlisted sink commits once, then every held answer is
 * released, in the order held. A turn that serves a hundred requests makes one write per sink
 * instead of a hundred, and no answer waits longer than the rest of its turn and the write.
 *
 * One instance per process, shared by its sinks and its views (api/index.js builds it).
 */
class GroupCommit {
  /**
   * @param {object} [options]
   * @param {(run: () => void) => void} [options.schedule] runs `run` at the end of this turn
   *   (setImmediate; tests step it by hand)
   * @param {(err: unknown) => void} [options.onError] a commit threw or rejected (the committer
   *   has counted it already; this only reports), or an answer threw
   */
  constructor ({ schedule = setImmediate, onError = () => {} } = {}) {
    this.schedule = schedule
    this.onError = onError
    /** @type {Set<Committer>} */
    this.committers = new Set()
    /** @type {Array<() => void>} */
    this.held = []
    this.scheduled = false
    this.groups = 0
    this.answersHeld = 0
  }

  /** Whether a group is open this turn: an answer given now should be held. */
  get open () {
    return this.scheduled
  }

  /**
   * A sink took an entry that must be durable before its answer: it commits at the end of the turn.
   * @param {Committer} committer
   */
  enlist (committer) {
    this.committers.add(committer)
    this.arm()
  }

  /**
   * An answer to write once this turn's group is committed.
   * @param {() => void} release writes the answer (one that throws is reported, the rest go on)
   */
  hold (release) {
    this.held.push(release)
    this.answersHeld++
    this.arm()
  }

  /** @private */
  arm () {
    if (this.scheduled) return
    this.scheduled = true
    this.schedule(() => this.run())
  }

  /**
   * Commits this turn's group and releases its answers (the scheduled callback; also called by
   * a close that must not leave answers held).
   * @returns {void|Promise<void>} a promise when a commit was asynchronous
   */
  run () {
    if (!this.scheduled) return
    this.scheduled = false
    const committers = this.committers
    const held = this.held
    this.committers = new Set()
    this.held = []
    this.groups++
    /** @type {Promise<void>[]} */
    const waits = []
    for (const committer of committers) {
      try {
        const result = committer.commit()
        if (result) waits.push(result.catch(this.onError))
      } catch (err) {
        this.onError(err)
      }
    }
    if (waits.length === 0) return this.release(held)
    return Promise.all(waits).then(() => this.release(held))
  }

  /**
   * @private
   * @param {Array<() => void>} held
   */
  release (held) {
    for (const answer of held) {
      try {
        answer()
      } catch (err) {
        this.onError(err) // one answer that cannot be written must not keep the rest of its group
      }
    }
  }

  /** @returns {{ groups: number, answersHeld: number }} groups committed, answers held for one */
  stats () {
    return { groups: this.groups, answersHeld: this.answersHeld }
  }
}

module.exports = { GroupCommit }
