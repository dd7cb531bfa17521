'use strict'

const { sampleEventLoop, splitHoldUp } = require('../../api/metrics/event-loop-sampler')

describe('the event-loop sampler', () => {
  beforeEach(() => jest.useFakeTimers())
  afterEach(() => jest.useRealTimers())

  /** Runs a sampler on fake time for `ms`, the loop active as `busy()` says (ms); the gaps between ticks. */
  function gapsOver (ms, busy, { everyMs = 10, idleEveryMs = 80 } = {}) {
    const at = []
    const sampler = sampleEventLoop({
      everyMs,
      idleEveryMs,
      now: () => Date.now(),
      cpuUsage: () => ({ user: 0, system: 0 }),
      activeMs: () => busy(Date.now()),
      onSample: () => at.push(Date.now())
    })
    jest.advanceTimersByTime(ms)
    sampler.stop()
    return at.map((t, i) => t - (i ? at[i - 1] : at[0] - everyMs))
  }

  test('ticks every everyMs while the loop works', () => {
    expect(gapsOver(100, () => 3)).toEqual(Array(10).fill(10))
  })

  test('an idle loop is ticked ever less often, down to idleEveryMs; work brings the period back at once', () => {
    const start = Date.now()
    // Idle for the first 380 ms, then busy: ticks at 10, 30, 70, 150, 230, 310, 390, then every 10 ms.
    const gaps = gapsOver(500, (now) => (now - start < 380 ? 0.5 : 2))
    expect(gaps.slice(0, 6)).toEqual([10, 20, 40, 80, 80, 80])
    expect(gaps.slice(6)).toEqual([80, ...Array(11).fill(10)])
  })

  test("a hold-up's lateness is busy up to the CPU used, waiting for the rest", () => {
    expect(splitHoldUp(100, 30)).toEqual({ busyMs: 30, waitingMs: 70 })
    expect(splitHoldUp(100, 250)).toEqual({ busyMs: 100, waitingMs: 0 })
  })
})
