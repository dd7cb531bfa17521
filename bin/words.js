'use strict'

/**
 * A count and its noun, in the singular for one ("1 row", "2 rows").
 * @param {number} n
 * @param {string} word the singular
 * @returns {string}
 */
function plural (n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

module.exports = { plural }
