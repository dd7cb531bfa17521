'use strict'

// The known-id filter's states over a store whose scan the test paces (the same filter over the
// real HBase: test/lib/toggles/known-ids.test.js).

const { createKnownIds } = require('../../../lib/toggles/known-ids')

/** A store whose scan yields `rows` in pages, each page when the test says (or at once). */
function pacedStore (rows, { pageSize = 2, paced = false } = {}) {
  const gates = []
  const store = {
    scans: 0,
    fail: null,
    rows,
    async * scanIds () {
      store.scans++
      if (store.fail) throw store.fail
      for (let i = 0; i < store.rows.length; i += pageSize) {
        if (paced) await new Promise((resolve) => gates.push(resolve))
        yield store.rows.slice(i, i + pageSize)
      }
    },
    /** Lets the scan under way read its next page. */
    nextPage: () => gates.shift()(),
    waiting: () => gates.length
  }
  return store
}

const settle = () => new Promise((resolve) => setImmediate(resolve))
const logger = () => ({ warned: [], info () {}, warn (obj, msg) { this.warned.push(msg) } })

test('before its first scan every id may exist; after it, only those with a row', async () => {
  const known = createKnownIds({ store: pacedStore(['1', '2', '3']), rescanMs: 60000 })
  expect(known.mayExist('anything')).toBe(true)
  expect(known.stats()).toMatchObject({ ready: false, ids: 0, ageMs: null })
  await known.scan()
  expect(['1', '2', '3'].map(known.mayExist)).toEqual([true, true, true])
  expect(known.mayExist('new-visitor')).toBe(false)
  expect(known.stats()).toMatchObject({ ready: true, ids: 3, skipped: 1, scans: 1, lastScanIds: 3 })
})

test('an id added while a scan runs is kept by the filter that scan builds', async () => {
  const store = pacedStore(['a', 'b', 'c', 'd'], { paced: true })
  const known = createKnownIds({ store, rescanMs: 60000 })
  const scanned = known.scan()
  await settle()
  store.nextPage() // a, b read
  await settle()
  known.add('a2') // its row is after the scan's place: the scan never sees it
  store.nextPage()
  await scanned
  expect(known.mayExist('a2')).toBe(true)
  expect(known.mayExist('zz')).toBe(false)
})

test('a scan that fails keeps the last filter, and is warned once per failing stretch', async () => {
  const store = pacedStore(['x'])
  const log = logger()
  const known = createKnownIds({ store, rescanMs: 60000, logger: log })
  store.fail = Object.assign(new Error('down'), { code: 'HBASE_UNAVAILABLE' })
  await known.scan()
  expect(known.mayExist('y')).toBe(true) // no filter yet: every id is read
  await known.scan()
  expect(log.warned).toEqual(['cannot scan the config ids; reading every id'])
  store.fail = null
  await known.scan()
  expect(known.mayExist('y')).toBe(false)
  store.fail = new Error('down again')
  store.rows = ['x', 'y']
  await known.scan()
  expect(known.mayExist('y')).toBe(false) // the last good scan stands
  expect(log.warned).toEqual(['cannot scan the config ids; reading every id', 'cannot scan the config ids; keeping the last scan'])
  expect(known.stats()).toMatchObject({ scans: 1, scanFailures: 3 })
})

test('a scan asked for while one runs joins it; stop() ends a scan at its next page', async () => {
  const store = pacedStore(['a', 'b', 'c', 'd'], { paced: true })
  const known = createKnownIds({ store, rescanMs: 60000 })
  const first = known.scan()
  expect(known.scan()).toBe(first)
  await settle()
  store.nextPage()
  await settle()
  const stopped = known.stop()
  store.nextPage()
  await stopped
  expect(store.scans).toBe(1)
  expect(known.stats().ready).toBe(false) // a scan cut short builds nothing
})

test('rescans every rescanMs after the last ended, never sooner than ten times a scan', async () => {
  jest.useFakeTimers()
  try {
    const clock = { t: 0 }
    const store = pacedStore(['a'])
    const slow = store.scanIds
    store.scanIds = async function * () {
      clock.t += 3000 // a scan that takes 3 s of the clock
      yield * slow()
    }
    const known = createKnownIds({ store, rescanMs: 10000, now: () => clock.t })
    await known.start()
    expect(store.scans).toBe(1)
    await jest.advanceTimersByTimeAsync(29999)
    expect(store.scans).toBe(1)
    await jest.advanceTimersByTimeAsync(1)
    expect(store.scans).toBe(2)
    store.rows = ['a', 'b']
    await jest.advanceTimersByTimeAsync(30000)
    expect(store.scans).toBe(3)
    expect(known.mayExist('b')).toBe(true)
    await known.stop()
    await jest.advanceTimersByTimeAsync(120000)
    expect(store.scans).toBe(3)
  } finally {
    jest.useRealTimers()
  }
})
