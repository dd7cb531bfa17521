'use strict'

const { setTimeout: sleep } = require('node:timers/promises')

const KILL_GRACE_MS = 5000

/**
 * SIGTERM, then SIGKILL after a grace period, for processes left running in the namespaces.
 * @param {number[]} pids
 * @returns {Promise<number[]>} the pids signalled
 */
async function stopProcesses (pids) {
  const alive = (pid) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  for (const pid of pids) {
    try { process.kill(pid, 'SIGTERM') } catch {}
  }
  const deadline = Date.now() + KILL_GRACE_MS
  while (pids.some(alive) && Date.now() < deadline) await sleep(50)
  for (const pid of pids.filter(alive)) {
    try { process.kill(pid, 'SIGKILL') } catch {}
  }
  return pids
}

module.exports = { stopProcesses }
