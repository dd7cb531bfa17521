'use strict'

const fs = require('node:fs')
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

/**
 * Whether a process is the rollup process of a beacon primary (server.js forks it with
 * BEACON_ROLE=rollup in its environment); false once it is gone.
 * @param {number} pid
 * @returns {boolean}
 */
function isRollupProcess (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes('BEACON_ROLE=rollup')
  } catch {
    return false
  }
}

/**
 * A beacon primary's serving workers: its children but the rollup process.
 * @param {number} primaryPid
 * @returns {number[]}
 */
function workerPids (primaryPid) {
  return childPids(primaryPid).filter((pid) => !isRollupProcess(pid))
}

/**
 * A beacon primary's rollup process, as a list: one pid, or none (rollups off, or being replaced).
 * @param {number} primaryPid
 * @returns {number[]}
 */
function rollupPids (primaryPid) {
  return childPids(primaryPid).filter(isRollupProcess)
}

module.exports = { deadPid, childPids, workerPids, rollupPids, isRollupProcess }
