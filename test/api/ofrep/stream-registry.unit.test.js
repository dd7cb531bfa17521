'use strict'

// The watchers of one worker: by endpoint and id, with each endpoint's cap, and the heartbeat
// slots they are spread over.

const { createStreamRegistry } = require('../../../api/public/ofrep/stream-registry')

const w = (name) => ({ name })

test('watchers by endpoint and id; the cap is per endpoint; remove frees a place', () => {
  const r = createStreamRegistry({ slots: 4 })
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(w)
  expect(r.add('sample5', '7', a, 2)).toBe('added')
  expect(r.add('sample5', '7', b, 2)).toBe('added')
  expect(r.add('sample5', '8', c, 2)).toBe('full') // sample5 is full
  expect(r.add('sample3', '7', c, 2)).toBe('added') // another endpoint's cap
  expect([...r.watchersOf('sample5', '7')]).toEqual([a, b])
  expect([...r.watchersOf('sample3', '7')]).toEqual([c])
  expect(r.watchersOf('sample5', 'nobody').size).toBe(0)
  expect(r.watchersOf('nope', '7').size).toBe(0)
  expect([r.count('sample5'), r.count('sample3'), r.count('nope'), r.size()]).toEqual([2, 1, 0, 3])

  expect(r.remove('sample5', '7', a)).toBe(true)
  expect(r.remove('sample5', '7', a)).toBe(false) // twice ('close' after an explicit end) is harmless
  expect(r.remove('sample5', '8', b)).toBe(false) // not under that id
  expect(r.add('sample5', '8', d, 2)).toBe('added')
  expect(r.watchersOfEndpoint('sample5')).toEqual([b, d])
  expect(r.endpoints().sort()).toEqual(['sample3', 'sample5'])
  expect(r.size()).toBe(3)
})

test('a cap of 0 admits nobody', () => {
  const r = createStreamRegistry({ slots: 2 })
  expect(r.add('sample5', '7', w('a'), 0)).toBe('full')
  expect(r.size()).toBe(0)
})

test('heartbeat slots: watchers spread round-robin, each in exactly one slot, gone when removed', () => {
  const r = createStreamRegistry({ slots: 4 })
  const all = Array.from({ length: 10 }, (_, i) => w(String(i)))
  all.forEach((x, i) => r.add('sample5', String(i % 3), x, 100))
  const slots = [0, 1, 2, 3].map((s) => [...r.slot('sample5', s)])
  expect(slots.map((s) => s.length)).toEqual([3, 3, 2, 2])
  expect(slots.flat().sort((x, y) => Number(x.name) - Number(y.name))).toEqual(all)
  r.remove('sample5', '0', all[0])
  expect(r.slot('sample5', 0).has(all[0])).toBe(false)
  expect(r.slot('nope', 0).size).toBe(0)
})

test('the last watcher of an id leaves no empty entry behind', () => {
  const r = createStreamRegistry({ slots: 1 })
  for (let i = 0; i < 1000; i++) {
    const x = w(String(i))
    r.add('sample5', String(i), x, 10)
    r.remove('sample5', String(i), x)
  }
  expect(r.watchersOfEndpoint('sample5')).toEqual([])
  expect(r.size()).toBe(0)
})

test('a client\'s share: past maxPerClient that client is refused, others are not; remove gives it back', () => {
  const r = createStreamRegistry({ slots: 4 })
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => ({ name }))
  expect(r.add('sample5', '1', a, 100, '127.0.0.2', 2)).toBe('added')
  expect(r.add('sample5', '2', b, 100, '127.0.0.2', 2)).toBe('added')
  expect(r.add('sample5', '3', c, 100, '127.0.0.2', 2)).toBe('client')
  expect(r.add('sample5', '3', c, 100, '127.0.0.3', 2)).toBe('added')
  expect(r.add('sample3', '3', d, 100, '127.0.0.2', 2)).toBe('added') // a share per endpoint
  expect(r.remove('sample5', '1', a)).toBe(true)
  expect(r.add('sample5', '1', a, 100, '127.0.0.2', 2)).toBe('added')
  expect(r.count('sample5')).toBe(3)
})
