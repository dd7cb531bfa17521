'use strict'

/**
 * Runs `poll` now and then every `intervalMs` after the previous run finished (never two at
 * once); with `intervalMs` 0, once. The timer is unref'd: polling never keeps a process alive by itself.
 * @param {() => Promise<void>} poll must not reject (it handles its own errors)
 * @param {number} intervalMs
 * @returns {{ ready: Promise<void>, stop: () => void }} ready: the first run is done
 */
function startPoller (poll, intervalMs) {
  /** @type {NodeJS.Timeout|null} */
  let timer = null
  let stopped = false
  function schedule () {
    if (stopped || intervalMs === 0) return
    timer = setTimeout(() => poll().then(schedule), intervalMs)
    timer.unref()
  }
  return {
    ready: poll().then(schedule),
    stop () {
      stopped = true
      if (timer) clearTimeout(timer)
    }
  }
}

module.exports = { startPoller }
