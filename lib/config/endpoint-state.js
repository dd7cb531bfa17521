'use strict'

const { findCell } = require('../hbase')
const { startPoller } = require('./poller')

// Ids are [A-Za-z0-9_-]: a row starting with '!' can never be an id's config, and it sorts
// before every id, so a scan of ids can start past these rows.
const ROW_PREFIX = '!endpoint:'
const FIRST_ID_ROW = '-' // the lowest character an id may start with

/**
 * Runtime on/off state of endpoints, stored in the config table (one reserved row per
 * endpoint) so that every process on every host sees the same switch, and a restart keeps it.
 * An endpoint without a stored row has the `enabled` value of its settings.
 *
 * @param {object} options
 * @param {import('../hbase').HBaseClient} options.client
 * @param {string} options.table the config table
 * @param {string} options.family
 * @param {string} options.qualifier
 * @param {number} [options.timeoutMs] per read/write
 */
function createEndpointStateStore ({ client, table, family, qualifier, timeoutMs }) {
  return {
    /**
     * @param {string[]} names
     * @returns {Promise<Map<string, { enabled: boolean, at: number }>>} only endpoints with a stored state
     */
    async read (names) {
      const rows = await client.multiGet(table, names.map((n) => ROW_PREFIX + n), { columns: [`${family}:${qualifier}`], timeout: timeoutMs })
      const failed = rows.find((row) => row instanceof Error)
      if (failed) throw failed
      const states = new Map()
      rows.forEach((row, i) => {
        if (!row) return
        const cell = findCell(row, family, qualifier)
        if (!cell) return
        try {
          const value = JSON.parse(cell.value.toString('utf8'))
          if (value && typeof value.enabled === 'boolean') states.set(names[i], { enabled: value.enabled, at: Number(value.at) || 0 })
        } catch {
          // Not ours to fix: a hand-edited row is ignored and the settings value applies.
        }
      })
      return states
    },

    /**
     * @param {string} name
     * @param {boolean} enabled
     */
    async write (name, enabled) {
      await client.put(table, ROW_PREFIX + name, { [family]: { [qualifier]: JSON.stringify({ enabled, at: Date.now() }) } }, { timeout: timeoutMs })
    }
  }
}

/**
 * Polls the stored endpoint states and applies changes, so a switch made on any host reaches
 * this process within `intervalMs` (plus one read). Failed reads keep the last known state.
 *
 * @param {object} options
 * @param {ReturnType<typeof createEndpointStateStore>} options.store
 * @param {string[]} options.names endpoint names
 * @param {(name: string, enabled: boolean) => void} options.apply
 * @param {number} options.intervalMs
 * @param {{ warn: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, refresh: () => Promise<void>, stop: () => void }} ready:
 *   the first read is done (or failed); never rejects
 */
function watchEndpointStates ({ store, names, apply, intervalMs, logger }) {
  let failing = false

  async function refresh () {
    try {
      const states = await store.read(names)
      for (const [name, { enabled }] of states) apply(name, enabled)
      if (failing && logger) logger.warn('endpoint states readable again')
      failing = false
    } catch (err) {
      // Logged when reads start failing, not on every poll of an outage.
      if (!failing && logger) logger.warn({ code: err.code, message: err.message }, 'cannot read endpoint states; keeping the last known ones')
      failing = true
    }
  }

  return { ...startPoller(refresh, intervalMs), refresh }
}

module.exports = { createEndpointStateStore, watchEndpointStates, ROW_PREFIX, FIRST_ID_ROW }
