'use strict'

const { setTimeout: sleep } = require('node:timers/promises')
const client = require('prom-client')
const { createMetrics } = require('../../api/metrics')
const { watchEventLoop } = require('../../api/metrics/event-loop')

/** The busy and waiting parts of the hold-ups in a /metrics text, in seconds. */
function held (text, tag) {
  const part = (name) => {
    const line = `beacon_event_loop_held_seconds_total{process="${tag}",part="${name}"} `
    return Number(text.split('\n').find((l) => l.startsWith(line)).slice(line.length))
  }
  return { busy: part('busy'), waiting: part('waiting') }
}

/** Holds the event loop for `ms` of wall time, as a long synchronous task would. */
function holdLoop (ms) {
  const until = Date.now() + ms
  while (Date.now() < until) { /* busy */ }
}

/** The cumulative count of one bucket of the event-loop histogram in a /metrics text. */
function bucket (text, le) {
  const line = `beacon_event_loop_delay_seconds_bucket{le="${le}",process="w7"} `
  const found = text.split('\n').find((l) => l.startsWith(line))
  return found ? Number(found.slice(line.length)) : null
}

describe('the event-loop delay histogram of a process', () => {
  test('a loop held for 250 ms shows as a sample over 100 ms, under its tag; close() stops the sampling', async () => {
    const metrics = createMetrics({ collectDefault: false, processTag: 'w7' })
    try {
      await sleep(60)
      const before = await metrics.metrics()
      expect(bucket(before, '+Inf')).toBeGreaterThan(0)
      const slowBefore = bucket(before, '+Inf') - bucket(before, '0.05')

      const heldBefore = held(before, 'w7')
      holdLoop(250)
      await sleep(30)

      const after = await metrics.metrics()
      // The timer was due at most 100 ms (its period while idle) into the hold-up, so it ran at least
      // 150 ms late: a sample over 100 ms (more if this machine held the process meanwhile).
      expect(bucket(after, '+Inf') - bucket(after, '0.05') - slowBefore).toBeGreaterThanOrEqual(1)
      expect(bucket(after, '0.1') - bucket(before, '0.1')).toBeLessThan(bucket(after, '+Inf') - bucket(before, '+Inf'))
      // The hold-up's lateness is split in two parts; a busy loop used some CPU (all of it unless
      // this machine ran other processes meanwhile).
      const heldAfter = held(after, 'w7')
      const busy = heldAfter.busy - heldBefore.busy
      expect(busy + heldAfter.waiting - heldBefore.waiting).toBeGreaterThanOrEqual(0.15)
      expect(busy).toBeGreaterThan(0)

      metrics.close()
      const stopped = bucket(await metrics.metrics(), '+Inf')
      await sleep(40)
      expect(bucket(await metrics.metrics(), '+Inf')).toBe(stopped)
    } finally {
      metrics.close()
    }
  })

  test('a hold-up is busy when the process used the CPU meanwhile, waiting when it did not', async () => {
    // Process CPU as this test declares it: all of the wall time, or none of it.
    for (const [name, cpuUsage] of [
      ['busy', () => ({ user: performance.now() * 1000, system: 0 })],
      ['waiting', () => ({ user: 0, system: 0 })]
    ]) {
      const register = new client.Registry()
      const watch = watchEventLoop(register, { processTag: name, cpuUsage, activeMs: () => 5 })
      try {
        await sleep(30)
        const before = held(await register.metrics(), name)
        holdLoop(80)
        await sleep(30)
        const after = held(await register.metrics(), name)
        const other = name === 'busy' ? 'waiting' : 'busy'
        expect(after[name] - before[name]).toBeGreaterThanOrEqual(0.07)
        expect(after[other] - before[other]).toBe(0)
      } finally {
        watch.stop()
      }
    }
  })

  test('no tag, no sampling: the family is not registered', async () => {
    const metrics = createMetrics({ collectDefault: false })
    expect(await metrics.metrics()).not.toMatch(/beacon_event_loop_(delay|held)_seconds/)
    metrics.close()
  })
})
