'use strict'

const { setTimeout: sleep } = require('node:timers/promises')
const { createMetrics } = require('../../api/metrics')

/** The cumulative count of one bucket of the event-loop histogram in a /metrics text. */
function bucket (text, le) {
  const line = `beacon_event_loop_delay_seconds_bucket{le="${le}",process="w7"} `
  const found = text.split('\n').find((l) => l.startsWith(line))
  return found ? Number(found.slice(line.length)) : null
}

describe('the event-loop delay histogram of a process', () => {
  test('a loop held for 120 ms shows as a sample over 100 ms, under its tag; close() stops the sampling', async () => {
    const metrics = createMetrics({ collectDefault: false, processTag: 'w7' })
    try {
      await sleep(60)
      const before = await metrics.metrics()
      expect(bucket(before, '+Inf')).toBeGreaterThan(0)
      const slowBefore = bucket(before, '+Inf') - bucket(before, '0.05')

      const until = Date.now() + 120
      while (Date.now() < until) { /* hold the event loop, as a long synchronous task would */ }
      await sleep(30)

      const after = await metrics.metrics()
      // The timer was due at most 10 ms into the hold-up, so it ran at least 110 ms late: a sample
      // over 100 ms (more only if this machine held the process on its own meanwhile).
      expect(bucket(after, '+Inf') - bucket(after, '0.05') - slowBefore).toBeGreaterThanOrEqual(1)
      expect(bucket(after, '0.1') - bucket(before, '0.1')).toBeLessThan(bucket(after, '+Inf') - bucket(before, '+Inf'))

      metrics.close()
      const stopped = bucket(await metrics.metrics(), '+Inf')
      await sleep(40)
      expect(bucket(await metrics.metrics(), '+Inf')).toBe(stopped)
    } finally {
      metrics.close()
    }
  })

  test('no tag, no sampling: the family is not registered', async () => {
    const metrics = createMetrics({ collectDefault: false })
    expect(await metrics.metrics()).not.toMatch(/beacon_event_loop_delay_seconds/)
    metrics.close()
  })
})
