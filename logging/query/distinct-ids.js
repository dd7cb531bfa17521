'use strict'

const { ERRORS } = require('../../lib/errors')

/**
 * The distinct ids of a count with `unique` (how many visitors, not views), by group: exact, in
 * a bound of (group, id) pairs held at once; past it the count fails with TOO_MANY_IDS, never a
 * smaller number. Rows without an id are not an id's: they count in no group.
 */

/** Pairs of group and id one unique count holds by default. */
const DEFAULT_MAX_PAIRS = 1000000

/**
 * @param {{ maxPairs?: number }} [options]
 * @returns {{ add: (group: string, id: string) => void, size: () => number,
 *   result: () => { total: number, groups: Map<string, number> } }}
 */
function createDistinctIds ({ maxPairs = DEFAULT_MAX_PAIRS } = {}) {
  /** @type {Map<string, Set<string>>} */
  const byGroup = new Map()
  const all = new Set()
  let pairs = 0
  return {
    /**
     * @param {string} group '' for a count without `by`
     * @param {string} id not empty
     */
    add (group, id) {
      let ids = byGroup.get(group)
      if (ids === undefined) byGroup.set(group, (ids = new Set()))
      if (ids.has(id)) return
      if (pairs >= maxPairs) {
        throw new ERRORS.TOO_MANY_IDS(`more than ${maxPairs} ids by group: count a shorter range or one endpoint`)
      }
      ids.add(id)
      pairs++
      all.add(id)
    },
    size: () => pairs,
    /** @returns {{ total: number, groups: Map<string, number> }} distinct ids overall and in each group */
    result () {
      const groups = new Map()
      for (const [group, ids] of byGroup) groups.set(group, ids.size)
      return { total: all.size, groups }
    }
  }
}

module.exports = { createDistinctIds, DEFAULT_MAX_PAIRS }
