'use strict'

const fc = require('fast-check')
const { mergeSorted } = require('../../../logging/query/merge')
const { readAhead } = require('../../../logging/query/read-ahead')
const { compareRecords } = require('../../../logging/query/rows')

const tick = () => new Promise((resolve) => setImmediate(resolve))

/**
 * An async source over `items` that records what happened to it: how many items were pulled,
 * whether it was closed, and how many of its reads ran at once with other sources' (`world`).
 */
function source (items, { world = { inFlight: 0, overlapped: 0 }, slow = false, failAt = -1 } = {}) {
  const log = { pulled: 0, closed: false, started: false }
  async function * gen () {
    log.started = true
    try {
      for (let i = 0; i < items.length; i++) {
        if (slow) {
          if (world.inFlight > 0) world.overlapped++
          world.inFlight++
          await tick()
          world.inFlight--
        }
        if (i === failAt) throw new Error('source failed')
        log.pulled++
        yield items[i]
      }
    } finally {
      log.closed = true
    }
  }
  return { iterable: gen(), log }
}

const byNumber = (a, b) => a - b

async function collect (iterable, max = Infinity) {
  const out = []
  for await (const item of iterable) {
    out.push(item)
    if (out.length >= max) break
  }
  return out
}

describe('mergeSorted', () => {
  test('yields every item of sorted sources in order; empty sources are fine', async () => {
    const sources = [[1, 4, 9], [], [2, 3, 10, 11], [5], [0, 6, 7, 8]].map((items) => source(items).iterable)
    expect(await collect(mergeSorted(sources, byNumber))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(await collect(mergeSorted([], byNumber))).toEqual([])
  })

  test('any sorted sources: the result is their sorted union, equal items in source order', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 30 }), { maxLength: 12 }),
      async (lists) => {
        const tagged = lists.map((list, s) => list.slice().sort((a, b) => a - b).map((n, i) => ({ n, s, i })))
        const merged = await collect(mergeSorted(tagged.map((items) => source(items).iterable), (a, b) => a.n - b.n))
        const expected = tagged.flat().sort((a, b) => a.n - b.n || a.s - b.s || a.i - b.i)
        expect(merged).toEqual(expected)
      }
    ), { numRuns: 200 })
  })

  test('ties in time are broken by row key: access-log records from several buckets', async () => {
    const rec = (bucket, ts, suffix) => ({ ts, key: `${bucket}${String(ts).padStart(13, '0')}${suffix}`, entry: null })
    const buckets = [
      [rec('00', 5, 'b'), rec('00', 7, 'a')],
      [rec('01', 5, 'a'), rec('01', 6, 'z')],
      [rec('0f', 5, 'a'), rec('0f', 7, 'a')]
    ]
    const merged = await collect(mergeSorted(buckets.map((b) => source(b).iterable), compareRecords))
    expect(merged.map((r) => r.key)).toEqual([
      '000000000000005b', '010000000000005a', '0f0000000000005a', '010000000000006z', '000000000000007a', '0f0000000000007a'
    ])
  })

  test('every source is started before the first item is yielded', async () => {
    const sources = [source([1, 5]), source([2]), source([3])]
    const merged = mergeSorted(sources.map((s) => s.iterable), byNumber)
    expect((await merged.next()).value).toBe(1)
    expect(sources.map((s) => s.log.started)).toEqual([true, true, true])
    expect(sources.map((s) => s.log.pulled)).toEqual([1, 1, 1])
    await merged.return()
  })

  test('ending the loop early closes every source, and the merge ends only after they are closed', async () => {
    const sources = [source([1, 4, 7, 10]), source([2, 5, 8]), source([3, 6, 9]), source([])]
    expect(await collect(mergeSorted(sources.map((s) => s.iterable), byNumber), 4)).toEqual([1, 2, 3, 4])
    expect(sources.map((s) => s.log.closed)).toEqual([true, true, true, true])
    // Only what the merge needed was read: what it yielded, and the head of each source.
    expect(sources.map((s) => s.log.pulled)).toEqual([2, 2, 2, 0])
  })

  test('a failing source fails the merge and closes the others', async () => {
    const sources = [source([1, 3, 5]), source([2, 4, 6], { failAt: 1 }), source([0, 7])]
    await expect(collect(mergeSorted(sources.map((s) => s.iterable), byNumber))).rejects.toThrow('source failed')
    expect(sources.map((s) => s.log.closed)).toEqual([true, true, true])
  })
})

describe('readAhead', () => {
  test('passes every item through in order, and reads at most highWater ahead', async () => {
    const s = source(Array.from({ length: 50 }, (_, i) => i))
    const ahead = readAhead(s.iterable, 8)
    expect((await ahead.next()).value).toBe(0)
    for (let i = 0; i < 5; i++) await tick()
    // One taken, eight buffered, and no more.
    expect(s.log.pulled).toBe(9)
    const rest = await collect(ahead)
    expect(rest).toEqual(Array.from({ length: 49 }, (_, i) => i + 1))
    expect(s.log.closed).toBe(true)
  })

  test('a source error comes after the items read before it', async () => {
    const ahead = readAhead(source([1, 2, 3, 4], { failAt: 3 }).iterable, 10)
    const seen = []
    await expect((async () => { for await (const item of ahead) seen.push(item) })()).rejects.toThrow('source failed')
    expect(seen).toEqual([1, 2, 3])
  })

  test('return() closes the source, also while a read is in flight', async () => {
    const s = source([1, 2, 3, 4, 5], { slow: true })
    const ahead = readAhead(s.iterable, 2)
    expect((await ahead.next()).value).toBe(1)
    await ahead.return()
    expect(s.log.closed).toBe(true)
    expect(await ahead.next()).toEqual({ value: undefined, done: true })
  })

  test('in a merge, the sources read at once (the parallel scans of the buckets)', async () => {
    const world = { inFlight: 0, overlapped: 0 }
    const plain = { inFlight: 0, overlapped: 0 }
    const lists = Array.from({ length: 6 }, (_, s) => Array.from({ length: 40 }, (_, i) => i * 6 + s))
    const ahead = await collect(mergeSorted(lists.map((items) => readAhead(source(items, { world, slow: true }).iterable, 4)), byNumber))
    const direct = await collect(mergeSorted(lists.map((items) => source(items, { world: plain, slow: true }).iterable), byNumber))
    expect(ahead).toEqual(Array.from({ length: 240 }, (_, i) => i))
    expect(direct).toEqual(ahead)
    // Without read-ahead, past the first items (read together) the merge waits for one source
    // at a time; with it, reads overlap throughout.
    expect(plain.overlapped).toBe(5)
    expect(world.overlapped).toBeGreaterThan(100)
  })
})
