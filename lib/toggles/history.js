'use strict'

/**
 * The history of config changes: every change of an id's config and of an endpoint's rollout,
 * kept in an HBase table of its own, one row per change, so "what changed at 14:02, and put it
 * back" has an answer. A row holds the value after the change and the value before it (read
 * just before the change), so a history reads as a list of changes and any of them can be undone.
 *
 * Rows are `<target>!<inverted time>-<random>`, `target` `c:<id>` or `r:<endpoint>`: one target's changes
 * are one prefix, newest first. A change's version is its time in epoch ms. How long rows are
 * kept is the table's TTL; how many per target, `maxVersions` (older ones are deleted as new ones
 * come). The table is created on first use.
 *
 * @typedef {{ version: number, at: number, actor: string, action: string,
 *   value: unknown, previous: unknown, rolledBackTo?: number }} Change
 *   value/previous: the config (or rollout) after and before; null: none (deleted, or absent)
 */

const crypto = require('node:crypto')
const { createOwnTable } = require('./own-table')

const FAMILY = 'h'
const QUALIFIER = 'json'
const INVERT_FROM = 10 ** 13 // epoch ms stay below this until the year 2286
const TIME_DIGITS = 13

/**
 * @param {object} options
 * @param {import('@beacon/hbase-client').HBaseClient} options.client
 * @param {string} options.table
 * @param {number|null} options.ttlSeconds
 * @param {number} options.maxVersions changes kept per target
 * @param {number} options.timeoutMs
 */
function createHistory ({ client, table, ttlSeconds, maxVersions, timeoutMs }) {
  const own = createOwnTable({ client, table, family: FAMILY, ttlSeconds, timeoutMs, kind: 'history' })
  // Two changes in one ms (a set and its rollback) both stay: a random suffix keeps their rows apart.
  const rowOf = (/** @type {string} */ target, /** @type {number} */ at) =>
    `${target}!${String(INVERT_FROM - at).padStart(TIME_DIGITS, '0')}-${crypto.randomBytes(2).toString('hex')}`

  /**
   * @param {string} target
   * @param {number} [limit]
   * @returns {Promise<Change[]>} newest first
   */
  async function list (target, limit = maxVersions) {
    const changes = []
    try {
      const scan = client.scan(table, { startRow: `${target}!`, stopRow: `${target}"`, limit, caching: limit, kind: 'history' })
      for await (const row of scan) changes.push(JSON.parse(row.cells[0].value.toString('utf8')))
    } catch (err) {
      if (/** @type {any} */ (err).code === 'HBASE_TABLE_NOT_FOUND') return []
      throw err
    }
    return changes
  }

  /** Deletes a target's changes past the newest `maxVersions`. @param {string} target */
  async function prune (target) {
    const rows = []
    const scan = client.scan(table, { startRow: `${target}!`, stopRow: `${target}"`, keysOnly: true, kind: 'history' })
    for await (const row of scan) rows.push(row.row.toString())
    for (const row of rows.slice(maxVersions)) await client.delete(table, row, { timeout: timeoutMs, kind: 'history' })
  }

  return {
    list,

    /**
     * Keeps one change.
     * @param {string} target `c:<id>` or `r:<endpoint>`
     * @param {Change} change
     * @returns {Promise<void>}
     */
    async add (target, change) {
      await own.put(rowOf(target, change.at), QUALIFIER, JSON.stringify(change))
      if (maxVersions > 0) await prune(target)
    },

    /**
     * Keeps many changes in one multi-put (a bulk import's batch). They are not pruned here: a
     * target's next single change prunes it.
     * @param {Array<{ target: string, change: Change }>} entries
     * @returns {Promise<void>}
     */
    async addMany (entries) {
      await own.putMany(entries.map(({ target, change }) => ({
        row: rowOf(target, change.at),
        qualifier: QUALIFIER,
        value: JSON.stringify(change)
      })))
    }
  }
}

/**
 * What a rollback restores: with `to`, the value as of that version (the change of that version
 * exactly, else the newest at or before that time; before every change kept, the value before
 * the oldest); without, the value before the newest change.
 * @param {Change[]} changes newest first
 * @param {number|null} to a version or a time (epoch ms); null: undo the newest change
 * @returns {{ value: unknown, to: number, undone: boolean }|null} value: what to restore (null:
 *   no config); to: the version it is as of (undone: the value before that version); null:
 *   no change kept
 */
function rollbackTarget (changes, to) {
  if (changes.length === 0) return null
  if (to === null) return { value: changes[0].previous, to: changes[0].version, undone: true }
  const chosen = changes.find((c) => c.version === to) || changes.find((c) => c.at <= to)
  if (chosen) return { value: chosen.value, to: chosen.version, undone: false }
  const oldest = changes[changes.length - 1]
  return { value: oldest.previous, to: oldest.version, undone: true }
}

module.exports = { createHistory, rollbackTarget }
