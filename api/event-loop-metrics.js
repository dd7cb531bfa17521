'use strict'

const client = require('prom-client')
const { performance } = require('node:perf_hooks')

const DELAY_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5]
const DEFAULT_EVERY_MS = 10
const HOLD_UP_MS = 10

/**
 * The event-loop delay of one process, as a Prometheus histogram labelled with the process's tag
 * (`w1`, `rollup`): a timer due every `everyMs` records how late it ran.
 *
 * prom-client's own lag gauges are percentiles since the last reset, and the cluster primary
 * averages them over the workers, which hides the one worker that stalled. A cumulative histogram
 * per process can be diffed between two scrapes, so a benchmark step or an incident gets its own
 * distribution and its longest hold-up (within a bucket; a hold-up shorter than `everyMs` may
 * be missed, a longer one is seen as up to `everyMs` shorter than it was).
 *
 * A hold-up (a sample over HOLD_UP_MS late) is also split by what the process did meanwhile:
 * `busy`, the CPU its threads used (its own synchronous work, or GC), and `waiting`, the rest (the
 * machine ran other processes: a CPU shortage, not beacon's code).
 *
 * @param {client.Registry} register
 * @param {{ processTag: string, everyMs?: number, now?: () => number,
 *   cpuUsage?: () => { user: number, system: number } }} options
 * @returns {{ stop: () => void }} stop: no more samples (the series stay)
 */
function watchEventLoop (register, {
  processTag, everyMs = DEFAULT_EVERY_MS, now = () => performance.now(), cpuUsage = () => process.cpuUsage()
}) {
  const histogram = new client.Histogram({
    name: 'beacon_event_loop_delay_seconds',
    help: `Event-loop delay by process: how late a timer due every ${everyMs} ms ran (a hold-up of the loop ` +
      'delays every request of that process by as much)',
    labelNames: ['process'],
    buckets: DELAY_BUCKETS,
    registers: [register]
  })
  const held = new client.Counter({
    name: 'beacon_event_loop_held_seconds_total',
    help: `Event-loop hold-ups (samples over ${HOLD_UP_MS} ms late) by process, split by what the process did meanwhile: ` +
      'busy (CPU its threads used: its own work or GC), waiting (the rest: the machine ran other processes)',
    labelNames: ['process', 'part'],
    registers: [register]
  })
  const series = histogram.labels({ process: processTag })
  const busy = held.labels({ process: processTag, part: 'busy' })
  const waiting = held.labels({ process: processTag, part: 'waiting' })
  busy.inc(0)
  waiting.inc(0)
  let dueAt = now() + everyMs
  let lastCpu = cpuUsage()
  let timer = null
  const tick = () => {
    const at = now()
    const cpu = cpuUsage()
    const lateMs = Math.max(0, at - dueAt)
    series.observe(lateMs / 1000)
    if (lateMs > HOLD_UP_MS) {
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000
      const busyMs = Math.min(lateMs, cpuMs)
      busy.inc(busyMs / 1000)
      waiting.inc((lateMs - busyMs) / 1000)
    }
    lastCpu = cpu
    dueAt = at + everyMs
    timer = setTimeout(tick, everyMs)
    timer.unref()
  }
  timer = setTimeout(tick, everyMs)
  timer.unref()
  return {
    stop () {
      clearTimeout(timer)
      timer = null
    }
  }
}

module.exports = { watchEventLoop }
