'use strict'

const { watchEndpointSwitches } = require('../lib/toggles/endpoint-switches')
const { publishChange, watchChangeFeed } = require('../lib/toggles/change-feed')

/**
 * How an admin change reaches every process that serves: on this host at once (the cluster
 * broadcast, or this process alone), on other hosts within `controlPollMs` (they poll the
 * stored endpoint switches and the config change feed; 0 = no polling).
 *
 * @param {object} options
 * @param {Map<string, { name: string, enabled: boolean,
 *   cache: { invalidate: (id: string) => void }|null }>} options.endpoints
 * @param {ReturnType<typeof import('../lib/toggles/store').createToggleStore>} options.store
 * @param {((change: Change) => void)|undefined} options.broadcast spreads a change to every
 *   worker of this host (cluster IPC); default: this process only
 * @param {number} options.controlPollMs
 * @param {import('pino').Logger} options.logger
 * @param {(id: string, at: number|null) => void} [options.onConfigChange] after an id's caches
 *   dropped it here, whichever way the change came (the change streams, api/public/ofrep/stream-hub.js)
 * @param {(name: string) => void} [options.onEndpointSwitch] after this process's copy of an
 *   endpoint's switch changed
 *
 * A change, as the cluster broadcast carries it; `at`: when an id's config was changed (epoch
 * ms), for the change streams.
 * @typedef {{ cmd: 'invalidate', id: string, at?: number }
 *   | { cmd: 'endpoint', name: string, enabled: boolean }} Change
 */
function createPropagation ({
  endpoints, store, broadcast, controlPollMs, logger, onConfigChange = () => {}, onEndpointSwitch = () => {}
}) {
  const byName = new Map([...endpoints.values()].map((e) => [e.name, e]))
  // Switches applied from this host; a poll read that overlaps one is stale (endpoint-switches.js).
  let localSwitches = 0

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

  /** @param {Change} change from this process or relayed by the cluster primary */
  function applyChange (change) {
    if (change.cmd === 'invalidate') {
      invalidate(change.id, Number.isFinite(change.at) ? /** @type {number} */ (change.at) : null)
    } else if (change.cmd === 'endpoint') {
      localSwitches++
      setEndpointEnabled(change.name, change.enabled)
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

  return {
    applyChange,
    /** Resolves once the first read of the stored switches and feed is done (or failed). */
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
    }
  }
}

module.exports = { createPropagation }
