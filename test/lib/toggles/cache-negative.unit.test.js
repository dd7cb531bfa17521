'use strict'

// Unknown ids in the config cache (lib/toggles/cache.js) live in an LRU of their own, at most
// maxNegative: a flood of random ids evicts only other unknown ids, never the known ones real
// traffic reads; an id that gains (or loses) its config moves across. (The same over the real
// HBase: test/lib/toggles/cache.test.js.)

const { createConfigCache } = require('../../../lib/toggles/cache')
const { configEntry } = require('../../../lib/toggles/entry')

function countingSource (knownIds) {
  const reads = []
  return {
    reads,
    lookup (id) {
      reads.push(id)
      return knownIds.has(id) ? configEntry({ id }, JSON.stringify({ id }), true) : configEntry({}, '{}', false)
    }
  }
}

const settings = { max: 100, ttlMs: 60000, staleWhileRevalidateMs: 60000, maxStaleMs: 600000, negativeTtlMs: 60000, now: () => 0 }

test('a flood of unknown ids never evicts a known one; the unknown ones are held to maxNegative', async () => {
  const known = new Set(Array.from({ length: 90 }, (_, i) => `k${i}`))
  const source = countingSource(known)
  const cache = createConfigCache({ source, ...settings, maxNegative: 10 })
  for (const id of known) await cache.lookup(id)
  for (let i = 0; i < 10000; i++) await cache.lookup(`bot-${i}`)
  const before = source.reads.length
  for (const id of known) expect(cache.lookup(id).found).toBe(true) // synchronous: still cached
  expect(source.reads.length).toBe(before)
  expect(cache.stats()).toMatchObject({ size: 100, negativeSize: 10 })
  // The last ten unknown ids are still negative hits.
  for (let i = 9990; i < 10000; i++) expect(cache.lookup(`bot-${i}`).found).toBe(false)
  expect(source.reads.length).toBe(before)
})

test('the default share is a tenth of max; an id that gains its config moves to the known ones, and back', async () => {
  const known = new Set()
  const source = countingSource(known)
  const cache = createConfigCache({ source, ...settings })
  for (let i = 0; i < 50; i++) await cache.lookup(`u${i}`)
  expect(cache.stats()).toMatchObject({ size: 10, negativeSize: 10 })
  known.add('u49')
  cache.invalidate('u49')
  expect((await cache.lookup('u49')).found).toBe(true)
  expect(cache.stats()).toMatchObject({ size: 10, negativeSize: 9 })
  known.delete('u49')
  expect((await cache.reload('u49')).found).toBe(false)
  expect(cache.stats()).toMatchObject({ size: 10, negativeSize: 10 })
  cache.clear()
  expect(cache.stats()).toMatchObject({ size: 0, negativeSize: 0 })
})
