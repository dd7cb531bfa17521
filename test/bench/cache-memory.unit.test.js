'use strict'

const { fill } = require('../../bench/lib/cache-memory')

test('a cache filled to its size holds that many entries and weighs something per entry', async () => {
  const r = await fill(2000)
  expect(r.entries).toBe(2000)
  expect(r.size).toBe(2000)
  expect(r.bytesPerEntry).toBeGreaterThan(0)
  expect(Number.isInteger(r.heapMiB) && Number.isInteger(r.rssMiB)).toBe(true)
})
