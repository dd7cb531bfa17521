'use strict'

const { parseStalls, stallsDelta, stallsTable } = require('../../bench/lib/stalls')

/** A /metrics text with the two stall families, as the primary aggregates them. */
function text ({ w1, w2, minor, major }) {
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
    ...family('beacon_nodejs_gc_duration_seconds', 'kind', 'minor', minor.counts, minor.sum),
    ...family('beacon_nodejs_gc_duration_seconds', 'kind', 'major', major.counts, major.sum)
  ].join('\n') + '\n'
}

const before = parseStalls(text({
  w1: { counts: [100, 100, 100, 100, 100, 100], sum: 0.01 },
  w2: { counts: [90, 95, 100, 100, 100, 100], sum: 0.05 },
  minor: { counts: [10, 10, 10, 10, 10, 10], sum: 0.005 },
  major: { counts: [0, 0, 0, 0, 0, 0], sum: 0 }
}))
// Over the step: w1 ran 200 samples, two of them late by 5–10 ms and one by 50–100 ms; w2 one
// sample beyond the last bound; GC 20 minor pauses under 1 ms and one major of 5–10 ms.
const after = parseStalls(text({
  w1: { counts: [297, 297, 299, 299, 300, 300], sum: 0.2 },
  w2: { counts: [190, 195, 200, 200, 200, 201], sum: 0.5 },
  minor: { counts: [30, 30, 30, 30, 30, 30], sum: 0.012 },
  major: { counts: [0, 0, 1, 1, 1, 1], sum: 0.007 }
}))

describe('stalls: the server-side view of a step', () => {
  test('parseStalls reads the loop histogram by process and the GC one by kind, nothing else', () => {
    expect(Object.keys(before.loop)).toEqual(['w1', 'w2'])
    expect(Object.keys(before.gc)).toEqual(['minor', 'major'])
    expect(before.loop.w2.buckets.get(0.005)).toBe(95)
    expect(before.loop.w2.buckets.get(Infinity)).toBe(100)
    expect(before.loop.w2.count).toBe(100)
  })

  test('stallsDelta: per process the samples over 5, 10, 50 ms and the bound of the longest', () => {
    const d = stallsDelta(before, after)
    expect(d.loop.w1).toEqual({ count: 200, ms: 190, over: { 5: 3, 10: 1, 50: 1 }, longestUpToMs: 100 })
    expect(d.loop.w2).toEqual({ count: 101, ms: 450, over: { 5: 1, 10: 1, 50: 1 }, longestUpToMs: null, longestOverMs: 100 })
    expect(d.gc).toMatchObject({ count: 21, ms: 14, over: { 5: 1, 10: 0, 50: 0 }, longestUpToMs: 10 })
    expect(Object.keys(d.gc.kinds)).toEqual(['minor', 'major'])
    // A process that recorded nothing in the window (a worker that was not there) is left out.
    expect(Object.keys(stallsDelta(after, after).loop)).toEqual([])
    expect(stallsDelta(after, after).gc).toMatchObject({ count: 0, longestUpToMs: null })
  })

  test('stallsTable: a row per step, the generator\'s slow answers beside the server\'s view', () => {
    const lines = stallsTable({
      'sample5 @ 4,000 req/s': { max: 61.2, slow: { overMs: 50, count: 3, afterSend: 1 }, stalls: stallsDelta(before, after) },
      'sample1 @ 4,000 req/s': { max: 3, slow: { overMs: 50, count: 0, afterSend: 0 }, stalls: null }
    })
    expect(lines).toHaveLength(4)
    expect(lines[2]).toBe('| sample5 @ 4,000 req/s | 61.2 | 3 (1) | w1: 1 / 1, ≤ 100; w2: 1 / 1, > 100 | 21, 14, 1 / 0, ≤ 10 |')
    expect(lines[3]).toBe('| sample1 @ 4,000 req/s | 3 | 0 (0) | not read |  |')
  })
})
