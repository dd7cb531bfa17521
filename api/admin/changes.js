'use strict'

const { rollbackTarget } = require('../../lib/toggles/history')

/**
 * The one owner of the admin API's config changes: an id's config set, deleted or rolled back,
 * an endpoint's rollout set, deleted or rolled back. Each change is made, spread (caches drop
 * the id; the rollout reaches every process), kept in the history (lib/toggles/history.js, with
 * the value before it) and recorded in the audit trail (api/admin/audit.js), in that order. A
 * rollback is a change like the others: kept, recorded, and itself undone by the next rollback.
 *
 * The change is made before it is kept: a history or audit write that fails after it is logged
 * as an error (the app-log line of the audit record is written first, so nothing goes unsaid).
 *
 * @typedef {{ actor: string, ip?: string }} Who the request's actor (the admin credential's name)
 *   and address
 *
 * @param {object} options
 * @param {ReturnType<typeof import('../../lib/toggles/store').createToggleStore>} options.store
 * @param {ReturnType<typeof import('../../lib/toggles/history').createHistory>} options.history
 * @param {ReturnType<typeof import('../propagation').createPropagation>['rollouts']} options.rollouts
 * @param {(id: string) => void} options.onConfigChange caches everywhere drop the id
 * @param {(ids: string[]) => void} options.onConfigsImported caches on this host drop them (others within their TTL)
 * @param {ReturnType<typeof import('./audit').createAuditTrail>} options.trail
 * @param {{ error: Function }} options.logger
 * @param {() => number} [options.now]
 */
function createConfigChanges ({ store, history, rollouts, onConfigChange, onConfigsImported, trail, logger, now = Date.now }) {
  /**
   * Keeps a change in the history, then records it in the audit trail.
   * @param {Who} who
   * @param {string} target `c:<id>` or `r:<endpoint>`
   * @param {{ action: string, value: unknown, previous: unknown, at: number, rolledBackTo?: number }} change
   * @param {string} audited the audit record's target
   * @param {Record<string, unknown>} [details] what the audit record says changed
   */
  async function keep (who, target, change, audited, details) {
    try {
      await history.add(target, { version: change.at, actor: who.actor, ...change })
    } catch (err) {
      logger.error({ code: /** @type {any} */ (err).code, message: /** @type {Error} */ (err).message, target, at: change.at },
        'config change made but not kept in the history')
    }
    await trail.record({ actor: who.actor, action: change.action, target: audited, ...(details ? { change: details } : {}), ip: who.ip })
  }

  /** @param {string} id @returns {Promise<unknown>} the stored toggles, null when none */
  async function storedConfig (id) {
    const row = await store.read(id)
    return row && 'toggles' in row ? row.toggles : null
  }

  /**
   * @param {Who} who
   * @param {string} id
   * @param {Record<string, unknown>|null} config null: delete the row
   * @param {string} action
   * @param {number} [rolledBackTo]
   */
  async function writeConfig (who, id, config, action, rolledBackTo) {
    const previous = await storedConfig(id)
    if (config === null) await store.remove(id)
    else await store.write(id, config)
    onConfigChange(id)
    const at = now()
    const extra = rolledBackTo === undefined ? {} : { rolledBackTo }
    await keep(who, `c:${id}`, { action, value: config, previous, at, ...extra }, id, config === null ? extra : { config, ...extra })
  }

  /**
   * @param {Who} who
   * @param {string} name
   * @param {import('../../lib/toggles/rollout').Rollout|null} rollout null: remove it
   * @param {string} action
   * @param {number} [rolledBackTo]
   * @returns {Promise<number>} the rollout's version
   */
  async function writeRollout (who, name, rollout, action, rolledBackTo) {
    const previous = rollouts.get(name)?.rollout ?? null
    const at = await rollouts.set(name, rollout)
    const extra = rolledBackTo === undefined ? {} : { rolledBackTo }
    const details = { version: at, ...(rollout ? { rollout } : {}), ...extra }
    await keep(who, `r:${name}`, { action, value: rollout, previous, at, ...extra }, name, details)
    return at
  }

  return {
    /** @param {Who} who @param {string} id @param {Record<string, unknown>} config */
    setConfig: (who, id, config) => writeConfig(who, id, config, 'config.set'),
    /** @param {Who} who @param {string} id */
    deleteConfig: (who, id) => writeConfig(who, id, null, 'config.delete'),
    /** @param {Who} who @param {string} name @param {import('../../lib/toggles/rollout').Rollout} rollout */
    setRollout: (who, name, rollout) => writeRollout(who, name, rollout, 'rollout.set'),
    /** @param {Who} who @param {string} name */
    deleteRollout: (who, name) => writeRollout(who, name, null, 'rollout.delete'),

    /**
     * One batch of a bulk import (checked by the caller): the values before them read in one
     * multi-get, written in one multi-put, kept in the history in one more. Not audited per
     * batch: the import's one audit record is `importDone`'s.
     * @param {Who} who
     * @param {Array<{ id: string, toggles: Record<string, unknown> }>} items
     * @returns {Promise<number>} written
     * @throws {Error} the first write that failed (the batch is safe to send again)
     */
    async importBatch (who, items) {
      const before = await store.readMany(items.map((i) => i.id))
      const failed = before.find((r) => r instanceof Error)
      if (failed) throw failed
      const results = await store.writeMany(items)
      const writeFailed = results.find((r) => r !== null)
      if (writeFailed) throw writeFailed
      onConfigsImported(items.map((i) => i.id))
      const at = now()
      await history.addMany(items.map((item, k) => {
        const row = /** @type {import('../../lib/toggles/store').DecodedRow} */ (before[k])
        const previous = row && 'toggles' in row ? row.toggles : null
        const change = { version: at, at, actor: who.actor, action: 'config.import', value: item.toggles, previous }
        return { target: `c:${item.id}`, change }
      }))
      return items.length
    },

    /**
     * The import's one audit record, once its last batch is written.
     * @param {Who} who
     * @param {Record<string, unknown>} summary file, lines, written, ms
     */
    importDone: (who, summary) => trail.record({ actor: who.actor, action: 'config.import', target: '*', change: summary, ip: who.ip }),

    /**
     * @param {'config'|'rollout'} kind
     * @param {string} target the id or the endpoint
     * @param {number} [limit]
     */
    history: (kind, target, limit) => history.list(`${kind === 'config' ? 'c' : 'r'}:${target}`, limit),

    /**
     * Restores an id's config or an endpoint's rollout as of a version or time, or as before its
     * newest change (`to` null).
     * @param {Who} who
     * @param {'config'|'rollout'} kind
     * @param {string} target
     * @param {number|null} to
     * @returns {Promise<{ value: unknown, to: number, undone: boolean }|null>} null: no history to go back to
     */
    async rollback (who, kind, target, to) {
      const chosen = rollbackTarget(await history.list(`${kind === 'config' ? 'c' : 'r'}:${target}`), to)
      if (chosen === null) return null
      const value = /** @type {any} */ (chosen.value)
      if (kind === 'config') await writeConfig(who, target, value, 'config.rollback', chosen.to)
      else await writeRollout(who, target, value, 'rollout.rollback', chosen.to)
      return chosen
    }
  }
}

module.exports = { createConfigChanges }
