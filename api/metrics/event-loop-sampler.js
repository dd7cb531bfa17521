'use strict'

const { performance } = require('node:perf_hooks')

/**
 * A loop active for less than this (ms) between two ticks held nothing up for longer: the next
 * tick can wait. The tick's own work is well under it.
 */
const IDLE_ACTIVE_MS = 1

/**
 * The ms the event loop spent outside its poll for I/O since the last call (eventLoopUtilization).
 * @returns {() => number}
 */
function loopActiveMs () {
  let last = performance.eventLoopUtilization()
  return () => {
    const now = performance.eventLoopUtilization()
    const { active } = performance.eventLoopUtilization(now, last)
    last = now
    return active
  }
}

/**
 * A timer due every `everyMs`: each tick reports how late it ran and the CPU the process's threads
 * used since the tick before, both in ms. Lateness alone measures two things: a synchronous task
 * (or GC) holding the loop, and a loaded machine running other processes; the CPU beside it tells
 * which (splitHoldUp).
 *
 * Waking an idle process costs more CPU than the tick itself, so while the loop stays idle (active
 * under 1 ms between ticks: nothing was held up longer) the period doubles up to `idleEveryMs`;
 * the first tick that finds more work brings it back to `everyMs`.
 * @param {{ everyMs: number, idleEveryMs?: number, onSample: (lateMs: number, cpuMs: number) => void,
 *   now?: () => number, cpuUsage?: () => { user: number, system: number }, activeMs?: () => number }} options
 *   activeMs: the loop's active ms since its last call (default: from eventLoopUtilization)
 * @returns {{ stop: () => void }}
 */
function sampleEventLoop ({
  everyMs, idleEveryMs = everyMs, onSample, now = () => performance.now(), cpuUsage = () => process.cpuUsage(),
  activeMs = loopActiveMs()
}) {
  let periodMs = everyMs
  let dueAt = now() + periodMs
  let lastCpu = cpuUsage()
  /** @type {NodeJS.Timeout|null} */
  let timer = null
  const tick = () => {
    const at = now()
    const cpu = cpuUsage()
    onSample(Math.max(0, at - dueAt), (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000)
    lastCpu = cpu
    periodMs = activeMs() < IDLE_ACTIVE_MS ? Math.min(idleEveryMs, periodMs * 2) : everyMs
    dueAt = at + periodMs
    timer = setTimeout(tick, periodMs)
    timer.unref()
  }
  timer = setTimeout(tick, periodMs)
  timer.unref()
  return {
    stop () {
      clearTimeout(/** @type {NodeJS.Timeout|undefined} */ (timer)) // null after a stop: a no-op
      timer = null
    }
  }
}

/**
 * A hold-up's two parts: `busyMs`, the process on a CPU (its own work or GC), and `waitingMs`,
 * the rest (the machine ran other processes).
 * @param {number} lateMs
 * @param {number} cpuMs
 * @returns {{ busyMs: number, waitingMs: number }}
 */
function splitHoldUp (lateMs, cpuMs) {
  const busyMs = Math.max(0, Math.min(lateMs, cpuMs))
  return { busyMs, waitingMs: lateMs - busyMs }
}

module.exports = { sampleEventLoop, splitHoldUp }
