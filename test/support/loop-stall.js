'use strict'

// The event loop's delay, and how much of its longest hold-up was this process at work rather
// than waiting for a CPU. A timer's lateness measures both: a synchronous task that runs for a
// second, and a second in which a loaded machine (a soak beside a test run on 2 cores) ran other
// processes. Each gap between two ticks is weighed against the CPU the process burned in it
// (process.cpuUsage(): all its threads); a gap with as much CPU as wall time was work of its own.

const { monitorEventLoopDelay } = require('node:perf_hooks')

/**
 * @param {{ resolution?: number }} [options] ms between ticks
 * @returns {{ enable: () => void, disable: () => void, readonly max: number, percentile: (p: number) => number,
 *   readonly lateMaxMs: number, readonly busyMaxMs: number }} max and percentile as
 *   monitorEventLoopDelay's (ns); lateMaxMs: the longest hold-up of this monitor's own timer, and
 *   busyMaxMs: the largest part of a hold-up with the process on a CPU, ms
 */
function monitorLoopStalls ({ resolution = 10 } = {}) {
  const delay = monitorEventLoopDelay({ resolution })
  let timer = null
  let lastAt = 0
  let lastCpu = process.cpuUsage()
  let busyMaxMs = 0
  let lateMaxMs = 0
  const tick = () => {
    const now = performance.now()
    const cpu = process.cpuUsage()
    const lateMs = now - lastAt - resolution
    const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000
    lateMaxMs = Math.max(lateMaxMs, lateMs)
    busyMaxMs = Math.max(busyMaxMs, Math.min(lateMs, cpuMs))
    lastAt = now
    lastCpu = cpu
  }
  return {
    enable () {
      delay.enable()
      lastAt = performance.now()
      lastCpu = process.cpuUsage()
      timer = setInterval(tick, resolution)
    },
    disable () {
      delay.disable()
      if (timer) clearInterval(timer)
      timer = null
    },
    get max () { return delay.max },
    percentile: (p) => delay.percentile(p),
    get lateMaxMs () { return lateMaxMs },
    get busyMaxMs () { return busyMaxMs }
  }
}

module.exports = { monitorLoopStalls }
