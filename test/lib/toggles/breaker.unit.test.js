'use strict'

const { createCircuitBreaker } = require('../../../lib/toggles/breaker')

test('opens after consecutive failures, fails fast, lets one trial through, closes on success', () => {
  const clock = { t: 0 }
  const states = []
  const b = createCircuitBreaker({ failureThreshold: 3, openMs: 1000, now: () => clock.t, onStateChange: (s) => states.push(s) })
  b.failure()
  b.failure()
  b.success() // a success resets the count
  b.failure()
  b.failure()
  expect(b.allow()).toBe(true)
  b.failure()
  expect(b.state).toBe('open')
  expect(b.allow()).toBe(false)
  clock.t += 999
  expect(b.allow()).toBe(false)
  clock.t += 1
  expect(b.allow()).toBe(true) // the trial
  expect(b.allow()).toBe(false) // only one at a time
  b.failure()
  expect(b.state).toBe('open')
  clock.t += 1000
  expect(b.allow()).toBe(true)
  b.success()
  expect(b.state).toBe('closed')
  expect(b.allow()).toBe(true)
  expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'closed'])
})
