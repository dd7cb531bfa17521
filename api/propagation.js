'use strict'

const { watchEndpointSwitches, watchStoredState } = require('../lib/toggles/endpoint-switches')
const { parseRollout, activateRollout } = require('../lib/toggles/rollout')
const { validateToggles } = require('../lib/toggles/validate')
const { publishChange, watchChangeFeed } = require('../lib/toggles/change-feed')

/**
 * How an admin change reaches every process that serves: on this host at once (the cluster
 * broadcast, or this process alone), on other hosts within `controlPollMs` (they poll the
 * stored endpoint switches, the stored rollouts and the config change feed; 0 = no polling).
 *
 * @param {object} options
 * @param {Map<string, { name: string, enabled: boolean, acceptsRollout: boolean,
 *   rollout: import('../lib/toggles/rollout').ActiveRollout|null,
 *   cache: { invalidate: (id: string) => void }|null }>} options.endpoints
 *   acceptsRollout: its config source is HBase (a fixed config is every id's)
 * @param {ReturnType<typeof import('../lib/toggles/store').createToggleStore>} options.store
 * @param {((change: Change) => void)|undefined} options.broadcast spreads a change to every
 *   worker of this host (cluster IPC); default: this process only
 * @param {number} options.controlPollMs
 * @param {import('pino').Logger} options.logger
 * @param {(id: string, at: number|null) => void} [options.onConfigChange] after an id's caches
 *   dropped it here, whichever way the change came (the change streams, api/public/ofrep/stream-hub.js)
 * @param {(name: string) => void} [options.onEndpointSwitch] after this process's copy of an
 *   endpoint's switch or rollout changed (either changes what every id without a row is answered)
 * @param {() => void} [options.onRetentionChange] a process of this host set the access log's TTLs:
 *   the TTLs this one read are stale (other hosts read them again within their cache's minute)
 *
 * A change, as the cluster broadcast carries it; `at`: when an id's config was changed (epoch
 * ms), for the change streams.
 * @typedef {{ cmd: 'invalidate', id: string, at?: number }
 *   | { cmd: 'invalidateMany', ids: string[], at?: number }
 *   | { cmd: 'endpoint', name: string, enabled: boolean }
 *   | { cmd: 'rollout', name: string, rollout: unknown, at: number }
 *   | { cmd: 'retention' }} Change
 *   rollout: as stored (null: removed)
 */
function createPropagation ({
  endpoints, store, broadcast, controlPollMs, logger, onConfigChange = () => {}, onEndpointSwitch = () => {},
  onRetentionChange = () => {}
}) {
  const byName = new Map([...endpoints.values()].map((e) => [e.name, e]))
  // Switches applied from this host; a poll read that overlaps one is stale (endpoint-switches.js).
  let localSwitches = 0
  // The same for rollouts, and the stored version (`at`) each endpoint's rollout copy is from.
  let localRollouts = 0
  /** @type {Map<string, number>} */
  const rolloutAt = new Map()

  /**
   * Drops one id from every endpoint cache of this process.
   * @param {string} id
   * @param {number|null} at when it changed (epoch ms), when known
   */
  function invalidate (id, at) {
    for (const endpoint of endpoints.values()) if (endpoint.cache) endpoint.cache.invalidate(id)
    onConfigChange(id, at)
  }

  /** @param {string} name @param {boolean} enabled */
  function setEndpointEnabled (name, enabled) {
    const endpoint = byName.get(name)
    if (!endpoint || endpoint.enabled === enabled) return
    logger.info({ endpoint: name, enabled }, enabled ? 'endpoint enabled' : 'endpoint disabled')
    endpoint.enabled = enabled
    onEndpointSwitch(name)
  }

  /**
   * Applies a stored rollout (null: removed) unless this copy is already from that version.
   * A stored rollout that no longer parses (a hand-edited row) is logged and the copy kept.
   * @param {string} name
   * @param {{ rollout: unknown, at: number }} stored
   */
  function setRollout (name, { rollout, at }) {
    const endpoint = byName.get(name)
    if (!endpoint || !endpoint.acceptsRollout || rolloutAt.get(name) === at) return
    rolloutAt.set(name, at)
    if (rollout === null) {
      endpoint.rollout = null
      logger.info({ endpoint: name, at }, 'rollout removed')
    } else {
      const parsed = parseRollout(rollout, validateToggles)
      if ('error' in parsed) {
        logger.warn({ endpoint: name, at, problem: parsed.error }, 'stored rollout is not valid; keeping the last one')
        return
      }
      endpoint.rollout = activateRollout(parsed.rollout, { at })
      logger.info({ endpoint: name, at, variants: parsed.rollout.variants.map((v) => `${v.name}:${v.weight}`) }, 'rollout set')
    }
    onEndpointSwitch(name)
  }

  /** @param {Change} change from this process or relayed by the cluster primary */
  function applyChange (change) {
    if (change.cmd === 'invalidate') {
      invalidate(change.id, Number.isFinite(change.at) ? /** @type {number} */ (change.at) : null)
    } else if (change.cmd === 'invalidateMany') {
      const at = Number.isFinite(change.at) ? /** @type {number} */ (change.at) : null
      for (const id of change.ids) invalidate(id, at)
    } else if (change.cmd === 'endpoint') {
      localSwitches++
      setEndpointEnabled(change.name, change.enabled)
    } else if (change.cmd === 'rollout') {
      localRollouts++
      setRollout(change.name, change)
    } else if (change.cmd === 'retention') {
      onRetentionChange()
    }
  }
  const spread = broadcast || applyChange

  const watchers = controlPollMs > 0
    ? [
        watchEndpointSwitches({
          store,
          names: [...byName.keys()],
          apply: setEndpointEnabled,
          intervalMs: controlPollMs,
          localSwitches: () => localSwitches,
          logger
        }),
        watchChangeFeed({ store, invalidate, intervalMs: controlPollMs, logger })
      ]
    : []
  const rolloutNames = [...byName.values()].filter((e) => e.acceptsRollout).map((e) => e.name)
  // Read at start even without polling: a restart keeps the rollouts that were set at runtime.
  if (rolloutNames.length > 0) {
    watchers.push(watchStoredState({
      read: (names) => store.readRollouts(names),
      names: rolloutNames,
      apply: setRollout,
      intervalMs: controlPollMs,
      what: 'rollouts',
      localChanges: () => localRollouts,
      logger
    }))
  }

  return {
    applyChange,
    /** Resolves once the first read of the stored switches, rollouts and feed is done (or failed). */
    ready: Promise.all(watchers.map((w) => w.ready)),
    stop () {
      for (const w of watchers) w.stop()
    },

    /**
     * A toggle of `id` changed: caches here drop it now, other hosts within a poll.
     * @param {string} id
     */
    configChanged (id) {
      spread({ cmd: 'invalidate', id, at: Date.now() })
      publishChange(store, id).catch((err) => {
        logger.warn(
          { id, code: err.code, message: err.message },
          'config changed, but other hosts could not be told; they see it when their cache entry expires'
        )
      })
    },

    /**
     * Many ids changed at once (a bulk import's batch): caches on this host drop them now. Other
     * hosts are not told through the change feed (one cell per id would make every poll read the
     * whole import): they serve the new configs once their cached entries expire (the cache's ttlMs).
     * @param {string[]} ids
     */
    configsChanged (ids) {
      spread({ cmd: 'invalidateMany', ids, at: Date.now() })
    },

    /** The access log's TTLs were set from this host: every process of it reads them again. */
    retentionChanged () {
      spread({ cmd: 'retention' })
    },

    /** What the admin API sees of the endpoints. */
    endpointSwitches: {
      /** @param {string} name */
      has: (name) => byName.has(name),
      list: () => [...byName.values()].map((e) => ({ name: e.name, enabled: e.enabled })),
      /**
       * Stored first (every host and a restart follow it), then spread on this host.
       * @param {string} name
       * @param {boolean} enabled
       */
      async set (name, enabled) {
        await store.writeSwitch(name, enabled)
        spread({ cmd: 'endpoint', name, enabled })
      }
    },

    /** What the admin API sees of the rollouts. */
    rollouts: {
      /** @param {string} name @returns {'none'|'fixed'|'ok'} none: no such endpoint; fixed: its config is fixed */
      kind: (name) => (!byName.has(name) ? 'none' : byName.get(name)?.acceptsRollout ? 'ok' : 'fixed'),
      /**
       * This process's copy.
       * @param {string} name
       * @returns {{ rollout: import('../lib/toggles/rollout').Rollout, at: number|null }|null}
       */
      get (name) {
        const active = byName.get(name)?.rollout
        return active ? { rollout: active.rollout, at: active.at } : null
      },
      /**
       * Stored first (every host and a restart follow it), then spread on this host.
       * @param {string} name
       * @param {import('../lib/toggles/rollout').Rollout|null} rollout a parsed one; null removes it
       * @returns {Promise<number>} its version (`at`, epoch ms)
       */
      async set (name, rollout) {
        const at = Math.max(Date.now(), (rolloutAt.get(name) ?? 0) + 1)
        await store.writeRollout(name, rollout, at)
        spread({ cmd: 'rollout', name, rollout, at })
        return at
      }
    }
  }
}

module.exports = { createPropagation }
