'use strict'

const { startPoller } = require('./poller')

/**
 * Keeps this process's copy of a per-endpoint state stored in the config table in step with the
 * stored one: the endpoint switches (toggle store, `!endpoint:<name>` rows) and the rollouts
 * (`!rollout:<name>`). A change made on any host reaches this process within `intervalMs` (plus
 * one read), and a restart keeps it. An endpoint without a stored row keeps what its settings
 * say. Failed reads keep the last known state.
 *
 * @template T
 * @param {object} options
 * @param {(names: string[]) => Promise<Map<string, T>>} options.read the stored states of `names`
 * @param {string[]} options.names endpoint names
 * @param {(name: string, state: T) => void} options.apply
 * @param {number} options.intervalMs
 * @param {string} options.what what is read, for the log (`endpoint switches`)
 * @param {() => number} [options.localChanges] how many changes this process has applied
 *   from its own host (admin call or cluster broadcast) so far: a read that was in flight while
 *   one was applied is older than it and is dropped (the next poll reads the stored state again)
 * @param {{ warn: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, stop: () => void }} ready: the first read is done (or
 *   failed); never rejects
 */
function watchStoredState ({ read, names, apply, intervalMs, what, localChanges = () => 0, logger }) {
  let failing = false

  async function refresh () {
    try {
      const before = localChanges()
      const states = await read(names)
      if (localChanges() !== before) return
      for (const [name, state] of states) apply(name, state)
      if (failing && logger) logger.warn(`${what} readable again`)
      failing = false
    } catch (err) {
      // Logged when reads start failing, not on every poll of an outage.
      if (!failing && logger) {
        logger.warn({
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
          message: /** @type {Error} */ (err).message
        }, `cannot read ${what}; keeping the last known ones`)
      }
      failing = true
    }
  }

  return startPoller(refresh, intervalMs)
}

/**
 * The endpoint switches' watcher (watchStoredState over `store.readSwitches`).
 * @param {{ store: { readSwitches: (names: string[]) => Promise<Map<string, { enabled: boolean }>> },
 *   names: string[], apply: (name: string, enabled: boolean) => void, intervalMs: number,
 *   localSwitches?: () => number, logger?: { warn: Function } }} options
 * @returns {{ ready: Promise<void>, stop: () => void }}
 */
function watchEndpointSwitches ({ store, names, apply, intervalMs, localSwitches, logger }) {
  return watchStoredState({
    read: (n) => store.readSwitches(n),
    names,
    apply: (name, { enabled }) => apply(name, enabled),
    intervalMs,
    what: 'endpoint switches',
    localChanges: localSwitches,
    logger
  })
}

module.exports = { watchEndpointSwitches, watchStoredState }
