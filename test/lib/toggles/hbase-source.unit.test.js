'use strict'

// The HBase source's request deadline counts from the lookup, not from when its read is sent:
// a lookup queued behind slow reads gets what is left of its time, or fails fast. The store is a
// stand-in whose reads settle when the test says (the real slow HBase: test/faults/hbase-slow).

const { createHBaseSource } = require('../../../lib/toggles/hbase-source')

function controlledStore (timeoutMs) {
  const reads = []
  const read = (ids, opts) => new Promise((resolve) => reads.push({ ids, timeoutMs: opts && opts.timeoutMs, resolve }))
  return {
    reads,
    store: {
      timeoutMs,
      read: (id, opts) => read([id], opts).then((rows) => rows[0]),
      readMany: (ids, opts) => read(ids, opts)
    }
  }
}

afterEach(() => jest.useRealTimers())
// Fake timers: advance `ms`, then 1 ms more, since an immediate that a timer queues at the end of an advance runs in the next.
const advanceAndTurn = async (ms) => {
  await jest.advanceTimersByTimeAsync(ms)
  await jest.advanceTimersByTimeAsync(1)
}

const row = (n) => ({ toggles: { n }, version: `v${n}`, timestamp: n })
// Two event-loop turns: the read settles, then the source sends what queued behind it.
const turn = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve))
}

test('a lookup queued behind a read in flight is read with what is left of its deadline', async () => {
  let clock = 0
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, maxInFlight: 1, now: () => clock })
  const first = source.lookup('1')
  await turn()
  expect(reads).toHaveLength(1)
  expect(reads[0].timeoutMs).toBe(1500)

  const second = source.lookup('2') // queued at t=0: the only read slot is taken
  await turn()
  clock = 1200
  reads[0].resolve([row(1)])
  expect((await first).json).toBe(JSON.stringify({ n: 1 }))
  await turn()
  expect(reads).toHaveLength(2)
  expect(reads[1].timeoutMs).toBe(300)
  reads[1].resolve([row(2)])
  expect((await second).json).toBe(JSON.stringify({ n: 2 }))
})

test('a lookup whose deadline passed while it queued fails with LOOKUP_TIMEOUT and sends nothing', async () => {
  let clock = 0
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, maxInFlight: 1, now: () => clock })
  const first = source.lookup('1')
  await turn()
  const late = source.lookup('2')
  await turn()
  clock = 1495
  reads[0].resolve([row(1)])
  await first
  await expect(late).rejects.toMatchObject({ code: 'LOOKUP_TIMEOUT', statusCode: 503 })
  await turn()
  expect(reads).toHaveLength(1)
})

test('a store without a deadline of its own leaves the read to the client default', async () => {
  const { store, reads } = controlledStore(undefined)
  const source = createHBaseSource({ store, defaultConfig: {}, now: () => 0 })
  const done = source.lookup('7')
  await turn()
  expect(reads[0].timeoutMs).toBeUndefined()
  reads[0].resolve([row(7)])
  expect((await done).json).toBe(JSON.stringify({ n: 7 }))
})

test('rows that fail while the rest of a multi-get is read fail alone: the breaker stays closed', async () => {
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, now: () => 0 })
  const regionDown = Object.assign(new Error('region in transition'), { code: 'HBASE_TIMEOUT', retryable: true })
  for (let round = 0; round < 5; round++) {
    const ok = source.lookup('1')
    const down = source.lookup('7')
    await turn()
    reads[reads.length - 1].resolve([row(1), regionDown])
    expect((await ok).json).toBe(JSON.stringify({ n: 1 }))
    await expect(down).rejects.toBe(regionDown)
  }
  expect(source.breaker.allow()).toBe(true)

  // A read in which every row failed is the store not answering: three of those open it.
  for (let round = 0; round < 3; round++) {
    const a = source.lookup('1')
    const b = source.lookup('7')
    await turn()
    reads[reads.length - 1].resolve([regionDown, regionDown])
    await expect(a).rejects.toBe(regionDown)
    await expect(b).rejects.toBe(regionDown)
  }
  await expect(source.lookup('1')).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' })
})

test('with lingerMs, ids asked for in separate turns within the wait go out in one multi-get', async () => {
  const { store, reads } = controlledStore(1500)
  jest.useFakeTimers()
  const source = createHBaseSource({ store, defaultConfig: {}, lingerMs: 30, now: () => Date.now() })
  const lookups = [source.lookup('1')]
  await jest.advanceTimersByTimeAsync(10)
  expect(reads).toHaveLength(0) // the first id waits for company
  lookups.push(source.lookup('2'))
  await jest.advanceTimersByTimeAsync(19)
  lookups.push(source.lookup('3'))
  expect(reads).toHaveLength(0)
  await advanceAndTurn(1)
  expect(reads).toHaveLength(1)
  expect(reads[0].ids).toEqual(['1', '2', '3'])
  reads[0].resolve([row(1), row(2), row(3)])
  expect((await Promise.all(lookups)).map((e) => e.json)).toEqual([1, 2, 3].map((n) => JSON.stringify({ n })))
})

test('without lingerMs, ids asked for in separate turns go out in separate reads', async () => {
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {} })
  const first = source.lookup('1')
  await turn()
  const second = source.lookup('2')
  await turn()
  expect(reads.map((r) => r.ids)).toEqual([['1'], ['2']])
  reads[0].resolve([row(1)])
  reads[1].resolve([row(2)])
  await Promise.all([first, second])
})

test('background lookups wait refreshLingerMs and go in one multi-get, with the full deadline from when they are sent', async () => {
  // Fake timers: the refresh wait is a real timer, and a real sleep past it races the setImmediate that sends the read.
  jest.useFakeTimers()
  let clock = 0
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, refreshLingerMs: 30, now: () => clock })
  const lookups = [source.lookup('1', { background: true })]
  await jest.advanceTimersByTimeAsync(10)
  lookups.push(source.lookup('2', { background: true }))
  await jest.advanceTimersByTimeAsync(19)
  expect(reads).toHaveLength(0)
  clock = 30
  await advanceAndTurn(1)
  expect(reads.map((r) => [r.ids, r.timeoutMs])).toEqual([[['1', '2'], 1500]])
  reads[0].resolve([row(1), row(2)])
  expect((await Promise.all(lookups)).map((e) => e.json)).toEqual([1, 2].map((n) => JSON.stringify({ n })))
})

test('a lookup someone waits on takes the waiting background ones along at once; hurry sends a queued one at once', async () => {
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, refreshLingerMs: 10000 })
  const background = source.lookup('1', { background: true })
  await turn()
  const waited = source.lookup('2')
  await turn()
  expect(reads.map((r) => r.ids)).toEqual([['1', '2']])
  reads[0].resolve([row(1), row(2)])
  await Promise.all([background, waited])

  const queued = source.lookup('3', { background: true })
  await turn()
  expect(reads).toHaveLength(1)
  source.hurry('4') // not queued: nothing happens
  await turn()
  expect(reads).toHaveLength(1)
  source.hurry('3')
  await turn()
  expect(reads.map((r) => r.ids)).toEqual([['1', '2'], ['3']])
  reads[1].resolve([row(3)])
  expect((await queued).json).toBe(JSON.stringify({ n: 3 }))
})

test('background lookups left behind by a full read slot wait again when it frees, not one read each', async () => {
  jest.useFakeTimers()
  const { store, reads } = controlledStore(1500)
  const source = createHBaseSource({ store, defaultConfig: {}, maxInFlight: 1, refreshLingerMs: 20 })
  const first = source.lookup('1')
  await jest.advanceTimersByTimeAsync(0)
  const later = ['2', '3'].map((id) => source.lookup(id, { background: true }))
  reads[0].resolve([row(1)])
  await first
  await jest.advanceTimersByTimeAsync(19)
  expect(reads).toHaveLength(1) // the slot freed; the background ones still wait out their linger
  const third = source.lookup('4', { background: true })
  await advanceAndTurn(1)
  expect(reads.map((r) => r.ids)).toEqual([['1'], ['2', '3', '4']])
  reads[1].resolve([row(2), row(3), row(4)])
  await Promise.all([...later, third])
})

test('a queue of more ids than the multi-gets in flight may carry sends only those, oldest first; the rest as reads come ' +
  'back', async () => {
  const { store, reads } = controlledStore(undefined)
  const source = createHBaseSource({ store, defaultConfig: {}, maxInFlight: 2 })
  const lookups = Array.from({ length: 2600 }, (_, i) => source.lookup(String(i)))
  await turn()
  // 2,600 ids are 6 multi-gets of 500: only 2 go, never more than maxInFlight at once.
  expect(reads.map((r) => r.ids.length)).toEqual([500, 500])
  expect(reads[0].ids[0]).toBe('0')
  // Reads out at once: sent and not yet answered, after each answer and the turn it frees.
  const outstanding = []
  for (let answered = 0; answered < reads.length; answered++) {
    outstanding.push(reads.length - answered)
    reads[answered].resolve(reads[answered].ids.map((id) => row(Number(id))))
    await turn()
  }
  expect(Math.max(...outstanding)).toBe(2)
  expect(reads.map((r) => r.ids.length)).toEqual([500, 500, 500, 500, 500, 100])
  expect(reads.flatMap((r) => r.ids)).toEqual(Array.from({ length: 2600 }, (_, i) => String(i)))
  const entries = await Promise.all(lookups)
  expect(entries[2599].json).toBe(JSON.stringify({ n: 2599 }))
})
