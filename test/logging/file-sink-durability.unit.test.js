'use strict'

// The file sink's durabilities on real files: in 'process' (the default) the lines of one turn
// are in the file, one write(2), before any of their answers go out; in 'memory' they wait for
// the next batch, on libuv's pool.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createFileSink } = require('../../logging/file-sink')
const { GroupCommit } = require('../../logging/group-commit')
const { countLines } = require('../../logging/count-lines')
const { accessEntry } = require('../../logging/access-entry')

/** @type {string[]} */
const dirs = []
/** @type {Array<{ close: () => Promise<unknown> }>} */
const sinks = []
afterEach(async () => {
  for (const sink of sinks.splice(0)) await sink.close()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** @param {number} i */
const entry = (i) => accessEntry({ ts: 1700000000000 + i, endpoint: 'sample4', id: String(i), status: 200, ms: 1, ip: null })

/** @param {object} [extra] */
async function fileSink (extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-file-durable-'))
  dirs.push(dir)
  /** @type {Array<() => void>} */
  const due = []
  const groups = new GroupCommit({ schedule: (run) => { due.push(run) } })
  const sink = createFileSink({ path: path.join(dir, 'access.log'), workerTag: 'w1', groupCommit: groups, ...extra })
  sinks.push(sink)
  await sink.flush() // the file set is open
  return { sink, dir, groups, turnEnd: () => due.splice(0).forEach((run) => run()) }
}

test('process, the default: one turn\'s lines are in the file before the turn\'s answers go out', async () => {
  const { sink, dir, groups, turnEnd } = await fileSink()
  expect(sink.durable).toBe(true)
  expect(sink.stats().durability).toBe('process')
  /** @type {number[]} */
  const linesSeenByAnswers = []
  for (let i = 0; i < 20; i++) {
    sink.write(entry(i))
    groups.hold(() => { linesSeenByAnswers.push(countLines(dir)) })
  }
  expect(countLines(dir)).toBe(0)
  turnEnd()
  expect(linesSeenByAnswers).toEqual(new Array(20).fill(20))
  expect(sink.stats()).toMatchObject({ accepted: 20, written: 20, pending: 0 })
})

test('memory: the lines wait for their batch; nothing holds an answer', async () => {
  const { sink, dir, groups } = await fileSink({ durability: 'memory' })
  expect(sink.durable).toBe(false)
  sink.write(entry(1))
  expect(groups.open).toBe(false)
  expect(countLines(dir)).toBe(0)
  await sink.flush()
  expect(countLines(dir)).toBe(1)
})

test('without a group commit, a durable sink writes each line as it takes it', async () => {
  const { sink, dir } = await fileSink({ groupCommit: null })
  sink.write(entry(1))
  expect(countLines(dir)).toBe(1)
})
