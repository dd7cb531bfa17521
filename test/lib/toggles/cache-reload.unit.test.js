'use strict'

// cache.reload: a read past the cache for a caller that knows the id changed. A read already in
// flight may have started before the change: it is waited for, and the id read again. (The
// cache's other behaviour is tested against HBase in cache.test.js; the refetch that uses this
// runs against HBase in test/api/ofrep-stream.test.js.)

const { createConfigCache } = require('../../../lib/toggles/cache')
const { configEntry } = require('../../../lib/toggles/entry')

function deferredSource () {
  const reads = []
  return {
    reads,
    lookup (id) {
      return new Promise((resolve, reject) => reads.push({ id, resolve, reject }))
    }
  }
}

function cacheOver (source, outcomes = []) {
  return createConfigCache({
    source, max: 10, ttlMs: 60000, staleWhileRevalidateMs: 0, maxStaleMs: 60000, negativeTtlMs: 60000, onOutcome: (o) => outcomes.push(o)
  })
}

const entry = (v) => configEntry({ v }, String(v), true)
const tick = () => new Promise((resolve) => setImmediate(resolve))

test('a fresh entry is read again, and what the reload read is what lookups see after it', async () => {
  const source = deferredSource()
  const outcomes = []
  const cache = cacheOver(source, outcomes)
  const first = cache.lookup('7')
  await tick()
  source.reads[0].resolve(entry(1))
  expect(JSON.parse((await first).json)).toEqual({ v: 1 })
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 1 }) // a fresh hit

  const reloaded = cache.reload('7')
  await tick()
  expect(source.reads).toHaveLength(2)
  source.reads[1].resolve(entry(2))
  expect(JSON.parse((await reloaded).json)).toEqual({ v: 2 })
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 2 })
  expect(outcomes).toEqual(['miss', 'hit', 'miss', 'hit'])
})

test('a read in flight when the reload is asked for is not shared: the id is read again after it', async () => {
  const source = deferredSource()
  const cache = cacheOver(source)
  const early = cache.lookup('7') // started before the change
  await tick()
  const reloaded = cache.reload('7')
  await tick()
  expect(source.reads).toHaveLength(1)
  source.reads[0].resolve(entry(1)) // the old config
  expect(JSON.parse((await early).json)).toEqual({ v: 1 })
  await tick()
  expect(source.reads).toHaveLength(2)
  source.reads[1].resolve(entry(2))
  expect(JSON.parse((await reloaded).json)).toEqual({ v: 2 })
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 2 })
})

test('an early read that fails does not fail the reload; a failed reload rejects and keeps the old entry', async () => {
  const source = deferredSource()
  const cache = cacheOver(source)
  const seeded = cache.lookup('7')
  await tick()
  source.reads[0].resolve(entry(1))
  await seeded
  const reloaded = cache.reload('7')
  await tick()
  source.reads[1].reject(new Error('down'))
  await expect(reloaded).rejects.toThrow('down')
  expect(JSON.parse(cache.lookup('7').json)).toEqual({ v: 1 })

  const early = cache.reload('8')
  await tick()
  const later = cache.reload('8')
  source.reads[2].reject(new Error('down'))
  await expect(early).rejects.toThrow('down')
  await tick()
  source.reads[3].resolve(entry(3))
  expect(JSON.parse((await later).json)).toEqual({ v: 3 })
})
