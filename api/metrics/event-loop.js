'use strict'

const client = require('prom-client')
const { sampleEventLoop, splitHoldUp } = require('./event-loop-sampler')

const DELAY_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5]
const DEFAULT_EVERY_MS = 10
const DEFAULT_IDLE_EVERY_MS = 100
const HOLD_UP_MS = 10

/**
 * The event-loop delay of one process, as a Prometheus histogram labelled with the process's tag
 * (`w1`, `rollup`): a timer due every `everyMs` records how late it ran.
 *
 * prom-client's own lag gauges are percentiles since the last reset, and the cluster primary
 * averages them over the workers, which hides the one worker that stalled. A cumulative histogram
 * per process can be diffed between two scrapes, so a benchmark step or an incident gets its own
 * distribution and its longest hold-up (within a bucket; a hold-up shorter than `everyMs` may
 * be missed, a longer one is seen as up to `everyMs` shorter than it was). While the process is
 * idle the timer backs off to `idleEveryMs` (event-loop-sampler.js): an idle loop holds nothing up.
 *
 * A hold-up (a sample over HOLD_UP_MS late) is also split by what the process did meanwhile:
 * `busy`, the CPU its threads used (its own synchronous work, or GC), and `waiting`, the rest (the
 * machine ran other processes: a CPU shortage, not beacon's code).
 *
 * @param {client.Registry} register
 * @param {{ processTag: string, everyMs?: number, idleEveryMs?: number, now?: () => number, activeMs?: () => number,
 *   cpuUsage?: () => { user: number, system: number } }} options
 * @returns {{ stop: () => void }} stop: no more samples (the series stay)
 */
function watchEventLoop (register, {
  processTag, everyMs = DEFAULT_EVERY_MS, idleEveryMs = DEFAULT_IDLE_EVERY_MS, now, cpuUsage, activeMs
}) {
  const histogram = new client.Histogram({
    name: 'beacon_event_loop_delay_seconds',
    help: `Event-loop delay by process: how late a timer due every ${everyMs} ms (${idleEveryMs} ms while idle) ran ` +
      '(a hold-up of the loop delays every request of that process by as much)',
    labelNames: ['process'],
    buckets: DELAY_BUCKETS,
    registers: [register]
  })
  const held = new client.Counter({
    name: 'beacon_event_loop_held_seconds_total',
    help: `Event-loop hold-ups (samples over ${HOLD_UP_MS} ms late) by process, ` +
      'split by what the process did meanwhile: ' +
      'busy (CPU its threads used: its own work or GC), waiting (the rest: the machine ran other processes)',
    labelNames: ['process', 'part'],
    registers: [register]
  })
  const series = histogram.labels({ process: processTag })
  const busy = held.labels({ process: processTag, part: 'busy' })
  const waiting = held.labels({ process: processTag, part: 'waiting' })
  busy.inc(0)
  waiting.inc(0)
  return sampleEventLoop({
    everyMs,
    idleEveryMs,
    now,
    cpuUsage,
    activeMs,
    onSample (lateMs, cpuMs) {
      series.observe(lateMs / 1000)
      if (lateMs <= HOLD_UP_MS) return
      const { busyMs, waitingMs } = splitHoldUp(lateMs, cpuMs)
      busy.inc(busyMs / 1000)
      waiting.inc(waitingMs / 1000)
    }
  })
}

module.exports = { watchEventLoop }
