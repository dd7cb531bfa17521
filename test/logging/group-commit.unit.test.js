'use strict'

const { GroupCommit } = require('../../logging/group-commit')

/** A scheduler stepped by hand: the end of the turn comes when the test says. */
function manualTurns () {
  /** @type {Array<() => void>} */
  const queue = []
  return {
    schedule: (/** @type {() => void} */ run) => queue.push(run),
    endTurn: () => {
      const runs = queue.splice(0)
      for (const run of runs) run()
      return runs.length
    },
    get pending () { return queue.length }
  }
}

test('the answers of a turn go out after one commit per enlisted sink, in the order held', () => {
  const turns = manualTurns()
  const group = new GroupCommit({ schedule: turns.schedule })
  const events = []
  const wal = { commit: () => { events.push('wal') } }
  const file = { commit: () => { events.push('file') } }
  for (let i = 0; i < 3; i++) {
    group.enlist(wal)
    group.enlist(file)
    group.hold(() => events.push(`answer ${i}`))
  }
  expect(group.open).toBe(true)
  expect(events).toEqual([])
  expect(turns.endTurn()).toBe(1) // one scheduled run for the whole turn
  expect(events).toEqual(['wal', 'file', 'answer 0', 'answer 1', 'answer 2'])
  expect(group.open).toBe(false)
  expect(group.stats()).toEqual({ groups: 1, answersHeld: 3 })
})

test('entries of the next turn make a group of their own', () => {
  const turns = manualTurns()
  const group = new GroupCommit({ schedule: turns.schedule })
  let commits = 0
  const wal = { commit: () => { commits++ } }
  group.enlist(wal)
  group.hold(() => {})
  turns.endTurn()
  expect(turns.pending).toBe(0)
  group.enlist(wal)
  group.hold(() => {})
  expect(turns.pending).toBe(1)
  turns.endTurn()
  expect(commits).toBe(2)
  expect(group.stats().groups).toBe(2)
})

test('an asynchronous commit holds the answers until it settles; the next turn groups meanwhile', async () => {
  const turns = manualTurns()
  const group = new GroupCommit({ schedule: turns.schedule })
  /** @type {() => void} */
  let synced = () => {}
  const host = { commit: () => new Promise((resolve) => { synced = () => resolve(undefined) }) }
  const answered = []
  group.enlist(host)
  group.hold(() => answered.push('first'))
  const first = group.run()
  expect(first).toBeInstanceOf(Promise)
  group.hold(() => answered.push('second')) // a new group, while the first one's sync runs
  expect(group.open).toBe(true)
  await Promise.resolve()
  expect(answered).toEqual([])
  synced()
  await first
  expect(answered).toEqual(['first'])
  turns.endTurn()
  expect(answered).toEqual(['first', 'second'])
})

test('a commit that fails still releases the answers, and reports the error once', async () => {
  const turns = manualTurns()
  const errors = []
  const group = new GroupCommit({ schedule: turns.schedule, onError: (err) => errors.push(err) })
  const answered = []
  group.enlist({ commit: () => { throw new Error('ENOSPC') } })
  group.enlist({ commit: () => Promise.reject(new Error('EIO')) })
  group.hold(() => answered.push(1))
  await group.run()
  expect(answered).toEqual([1])
  expect(errors.map((e) => e.message)).toEqual(['ENOSPC', 'EIO'])
})

test('run() outside a turn with nothing held does nothing (a close may call it any time)', () => {
  const turns = manualTurns()
  const group = new GroupCommit({ schedule: turns.schedule })
  expect(group.run()).toBeUndefined()
  expect(group.stats().groups).toBe(0)
})

test('with the real scheduler, the answers of one turn wait for the end of that turn, not a timer', async () => {
  const group = new GroupCommit()
  const order = []
  group.enlist({ commit: () => { order.push('commit') } })
  group.hold(() => order.push('answer'))
  process.nextTick(() => order.push('tick'))
  await new Promise((resolve) => setImmediate(resolve))
  expect(order).toEqual(['tick', 'commit', 'answer'])
})
