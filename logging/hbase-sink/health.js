'use strict'

/** @typedef {import('./batcher').PutFailure} PutFailure */

/**
 * Whether HBase answers this sink, as its writes found: the one owner of up/down. Down (spill
 * mode only) when a write of live entries or of the replay got nothing through for a reason
 * that passes (`retryable`): live entries then go to the journal. Up again when a replay write
 * goes through. Writers report here (markDown, markUp); the batcher, the replayer and the sink
 * read `down` and hear each change.
 */
class Health {
  #down = false
  /** @type {Array<{ down: (err: PutFailure) => void, up: () => void }>} */
  #listeners = []

  /** @returns {boolean} whether HBase is thought down */
  get down () {
    return this.#down
  }

  /** @returns {'up'|'down'} as stats() name it */
  get state () {
    return this.#down ? 'down' : 'up'
  }

  /**
   * Hears each change, in the order the listeners came.
   * @param {{ down: (err: PutFailure) => void, up: () => void }} listener
   */
  listen (listener) {
    this.#listeners.push(listener)
  }

  /** @param {PutFailure} err why: the first error of a write that got nothing through */
  markDown (err) {
    if (this.#down) return
    this.#down = true
    for (const l of this.#listeners) l.down(err)
  }

  /** A write went through. */
  markUp () {
    if (!this.#down) return
    this.#down = false
    for (const l of this.#listeners) l.up()
  }
}

module.exports = { Health }
