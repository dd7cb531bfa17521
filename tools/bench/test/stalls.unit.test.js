'use strict'

const { parseStalls, stallsDelta, stallsTable } = require('../lib/stalls')

/** A /metrics text with the two stall families, as the primary aggregates them. */
function text ({ w1, w2, minor, major, get, misses }) {
  const bounds = ['0.001', '0.005', '0.01', '0.05', '0.1', '+Inf']
  const family = (name, label, key, counts, sum) => [
    ...bounds.map((le, i) => `${name}_bucket{le="${le}",${label}="${key}"} ${counts[i]}`),
    `${name}_sum{${label}="${key}"} ${sum}`,
    `${name}_count{${label}="${key}"} ${counts[counts.length - 1]}`
  ]
  return [
    '# TYPE beacon_event_loop_delay_seconds histogram',
    ...family('beacon_event_loop_delay_seconds', 'process', 'w1', w1.counts, w1.sum),
    ...family('beacon_event_loop_delay_seconds', 'process', 'w2', w2.counts, w2.sum),
    'beacon_http_requests_total{endpoint="sample1",status="200"} 5',
    `beacon_event_loop_held_seconds_total{process="w1",part="busy"} ${w1.busy}`,
    `beacon_event_loop_held_seconds_total{part="waiting",process="w1"} ${w1.waiting}`,
    ...family('beacon_nodejs_gc_duration_seconds', 'kind', 'minor', minor.counts, minor.sum),
    ...family('beacon_nodejs_gc_duration_seconds', 'kind', 'major', major.counts, major.sum),
    ...family('beacon_hbase_rpc_duration_seconds', 'method', 'Get', get.counts, get.sum),
    'beacon_config_lookups_total{endpoint="sample3",outcome="hit"} 1000',
    `beacon_config_lookups_total{endpoint="sample3",outcome="miss"} ${misses}`,
    `beacon_config_lookups_total{endpoint="sample5",outcome="coalesced"} ${misses}`
  ].join('\n') + '\n'
}

const before = parseStalls(text({
  w1: { counts: [100, 100, 100, 100, 100, 100], sum: 0.01, busy: 0, waiting: 0.002 },
  w2: { counts: [90, 95, 100, 100, 100, 100], sum: 0.05 },
  minor: { counts: [10, 10, 10, 10, 10, 10], sum: 0.005 },
  major: { counts: [0, 0, 0, 0, 0, 0], sum: 0 },
  get: { counts: [5, 10, 10, 10, 10, 10], sum: 0.01 },
  misses: 10
}))
// Over the step: w1 ran 200 samples, two of them late by 5–10 ms and one by 50–100 ms; w2 one
// sample beyond the last bound; GC 20 minor pauses under 1 ms and one major of 5–10 ms; 4 lookups
// waited for HBase (2 misses, 2 joined), and of 4 Gets one took 10–50 ms and one 50–100 ms.
const after = parseStalls(text({
  w1: { counts: [297, 297, 299, 299, 300, 300], sum: 0.2, busy: 0.05, waiting: 0.032 },
  w2: { counts: [190, 195, 200, 200, 200, 201], sum: 0.5 },
  minor: { counts: [30, 30, 30, 30, 30, 30], sum: 0.012 },
  major: { counts: [0, 0, 1, 1, 1, 1], sum: 0.007 },
  get: { counts: [5, 12, 12, 13, 14, 14], sum: 0.12 },
  misses: 12
}))

describe('stalls: the server-side view of a step', () => {
  test('parseStalls reads the loop histogram by process, GC by kind, RPCs by method, the lookups that waited', () => {
    expect(Object.keys(before.loop)).toEqual(['w1', 'w2'])
    expect(Object.keys(before.rpc)).toEqual(['Get'])
    expect(before.waited).toBe(20)
    expect(Object.keys(before.gc)).toEqual(['minor', 'major'])
    expect(before.loop.w2.buckets.get(0.005)).toBe(95)
    expect(before.loop.w2.buckets.get(Infinity)).toBe(100)
    expect(before.loop.w2.count).toBe(100)
    expect(before.held).toEqual({ w1: { busy: 0, waiting: 0.002 } })
  })

  test('stallsDelta: per process the samples over 5, 10, 50 ms and the bound of the longest', () => {
    const d = stallsDelta(before, after)
    expect(d.loop.w1).toEqual({
      count: 200, ms: 190, over: { 5: 3, 10: 1, 50: 1 }, longestUpToMs: 100, heldMs: { busy: 50, waiting: 30 }
    })
    expect(d.loop.w2).toEqual({ count: 101, ms: 450, over: { 5: 1, 10: 1, 50: 1 }, longestUpToMs: null, longestOverMs: 100 })
    expect(d.gc).toMatchObject({ count: 21, ms: 14, over: { 5: 1, 10: 0, 50: 0 }, longestUpToMs: 10 })
    expect(Object.keys(d.gc.kinds)).toEqual(['minor', 'major'])
    expect(d.hbase.waited).toBe(4)
    expect(d.hbase.lookups).toEqual({ 'sample3 miss': 2, 'sample5 coalesced': 2 })
    expect(d.hbase.rpcs.Get).toMatchObject({ count: 4, over: { 5: 2, 10: 2, 50: 1 }, longestUpToMs: 100 })
    // A process that recorded nothing in the window (a worker that was not there) is left out.
    expect(Object.keys(stallsDelta(after, after).loop)).toEqual([])
    expect(stallsDelta(after, after).gc).toMatchObject({ count: 0, longestUpToMs: null })
  })

  test('stallsTable: a row per step, the generator\'s slow answers beside where they could have waited', () => {
    const generatorLoop = { count: 800, ms: 20, over: { 5: 2, 10: 1, 50: 0 }, longestUpToMs: 20, heldMs: { busy: 2, waiting: 11 } }
    const lines = stallsTable({
      'sample5 @ 4,000 req/s': {
        p99: 9.1,
        max: 61.2,
        fromSend: { p99: 4.2, max: 60.1 },
        slow: { overMs: 50, count: 3, afterSend: 1, firstOnConnection: 2 },
        generatorLoop,
        stalls: stallsDelta(before, after)
      },
      'sample1 @ 4,000 req/s': { p99: 2, max: 3, slow: { overMs: 50, count: 0, afterSend: 0, firstOnConnection: 0 }, stalls: null }
    })
    expect(lines).toHaveLength(4)
    expect(lines[2]).toBe('| sample5 @ 4,000 req/s | 9.1 / 61.2 | 4.2 / 60.1 | 3 (1 / 2) | 1 / 0, ≤ 20 (busy 2 / waiting 11 ms) | ' +
      'w1: 1 / 1, ≤ 100 (busy 50 / waiting 30 ms); w2: 1 / 1, > 100 | 21, 14 ms, 1 / 0, ≤ 10 | ' +
      '4 lookups; Get 4 (2 / 1) |')
    expect(lines[3]).toBe('| sample1 @ 4,000 req/s | 2 / 3 |  | 0 (0 / 0) |  | not read |  |  |')
  })
})
