'use strict'

const { execFileSync } = require('node:child_process')

/**
 * A pid no process has right now: files named after it belong to a writer that is gone.
 * @returns {number}
 */
function deadPid () {
  for (let pid = 4000000; pid > 100000; pid -= 7919) {
    try {
      process.kill(pid, 0)
    } catch (err) {
      if (err.code === 'ESRCH') return pid
    }
  }
  throw new Error('no free pid found')
}

/**
 * The children of a process (a cluster primary's workers).
 * @param {number} parentPid
 * @returns {number[]}
 */
function childPids (parentPid) {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(parentPid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter(Boolean)
  } catch {
    return []
  }
}

module.exports = { deadPid, childPids }
