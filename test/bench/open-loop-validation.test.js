'use strict'

// The generator's own cost and its view of a stalling server, against trivial servers. A timed
// check (a rate held, a p50 bound), so it runs in the main tier, in band, not beside the unit
// tier's parallel workers.

const { validateOpenLoop } = require('../../bench/validate-open-loop')

describe('open-loop generator, validated', () => {
  test('against trivial servers: own overhead well under 1 ms at p50; a 50 ms stall every 500 ms shows in p99, autocannon hides ' +
    'it', async () => {
    const r = await validateOpenLoop({ rate: 1000, durationMs: 2000 })
    // Every due request sent and answered, at the offered rate.
    expect(r.overhead.sent).toBe(2000)
    expect(r.overhead.ok).toBe(2000)
    expect(r.overhead.errors + r.overhead.unsent).toBe(0)
    expect(r.overhead.rps).toBeGreaterThan(950)
    // ~0.2 ms here; the bound leaves room for a loaded 2-core machine, still well under 1 ms.
    expect(r.overhead.p50).toBeLessThan(0.75)
    // ~10 % of the requests are due during a stall and wait up to 50 ms for it.
    expect(r.stall.openLoop.p99).toBeGreaterThan(r.stallMs / 2)
    expect(r.stall.openLoop.p99).toBeLessThan(r.stallMs * 4)
    expect(r.stall.autocannon.p99).toBeLessThan(r.stall.openLoop.p99 / 2)
  })
})
