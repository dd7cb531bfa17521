'use strict'

/**
 * CPU of some of a process's threads, chosen by name, from /proc (Linux only; elsewhere null).
 * A JVM's whole CPU mixes the work of a call with what runs beside it (compactions, flushes, GC,
 * chores); the threads that serve RPCs (HBase's RpcServer.* handlers and its RS-EventLoopGroup
 * netty loops, which read and decode the calls) carry the cost of the calls alone.
 */

const fs = require('node:fs')
const { readThreads } = require('../../../../tools/bench')

/** The threads of a RegionServer that decode, run and answer calls (comm is cut to 15 chars). */
const HBASE_RPC_THREADS = /^(RpcServer\.|RS-EventLoopGro)/

/**
 * Run time in ns of each thread of `pid` whose name matches.
 * @param {number} pid
 * @param {RegExp} match tested against /proc/<pid>/task/<tid>/comm
 * @returns {Map<number, number>|null} tid -> ns; null when the process is unreadable
 */
function readNamedThreads (pid, match) {
  const threads = readThreads(pid)
  if (!threads) return null
  for (const tid of threads.keys()) {
    let comm = ''
    try {
      comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'latin1').trim()
    } catch {
      // the thread exited meanwhile: dropped below
    }
    if (!match.test(comm)) threads.delete(tid)
  }
  return threads
}

/**
 * µs the matching threads ran between two reads (a thread new at the end ran entirely between;
 * one gone by then is not counted: pooled RPC threads live as long as the server).
 * @param {Map<number, number>|null} before
 * @param {Map<number, number>|null} after
 * @returns {number|null}
 */
function threadCpuUs (before, after) {
  if (!before || !after) return null
  let ns = 0
  for (const [tid, end] of after) ns += end - (before.get(tid) || 0)
  return Math.round(ns / 1000)
}

module.exports = { HBASE_RPC_THREADS, readNamedThreads, threadCpuUs }
