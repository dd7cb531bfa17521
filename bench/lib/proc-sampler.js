'use strict'

/**
 * Server-side view of a run: CPU time and resident memory of each role (the server cluster, the
 * HBase JVM, the load generator), read from /proc while the run goes. Linux only; elsewhere every
 * figure is null.
 *
 * CPU is utime + stime summed over a role's processes and their descendants (cluster workers are
 * children of the primary), counted from when each process was first seen; RSS is the role's
 * summed resident set, and its peak over the samples is reported.
 */

const fs = require('node:fs')
const { execFileSync } = require('node:child_process')

const CLK_TCK = sysconf('CLK_TCK', 100)
const PAGE_SIZE = sysconf('PAGESIZE', 4096)
const MIB = 2 ** 20

function sysconf (name, fallback) {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback
  } catch {
    return fallback
  }
}

/**
 * Parses /proc/<pid>/stat text (the command name may contain spaces and parentheses).
 * @param {string} text
 * @returns {{ ppid: number, cpuTicks: number, rssBytes: number }}
 */
function parseStat (text) {
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // Fields from 3 (state) on: ppid is field 4, utime 14, stime 15, rss 24 (man 5 proc).
  return { ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]), rssBytes: Number(f[21]) * PAGE_SIZE }
}

/**
 * Every process's /proc/<pid>/stat, parsed.
 * @returns {Map<number, { ppid: number, cpuTicks: number, rssBytes: number }>}
 */
function readAll () {
  const stats = new Map()
  let names
  try {
    names = fs.readdirSync('/proc')
  } catch {
    return stats
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    try {
      stats.set(Number(name), parseStat(fs.readFileSync(`/proc/${name}/stat`, 'latin1')))
    } catch {
      // exited between readdir and read
    }
  }
  return stats
}

function withDescendants (roots, stats) {
  const children = new Map()
  for (const [pid, s] of stats) {
    if (!children.has(s.ppid)) children.set(s.ppid, [])
    children.get(s.ppid).push(pid)
  }
  const out = new Set()
  const stack = roots.filter((pid) => stats.has(pid))
  while (stack.length) {
    const pid = stack.pop()
    if (out.has(pid)) continue
    out.add(pid)
    stack.push(...(children.get(pid) || []))
  }
  return [...out]
}

/**
 * @param {Record<string, () => Array<number|null|undefined>>} roles role -> its root pids now
 * @param {{ intervalMs?: number }} [options]
 * @returns {{ start: () => void, stop: () => Record<string, { cpuMs: number|null, peakRssMiB: number|null, processes: number }> }}
 */
function createSampler (roles, { intervalMs = 250 } = {}) {
  const state = Object.fromEntries(Object.keys(roles).map((r) => [r, { first: new Map(), last: new Map(), peakRss: 0 }]))
  let timer = null
  const available = fs.existsSync('/proc/self/stat')

  function sample () {
    const stats = readAll()
    for (const [role, rootsOf] of Object.entries(roles)) {
      const st = state[role]
      const roots = rootsOf().filter((pid) => Number.isInteger(pid) && pid > 0)
      let rss = 0
      for (const pid of withDescendants(roots, stats)) {
        const s = stats.get(pid)
        if (!st.first.has(pid)) st.first.set(pid, s.cpuTicks)
        st.last.set(pid, s.cpuTicks)
        rss += s.rssBytes
      }
      st.peakRss = Math.max(st.peakRss, rss)
    }
  }

  return {
    start () {
      if (!available) return
      sample()
      timer = setInterval(sample, intervalMs)
      timer.unref()
    },
    /** @returns {Record<string, { cpuMs: number|null, peakRssMiB: number|null, processes: number }>} */
    stop () {
      if (timer) clearInterval(timer)
      timer = null
      if (available) sample()
      /** @type {Record<string, { cpuMs: number|null, peakRssMiB: number|null, processes: number }>} */
      const out = {}
      for (const [role, st] of Object.entries(state)) {
        let ticks = 0
        for (const [pid, first] of st.first) ticks += st.last.get(pid) - first
        out[role] = available && st.first.size
          ? { cpuMs: Math.round(ticks * 1000 / CLK_TCK), peakRssMiB: Math.round(st.peakRss / MIB), processes: st.first.size }
          : { cpuMs: null, peakRssMiB: null, processes: 0 }
      }
      return out
    }
  }
}

module.exports = { createSampler, parseStat, withDescendants, readAll }
