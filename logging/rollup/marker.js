'use strict'

const { ROLLUP_FAMILY, rollupKey, minuteOfLogRow } = require('./layout')

/**
 * The writers' side of the rollups (layout.js): after HBase acknowledged a batch of access-log
 * rows, mark each minute they fall in. A mark that cannot be written for a reason that passes
 * (HBase busy, a region moving) fails the batch, which is written again with its mark; a reason
 * that does not (no rollup table) switches rollups off for this sink, said once in the log and
 * in stats(): the access log itself never waits on its rollups.
 *
 * @param {object} deps
 * @param {{ multiPut: Function }} deps.client
 * @param {string} deps.rollupTable
 * @param {string} deps.logTable
 * @param {string} deps.writerId unique among writers (as the log's row keys need anyway)
 * @param {any} [deps.logger]
 */
function createRollupMarker ({ client, rollupTable, logTable, writerId, logger }) {
  let seq = 0
  const stats = { marks: 0, markFailures: 0, disabled: /** @type {string|null} */ (null) }

  return {
    /**
     * Marks the minutes of these rows.
     * @param {string[]} rowKeys access-log row keys HBase acknowledged
     * @param {number} [timeout] ms
     * @returns {Promise<Error|null>} a retryable error when the marks did not land (the rows
     *   then count as not written), else null
     */
    async mark (rowKeys, timeout) {
      if (stats.disabled || rowKeys.length === 0) return null
      const minutes = new Set()
      for (const key of rowKeys) minutes.add(minuteOfLogRow(key))
      const token = `${writerId}.${seq++}`
      const puts = [...minutes].map((minute) => ({ row: rollupKey('m', logTable, minute), cells: [{ family: ROLLUP_FAMILY, qualifier: token, value: '' }] }))
      let results
      try {
        results = await client.multiPut(rollupTable, puts, { timeout })
      } catch (err) {
        results = puts.map(() => err)
      }
      const err = results.find(Boolean)
      if (!err) {
        stats.marks += puts.length
        return null
      }
      stats.markFailures++
      if (err.retryable) return err
      stats.disabled = err.code || err.message
      if (logger) logger.error({ err, rollupTable }, 'access-log rollups: cannot mark minutes in the rollup table; rollups are off for this process (the access log goes on)')
      return null
    },

    /** @returns {{ marks: number, markFailures: number, disabled: string|null }} */
    stats: () => ({ ...stats })
  }
}

module.exports = { createRollupMarker }
