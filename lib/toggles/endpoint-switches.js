'use strict'

const { startPoller } = require('./poller')

/**
 * Keeps this process's endpoint switches in step with the ones stored in the config table
 * (toggle store, `!endpoint:<name>` rows), so a switch made on any host reaches this process
 * within `intervalMs` (plus one read), and a restart keeps it. An endpoint without a stored row
 * keeps the `enabled` value of its settings. Failed reads keep the last known state.
 *
 * @param {object} options
 * @param {{ readSwitches: (names: string[]) => Promise<Map<string, { enabled: boolean }>> }} options.store
 * @param {string[]} options.names endpoint names
 * @param {(name: string, enabled: boolean) => void} options.apply
 * @param {number} options.intervalMs
 * @param {() => number} [options.localSwitches] how many switches this process has applied
 *   from its own host (admin call or cluster broadcast) so far: a read that was in flight while
 *   one was applied is older than it and is dropped (the next poll reads the stored state again)
 * @param {{ warn: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, stop: () => void }} ready: the first read is done (or
 *   failed); never rejects
 */
function watchEndpointSwitches ({ store, names, apply, intervalMs, localSwitches = () => 0, logger }) {
  let failing = false

  async function refresh () {
    try {
      const before = localSwitches()
      const states = await store.readSwitches(names)
      if (localSwitches() !== before) return
      for (const [name, { enabled }] of states) apply(name, enabled)
      if (failing && logger) logger.warn('endpoint switches readable again')
      failing = false
    } catch (err) {
      // Logged when reads start failing, not on every poll of an outage.
      if (!failing && logger) {
        logger.warn({
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
          message: /** @type {Error} */ (err).message
        }, 'cannot read endpoint switches; keeping the last known ones')
      }
      failing = true
    }
  }

  return startPoller(refresh, intervalMs)
}

module.exports = { watchEndpointSwitches }
