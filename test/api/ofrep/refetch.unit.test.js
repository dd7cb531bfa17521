'use strict'

// The refetch a change event triggers: `flagConfigLastModified` read from the query, and the
// first refetch of a recent change on a worker reading past the cache, the others sharing it.

const { createRefetchGate, lastModifiedOf } = require('../../../api/public/ofrep/refetch')

test('lastModifiedOf: integer seconds of the parameter, exactly; anything else is null', () => {
  expect(lastModifiedOf('flagConfigLastModified=1764150000')).toBe(1764150000)
  expect(lastModifiedOf('flagConfigEtag=%22x%22&flagConfigLastModified=1764150000&x=1')).toBe(1764150000)
  for (const query of ['', 'flagConfigLastModified=', 'flagConfigLastModified=-1', 'flagConfigLastModified=1.5',
    'flagConfigLastModified=2026-11-26T10%3A00%3A00Z', 'xflagConfigLastModified=1764150000', 'flagConfigLastModified=1e9',
    'flagConfigLastModified=' + '9'.repeat(13), 'flagConfigLastModified=17641%00']) {
    expect({ query, s: lastModifiedOf(query) }).toEqual({ query, s: null })
  }
})

function endpoint () {
  const calls = []
  let version = 1
  return {
    calls,
    bump: () => version++,
    lookup: (id) => { calls.push(['lookup', id]); return { id, version } },
    reload: (id) => { calls.push(['reload', id]); return new Promise((resolve) => setImmediate(() => resolve({ id, version }))) }
  }
}

test('the first refetch of a recent change reloads; the others of that change wait for it, then use the cache', async () => {
  let t = 1_764_150_000_500
  const gate = createRefetchGate({ windowMs: 6000, now: () => t })
  const e = endpoint()
  const s = Math.floor(t / 1000)
  e.bump()
  const [a, b] = [gate.lookup(e, '7', s), gate.lookup(e, '7', s)]
  expect(e.calls).toEqual([])
  await expect(a).resolves.toEqual({ id: '7', version: 2 })
  await expect(b).resolves.toEqual({ id: '7', version: 2 })
  expect(e.calls).toEqual([['reload', '7']])
  expect(gate.lookup(e, '7', s)).toEqual({ id: '7', version: 2 })
  expect(e.calls.at(-1)).toEqual(['lookup', '7'])
  // Another change (another second) or another id: a read of its own.
  await gate.lookup(e, '7', s + 1)
  await gate.lookup(e, '8', s)
  expect(e.calls.filter(([kind]) => kind === 'reload')).toEqual([['reload', '7'], ['reload', '7'], ['reload', '8']])
  // Old news (every worker has heard by now), no parameter, or a future beyond the window: the cache.
  t += 60_000
  e.calls.length = 0
  gate.lookup(e, '7', s)
  gate.lookup(e, '7', null)
  gate.lookup(e, '7', s + 3600)
  expect(e.calls).toEqual([['lookup', '7'], ['lookup', '7'], ['lookup', '7']])
})

test('a failed reload falls back on the lookup (a stale entry may serve) and is tried again next time', async () => {
  const t = 1_764_150_000_000
  const gate = createRefetchGate({ windowMs: 6000, now: () => t })
  let fail = true
  const calls = []
  const e = {
    lookup: (id) => { calls.push('lookup'); return { id, stale: true } },
    reload: () => { calls.push('reload'); return fail ? Promise.reject(new Error('down')) : Promise.resolve({ fresh: true }) }
  }
  await expect(gate.lookup(e, '7', t / 1000)).resolves.toEqual({ id: '7', stale: true })
  await new Promise((resolve) => setImmediate(resolve))
  fail = false
  await expect(gate.lookup(e, '7', t / 1000)).resolves.toEqual({ fresh: true })
  expect(calls).toEqual(['reload', 'lookup', 'reload'])
})

test('bounded: past `max`, the oldest reloads are forgotten (their next refetch reads again)', async () => {
  let t = 1_764_150_000_000
  const gate = createRefetchGate({ windowMs: 6000, now: () => t, max: 100 })
  const e = endpoint()
  for (let i = 0; i < 300; i++) {
    t += 1
    await gate.lookup(e, String(i), Math.floor(t / 1000))
  }
  expect(gate.size()).toBeLessThanOrEqual(100)
  t += 10_000
  await gate.lookup(e, 'x', Math.floor(t / 1000))
  expect(gate.size()).toBe(1)
  // An endpoint without reload (fixed config) is simply looked up.
  expect(gate.lookup({ lookup: () => 'fixed' }, '7', Math.floor(t / 1000))).toBe('fixed')
})
