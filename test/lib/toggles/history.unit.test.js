'use strict'

const { rollbackTarget } = require('../../../lib/toggles/history')

const change = (version, value, previous) => ({ version, at: version, actor: 'a', action: 'config.set', value, previous })
// Newest first, as history lists them.
const changes = [change(300, { v: 3 }, { v: 2 }), change(200, { v: 2 }, { v: 1 }), change(100, { v: 1 }, null)]

test('without a target: the value before the newest change', () => {
  expect(rollbackTarget(changes, null)).toEqual({ value: { v: 2 }, to: 300, undone: true })
})

test('a version: that change\'s value; a time between changes: the newest at or before it', () => {
  expect(rollbackTarget(changes, 200)).toEqual({ value: { v: 2 }, to: 200, undone: false })
  expect(rollbackTarget(changes, 250)).toEqual({ value: { v: 2 }, to: 200, undone: false })
  expect(rollbackTarget(changes, 1000)).toEqual({ value: { v: 3 }, to: 300, undone: false })
})

test('before every change kept: the value before the oldest; no history: nothing to go back to', () => {
  expect(rollbackTarget(changes, 99)).toEqual({ value: null, to: 100, undone: true })
  expect(rollbackTarget([], null)).toBeNull()
  expect(rollbackTarget([], 100)).toBeNull()
})
