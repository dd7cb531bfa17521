'use strict'

// The one bounded wait, on jest's fake clock.
const { settleBy, settleWithin, TIMED_OUT } = require('../../lib/deadline')

describe('settleBy / settleWithin', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }))
  afterEach(() => jest.useRealTimers())

  test('a promise that settles first gives its value or its rejection', async () => {
    await expect(settleWithin(Promise.resolve(7), 100)).resolves.toBe(7)
    await expect(settleBy(Promise.reject(new Error('no')), Date.now() + 100)).rejects.toThrow('no')
  })

  test('a promise still pending at the deadline gives TIMED_OUT, not earlier', async () => {
    let settled = null
    settleBy(new Promise(() => {}), Date.now() + 500).then((v) => { settled = v })
    await jest.advanceTimersByTimeAsync(499)
    expect(settled).toBeNull()
    await jest.advanceTimersByTimeAsync(1)
    expect(settled).toBe(TIMED_OUT)
  })

  test('a deadline already past answers TIMED_OUT on the next timer', async () => {
    const late = settleBy(new Promise(() => {}), Date.now() - 10)
    await jest.advanceTimersByTimeAsync(0)
    await expect(late).resolves.toBe(TIMED_OUT)
  })

  test('no bound: the promise itself', async () => {
    const p = Promise.resolve(1)
    expect(settleWithin(p, undefined)).toBe(p)
    expect(settleBy(p, Infinity)).toBe(p)
  })
})
