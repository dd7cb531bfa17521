'use strict'

/**
 * "Resolve once everything accepted before now is written or journaled", without a promise per
 * entry: entries are counted per flush generation; settled() closes the current generation and
 * resolves when it and every older one have no unsettled entry left.
 */
class SettleBarrier {
  constructor () {
    this.gen = 0 // generation of entries admitted now
    this.genCount = 0 // its unsettled entries
    /** @type {Map<number, number>} earlier generation → unsettled entries */
    this.older = new Map()
    /** @type {Array<{ gen: number, resolve: () => void }>} */
    this.waiters = []
  }

  /**
   * Counts one more unsettled entry.
   * @returns {number} its generation, to hand back to settle()
   */
  admit () {
    this.genCount++
    return this.gen
  }

  /**
   * The entry is written or journaled.
   * @param {number} gen from admit()
   */
  settle (gen) {
    if (gen === this.gen) {
      this.genCount--
    } else {
      const left = /** @type {number} */ (this.older.get(gen)) - 1
      if (left === 0) this.older.delete(gen)
      else this.older.set(gen, left)
    }
    if (this.waiters.length) this.release()
  }

  /**
   * Resolves when every entry admitted before this call is settled.
   * @returns {Promise<void>}
   */
  settled () {
    if (this.genCount === 0 && this.older.size === 0) return Promise.resolve()
    if (this.genCount > 0) this.older.set(this.gen, this.genCount)
    const target = this.gen
    this.gen++
    this.genCount = 0
    return new Promise((resolve) => {
      this.waiters.push({ gen: target, resolve })
      this.release()
    })
  }

  release () {
    let oldest = Infinity
    for (const g of this.older.keys()) if (g < oldest) oldest = g
    if (this.genCount > 0 && this.gen < oldest) oldest = this.gen
    const still = []
    for (const w of this.waiters) (w.gen < oldest ? w.resolve() : still.push(w))
    this.waiters = still
  }
}

module.exports = { SettleBarrier }
