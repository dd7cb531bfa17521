'use strict'

// Measured the way the scale bench measures it: in a process of its own, with a full GC before
// and after the fill. (In jest's worker there is no `gc`, and a collection during the fill made
// the heap's growth negative once.)

const { cacheMemory } = require('../lib/cache-memory')

test('a cache filled to its size holds that many entries and weighs something per entry', async () => {
  const [r] = await cacheMemory([2000])
  expect(r.entries).toBe(2000)
  expect(r.size).toBe(2000)
  expect(r.bytesPerEntry).toBeGreaterThan(0)
  expect(Number.isInteger(r.heapMiB) && Number.isInteger(r.rssMiB)).toBe(true)
})
