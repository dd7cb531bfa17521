'use strict'

// The event loop's delay, and how much of its longest hold-up was this process at work rather
// than waiting for a CPU (a soak beside a test run on 2 cores): api/metrics/event-loop-sampler.js weighs
// each tick's lateness against the CPU the process burned meanwhile.

const { monitorEventLoopDelay } = require('node:perf_hooks')
const { sampleEventLoop, splitHoldUp } = require('../../api/metrics/event-loop-sampler')

/**
 * @param {{ resolution?: number }} [options] ms between ticks
 * @returns {{ enable: () => void, disable: () => void, readonly max: number, percentile: (p: number) => number,
 *   readonly lateMaxMs: number, readonly busyMaxMs: number }} max and percentile as
 *   monitorEventLoopDelay's (ns); lateMaxMs: the longest hold-up of this monitor's own timer, and
 *   busyMaxMs: the largest part of a hold-up with the process on a CPU, ms
 */
function monitorLoopStalls ({ resolution = 10 } = {}) {
  const delay = monitorEventLoopDelay({ resolution })
  let sampler = null
  let busyMaxMs = 0
  let lateMaxMs = 0
  const onSample = (/** @type {number} */ lateMs, /** @type {number} */ cpuMs) => {
    lateMaxMs = Math.max(lateMaxMs, lateMs)
    busyMaxMs = Math.max(busyMaxMs, splitHoldUp(lateMs, cpuMs).busyMs)
  }
  return {
    enable () {
      delay.enable()
      sampler = sampleEventLoop({ everyMs: resolution, onSample })
    },
    disable () {
      delay.disable()
      if (sampler) sampler.stop()
      sampler = null
    },
    get max () { return delay.max },
    percentile: (p) => delay.percentile(p),
    get lateMaxMs () { return lateMaxMs },
    get busyMaxMs () { return busyMaxMs }
  }
}

module.exports = { monitorLoopStalls }
