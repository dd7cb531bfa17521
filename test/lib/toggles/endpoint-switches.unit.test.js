'use strict'

const { watchEndpointSwitches } = require('../../../lib/toggles/endpoint-switches')

/** A store whose reads wait until the test answers them, so a read can overlap a local switch. */
function pendingStore () {
  const reads = []
  return {
    reads,
    readSwitches: () => new Promise((resolve) => reads.push(resolve))
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

test('a stored switch read by the poll is applied', async () => {
  const store = pendingStore()
  const applied = []
  const watcher = watchEndpointSwitches({ store, names: ['a'], apply: (name, enabled) => applied.push([name, enabled]), intervalMs: 60000 })
  store.reads[0](new Map([['a', { enabled: false }]]))
  await watcher.ready
  watcher.stop()
  expect(applied).toEqual([['a', false]])
})

test('a read that was in flight while this host applied a switch is dropped as stale', async () => {
  const store = pendingStore()
  const applied = []
  let localSwitches = 0
  const watcher = watchEndpointSwitches({
    store,
    names: ['a'],
    apply: (name, enabled) => applied.push([name, enabled]),
    intervalMs: 1,
    localSwitches: () => localSwitches
  })
  // The read started before the admin call stored "on"; it answers with the old "off".
  localSwitches++
  store.reads[0](new Map([['a', { enabled: false }]]))
  await watcher.ready
  expect(applied).toEqual([])
  // The next poll reads the stored state again and applies it.
  while (store.reads.length < 2) await tick()
  store.reads[1](new Map([['a', { enabled: true }]]))
  while (applied.length === 0) await tick()
  watcher.stop()
  expect(applied).toEqual([['a', true]])
})
