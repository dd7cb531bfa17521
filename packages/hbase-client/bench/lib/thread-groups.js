'use strict'

/**
 * A JVM's CPU split by thread group: threads named alike (RpcServer.default handlers, netty
 * RS-EventLoopGroup loops, the WAL writers, GC, JIT compilers…) summed, from /proc (Linux only;
 * elsewhere null). Shows where one client's calls cost the server more than another's.
 */

const fs = require('node:fs')
const { readThreads } = require('../../../../tools/bench')

/**
 * A thread's group: its name (cut to 15 characters by the kernel) less a trailing number.
 * @param {string} comm
 * @returns {string}
 */
function threadGroup (comm) {
  return comm.replace(/[-#._ ]*\d+$/, '') || comm
}

/**
 * Run time in ns and group of each thread of `pid`.
 * @param {number|null} pid
 * @returns {Map<number, { group: string, ns: number }>|null} null when the process is unreadable
 */
function readThreadGroups (pid) {
  const threads = pid ? readThreads(pid) : null
  if (!threads) return null
  const out = new Map()
  for (const [tid, ns] of threads) {
    try {
      out.set(tid, { group: threadGroup(fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'latin1').trim()), ns })
    } catch {
      // the thread exited meanwhile
    }
  }
  return out
}

/**
 * µs each group ran between two reads (a thread new at the end ran entirely between).
 * @param {Map<number, { group: string, ns: number }>|null} before
 * @param {Map<number, { group: string, ns: number }>|null} after
 * @returns {Record<string, number>|null}
 */
function groupCpuUs (before, after) {
  if (!before || !after) return null
  /** @type {Record<string, number>} */
  const us = {}
  for (const [tid, { group, ns }] of after) {
    const ran = (ns - (before.get(tid)?.ns || 0)) / 1000
    if (ran > 0) us[group] = (us[group] || 0) + ran
  }
  return us
}

module.exports = { threadGroup, readThreadGroups, groupCpuUs }
