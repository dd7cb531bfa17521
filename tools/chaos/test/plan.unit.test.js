'use strict'

const { KINDS, createRandom, createPlan, splitPoint } = require('../plan')

test('the same seed gives the same draws; another seed others', () => {
  const draws = (seed) => Array.from({ length: 5 }, createRandom(seed))
  expect(draws(11)).toEqual(draws(11))
  expect(draws(11)).not.toEqual(draws(12))
  for (const x of draws(7)) expect(x >= 0 && x < 1).toBe(true)
})

test('gaps stay within their bounds and are seeded', () => {
  const gaps = (seed) => {
    const plan = createPlan({ seed, minGapMs: 10000, maxGapMs: 20000 })
    return Array.from({ length: 200 }, plan.gap)
  }
  const g = gaps(3)
  expect(Math.min(...g)).toBeGreaterThanOrEqual(10000)
  expect(Math.max(...g)).toBeLessThanOrEqual(20000)
  expect(new Set(g).size).toBeGreaterThan(50)
  expect(gaps(3)).toEqual(g)
})

test('each round deals every kind once; a kind that cannot run waits in the deck', () => {
  const plan = createPlan({ seed: 5 })
  const all = new Set(KINDS)
  const round = Array.from({ length: KINDS.length }, () => plan.pick(all))
  expect([...round].sort()).toEqual([...KINDS].sort())

  const next = createPlan({ seed: 5 })
  const first = next.pick(new Set(KINDS.filter((k) => k !== round[1]))) // round[1] held back
  expect(first).toBe(round[0])
  const rest = Array.from({ length: KINDS.length - 1 }, () => next.pick(all))
  expect(rest).toContain(round[1])
  expect([first, ...rest].sort()).toEqual([...KINDS].sort())
})

test('when no kind of the deck can run, any eligible one is drawn; none at all gives null', () => {
  const plan = createPlan({ seed: 1 })
  const only = new Set(['move-region'])
  for (let i = 0; i < 8; i++) expect(plan.pick(only)).toBe('move-region')
  expect(plan.pick(new Set())).toBeNull()
  expect(() => createPlan({ seed: 1.5 })).toThrow(/integer/)
  expect(() => createPlan({ seed: 1, minGapMs: 5, maxGapMs: 4 })).toThrow(RangeError)
})

test('split points: the middle bucket boundary, or within one bucket the current time', () => {
  const now = 1790000000000
  expect(splitPoint({ startKey: '', endKey: '02' }, 16, now)).toBe('01')
  expect(splitPoint({ startKey: '04', endKey: '08' }, 16, now)).toBe('06')
  expect(splitPoint({ startKey: '0e', endKey: '' }, 16, now)).toBe('0f')
  // One bucket left: split by time, old entries below, new ones above.
  expect(splitPoint({ startKey: '0f', endKey: '' }, 16, now)).toBe('0f1790000000000')
  expect(splitPoint({ startKey: '03', endKey: '04' }, 16, now)).toBe('031790000000000')
  expect(splitPoint({ startKey: '031700000000000', endKey: '04' }, 16, now)).toBe('031790000000000')
  // A daughter whose keys are all in the past cannot be split by time (nothing new lands there).
  expect(splitPoint({ startKey: '03', endKey: '031700000000000' }, 16, now)).toBeNull()
  expect(splitPoint({ startKey: '03' + now, endKey: '04' }, 16, now)).toBeNull()
})
