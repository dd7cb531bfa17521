'use strict'

// The generator's view of a stalling server, against trivial servers: it sends every due
// request, and a stall shows in its p99. Its latency bounds are
// relative to the stall it must see, since a second test lane shares the CPU; the rate it holds
// and its own overhead are `npm run bench:validate`'s figures.

const { validateOpenLoop } = require('../../bench/validate-open-loop')

describe('open-loop generator, validated', () => {
  test('against trivial servers: own p50 a tenth of a stall or less; a 50 ms stall every 500 ms shows in p99', async () => {
    const r = await validateOpenLoop({ rate: 1000, durationMs: 2000 })
    // Every due request sent and answered. (Whether it holds the rate depends on the machine's
    // share of CPU as much as on the generator: that is `npm run bench:validate`'s figure.)
    expect(r.overhead.sent).toBe(2000)
    expect(r.overhead.ok).toBe(2000)
    expect(r.overhead.errors + r.overhead.unsent).toBe(0)
    // Its own latency is small against what it measures (~0.2 ms on an idle machine; the figure
    // itself is `npm run bench:validate`'s): npm test shares the CPU with a second test lane.
    expect(r.overhead.p50).toBeLessThan(r.stallMs / 10)
    // ~10 % of the requests are due during a stall and wait up to 50 ms for it: the stall shows.
    expect(r.stall.openLoop.p99).toBeGreaterThan(r.stallMs / 2)
    // The rest are not charged for it: the generator catches up after each stall instead of
    // carrying its lag on. No upper bound on p99: how long the server then takes to drain the
    // requests queued behind a stall is the machine's share of CPU, not the generator's.
    expect(r.stall.openLoop.p50).toBeLessThan(r.stallMs / 2)
    // Autocannon, beside it, only ran: how much of a stall its p99 hides is a figure of
    // autocannon's (`npm run bench:validate`), not of this generator, and it is not a property at
    // all on a shared CPU. With 10 connections, at most 10 of its requests wait in each stall; a
    // p99 that hides them needs over 100 times as many requests per stall, 2,000 req/s here, and
    // beside a second test lane it made fewer (p99 176 ms against the open loop's 89, stop 31).
    expect(r.stall.autocannon.requests).toBeGreaterThan(0)
  })
})
