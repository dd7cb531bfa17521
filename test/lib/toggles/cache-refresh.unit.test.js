'use strict'

// The cache's refresh of a stale entry is a background lookup (the source may hold it back to
// read it with others: hbase-source.js); a lookup that has to wait for that same refresh (the
// entry expired meanwhile, or a reload) hurries it.

const { createConfigCache } = require('../../../lib/toggles/cache')
const { configEntry } = require('../../../lib/toggles/entry')

function recordingSource () {
  const reads = []
  const hurried = []
  return {
    reads,
    hurried,
    lookup (id, opts) {
      return new Promise((resolve) => reads.push({ id, background: Boolean(opts && opts.background), resolve }))
    },
    hurry: (id) => hurried.push(id)
  }
}

const entry = (v) => configEntry({ v }, String(v), true)
const tick = () => new Promise((resolve) => setImmediate(resolve))

function cacheOver (source, clock) {
  return createConfigCache({
    source, max: 10, ttlMs: 1000, staleWhileRevalidateMs: 1000, maxStaleMs: 60000, negativeTtlMs: 1000, now: () => clock.now
  })
}

test('a miss reads at once; a stale hit serves the old entry and refreshes in the background', async () => {
  const clock = { now: 0 }
  const source = recordingSource()
  const cache = cacheOver(source, clock)
  const first = cache.lookup('7')
  await tick()
  expect(source.reads.map((r) => [r.id, r.background])).toEqual([['7', false]])
  source.reads[0].resolve(entry(1))
  await first
  clock.now = 1500 // stale
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 1 })
  await tick()
  expect(source.reads.map((r) => [r.id, r.background])).toEqual([['7', false], ['7', true]])
  source.reads[1].resolve(entry(2))
  await tick()
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 2 })
  expect(source.hurried).toEqual([])
})

test('a lookup that must wait for a background refresh hurries it; before the refresh is asked for, it goes as a foreground read', async () => {
  const clock = { now: 0 }
  const source = recordingSource()
  const cache = cacheOver(source, clock)
  const first = cache.lookup('7')
  await tick()
  source.reads[0].resolve(entry(1))
  await first

  clock.now = 1500
  cache.lookup('7') // stale: background refresh
  await tick()
  clock.now = 2500 // expired: this lookup waits, for the refresh in flight
  const waited = cache.lookup('7')
  expect(source.hurried).toEqual(['7'])
  source.reads[1].resolve(entry(2))
  expect(JSON.parse((await waited).json)).toEqual({ v: 2 })

  // Stale and expired in the same turn: the read is asked for after both, as a foreground one.
  clock.now = 4000
  cache.lookup('7')
  cache.invalidate('7')
  const again = cache.lookup('7')
  await tick()
  expect(source.reads.slice(2).map((r) => [r.id, r.background])).toEqual([['7', false]])
  expect(source.hurried).toEqual(['7', '7']) // (the second finds nothing queued in a real source)
  source.reads[2].resolve(entry(3))
  expect(JSON.parse((await again).json)).toEqual({ v: 3 })
})
