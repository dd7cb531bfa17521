'use strict'

/**
 * Server-side view of a run: CPU time and resident memory of each role (the server cluster, the
 * HBase JVM, the load generator), read from /proc while the run goes. Linux only; elsewhere every
 * figure is null.
 *
 * CPU is utime + stime summed over a role's processes and their descendants (cluster workers are
 * children of the primary), counted from when each process was first seen; RSS is the role's
 * summed resident set, and its peak over the samples is reported.
 *
 * /proc/<pid>/stat counts CPU in clock ticks (10 ms), so a process's CPU over a run is known to
 * ±20 ms: coarse for a few seconds at 1,000 req/s. So at start and stop the sampler also reads
 * each process's threads' run time in nanoseconds (/proc/<pid>/task/<tid>/schedstat), and
 * `cpuUs` uses it for every process that was there at both ends and lost no thread meanwhile
 * (a thread that exits takes its nanoseconds with it; its ticks stay in /proc/<pid>/stat), the
 * ticks for the others. Threads are read only at the ends: a JVM has hundreds (~7 ms a read).
 */

const fs = require('node:fs')
const { execFileSync } = require('node:child_process')

const CLK_TCK = sysconf('CLK_TCK', 100)
/** How far below its ticks a process's thread sum may fall before threads are presumed lost. */
const TICK_SLACK_MS = 2 * 1000 / CLK_TCK + 5
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

/**
 * Run time of each thread of `pid` in nanoseconds (the first field of its schedstat).
 * @param {number} pid
 * @returns {Map<number, number>|null} tid -> ns; null when the process is gone or unreadable
 */
function readThreads (pid) {
  let tids
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return null
  }
  const out = new Map()
  for (const tid of tids) {
    try {
      out.set(Number(tid), Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ')[0]))
    } catch {
      // the thread exited between readdir and read
    }
  }
  return out
}

/**
 * CPU of one process between two thread reads, in µs, from its threads when they account for
 * it, else from its ticks. Threads new at the end ran entirely within the window.
 * @param {Map<number, number>|null|undefined} before tid -> ns at start
 * @param {Map<number, number>|null|undefined} after tid -> ns at stop
 * @param {number} ticksMs the process's CPU from /proc/<pid>/stat over the same window
 * @param {number} [slackMs] how far below the ticks the threads may be (tick truncation)
 * @returns {{ us: number, source: 'threads'|'ticks' }}
 */
function processCpuUs (before, after, ticksMs, slackMs = TICK_SLACK_MS) {
  if (before && after && [...before.keys()].every((tid) => after.has(tid))) {
    let ns = 0
    for (const [tid, end] of after) ns += end - (before.get(tid) || 0)
    if (ns / 1e6 >= ticksMs - slackMs) return { us: Math.round(ns / 1000), source: 'threads' }
  }
  return { us: ticksMs * 1000, source: 'ticks' }
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
 * @returns {{ start: () => void, stop: () => Record<string, RoleCpu> }}
 */
function createSampler (roles, { intervalMs = 250 } = {}) {
  const state = Object.fromEntries(
    Object.keys(roles).map((r) => [r, { first: new Map(), last: new Map(), peakRss: 0, threadsFirst: new Map(), threadsLast: new Map() }])
  )
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

  /** @param {'threadsFirst'|'threadsLast'} which */
  function readAllThreads (which, pidsOf) {
    for (const st of Object.values(state)) for (const pid of pidsOf(st).keys()) st[which].set(pid, readThreads(pid))
  }

  return {
    start () {
      if (!available) return
      sample()
      readAllThreads('threadsFirst', (st) => st.first)
      timer = setInterval(sample, intervalMs)
      timer.unref()
    },
    /** @returns {Record<string, RoleCpu>} */
    stop () {
      if (timer) clearInterval(timer)
      timer = null
      if (available) {
        sample()
        readAllThreads('threadsLast', (st) => st.last)
      }
      /** @type {Record<string, RoleCpu>} */
      const out = {}
      for (const [role, st] of Object.entries(state)) {
        let ticks = 0
        let us = 0
        const sources = new Set()
        for (const [pid, first] of st.first) {
          const ms = (st.last.get(pid) - first) * 1000 / CLK_TCK
          const cpu = processCpuUs(st.threadsFirst.get(pid), st.threadsLast.get(pid), ms)
          ticks += ms
          us += cpu.us
          sources.add(cpu.source)
        }
        out[role] = available && st.first.size
          ? {
              cpuMs: Math.round(ticks),
              cpuUs: us,
              cpuSource: sources.size === 1 ? [...sources][0] : 'mixed',
              peakRssMiB: Math.round(st.peakRss / MIB),
              processes: st.first.size
            }
          : { cpuMs: null, cpuUs: null, cpuSource: null, peakRssMiB: null, processes: 0 }
      }
      return out
    }
  }
}

/**
 * @typedef {{ cpuMs: number|null, cpuUs: number|null, cpuSource: 'threads'|'ticks'|'mixed'|null,
 *   peakRssMiB: number|null, processes: number }} RoleCpu
 *   cpuMs from ticks (10 ms steps per process); cpuUs the same window to the µs where the threads
 *   account for it (cpuSource says which)
 */

module.exports = { createSampler, parseStat, withDescendants, readAll, readThreads, processCpuUs }
