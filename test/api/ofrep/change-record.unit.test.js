'use strict'

// What a worker remembers of changes, and the verdict it gives a stream that opens: told at
// once when its client may have missed a change, not told when it cannot have.

const { createChangeRecord } = require('../../../api/public/ofrep/change-record')

const MARGIN = 3000
let t

function record (options = {}) {
  t = 1_000_000
  return createChangeRecord({ marginMs: MARGIN, now: () => t, ...options })
}

test('a reconnect with a stamp after every change it could know of: nothing missed', () => {
  const r = record()
  t += 60_000
  r.noteId('7', t - 10)
  t += 10_000
  expect(r.missedSince('sample5', '7', t - 5_000, true)).toEqual({ missed: false, changedAt: null })
  expect(r.missedSince('sample5', '8', t - 5_000, true)).toEqual({ missed: false, changedAt: null })
})

test('a change heard after the stamp, or within the margin before it: missed, with when it was made', () => {
  const r = record()
  t += 60_000
  const stamp = t
  t += 1_000
  r.noteId('7', t - 200)
  expect(r.missedSince('sample5', '7', stamp, true)).toEqual({ missed: true, changedAt: t - 200 })
  // Heard here 2.5 s before the stamp another worker wrote: that worker may not have told it.
  expect(r.missedSince('sample5', '7', t + 2_500, true)).toEqual({ missed: true, changedAt: t - 200 })
  expect(r.missedSince('sample5', '7', t + MARGIN + 1, true)).toEqual({ missed: false, changedAt: null })
})

test('a fixed endpoint ignores config changes; a switch concerns every id of its endpoint only', () => {
  const r = record()
  t += 60_000
  const stamp = t
  r.noteId('7', t)
  expect(r.missedSince('sample1', '7', stamp, false).missed).toBe(false)
  r.noteEndpoint('sample1')
  expect(r.missedSince('sample1', 'any', stamp, false)).toEqual({ missed: true, changedAt: null })
  expect(r.missedSince('sample5', 'any', stamp, true).missed).toBe(false)
})

test('a stream opened without a stamp: missed only what changed within the margin before it opens', () => {
  const r = record()
  t += 60_000
  r.noteId('7', null)
  t += MARGIN - 1
  expect(r.missedSince('sample5', '7', null, true)).toEqual({ missed: true, changedAt: null })
  t += 2
  expect(r.missedSince('sample5', '7', null, true).missed).toBe(false)
})

test('before the worker started, or beyond what it remembers, it cannot vouch: missed', () => {
  const r = record({ retainMs: 600_000 })
  const started = t
  expect(r.missedSince('sample5', '7', null, true).missed).toBe(true) // within the margin of its start
  expect(r.missedSince('sample5', '7', started - 1, true).missed).toBe(true)
  t += 700_000
  expect(r.missedSince('sample5', '7', t - 650_000, true).missed).toBe(true)
  expect(r.missedSince('sample5', '7', t - 500_000, true).missed).toBe(false)
  expect(r.missedSince('sample5', '7', Number.MAX_SAFE_INTEGER, true).missed).toBe(false) // a clock ahead: the margin's job
})

test('bounded: old entries go, and past maxIds the oldest; the time vouched for moves up with them', () => {
  const r = record({ retainMs: 600_000, maxIds: 3 })
  t += 60_000
  for (const id of ['a', 'b', 'c', 'd']) {
    r.noteId(id, t)
    t += 1_000
  }
  expect(r.stats().ids).toBe(3)
  // 'a' was forgotten, so a stamp from before 'a' changed is not vouched for, whatever the id.
  expect(r.missedSince('sample5', 'zz', t - 4_000 + MARGIN - 1, true).missed).toBe(true)
  expect(r.missedSince('sample5', 'zz', t - 3_000 + MARGIN, true).missed).toBe(false)
  t += 600_000
  r.noteId('e', t)
  expect(r.stats().ids).toBe(1)
  // A note moves an id to the newest place: the one forgotten next is the least recent.
  const r2 = record({ maxIds: 2 })
  t += 60_000
  const stamp = t
  for (const [id, at] of [['a', 1], ['b', 2], ['a', 3], ['c', 4]]) {
    t += 1_000
    r2.noteId(id, at)
  }
  expect(r2.stats().ids).toBe(2)
  expect(r2.missedSince('sample5', 'a', stamp + MARGIN + 2_000, true)).toEqual({ missed: true, changedAt: 3 })
  expect(r2.missedSince('sample5', 'b', stamp + MARGIN + 2_000, true).missed).toBe(false) // forgotten, but before the stamp
})
