'use strict'

/**
 * Signals a process group (a jest run and the servers it started), if it is still there. The
 * group's leader was spawned with `detached: true`, so its pid names the group.
 * @param {number} pid the group leader
 * @param {NodeJS.Signals} signal
 * @returns {void}
 */
function signalGroup (pid, signal) {
  try {
    process.kill(-pid, signal)
  } catch (err) {
    if (err.code !== 'ESRCH') throw err
  }
}

module.exports = { signalGroup }
