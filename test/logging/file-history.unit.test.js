'use strict'

// The file log's history (logging/file-history.js) on real files through pino-roll: a flood
// that rotates on size makes each cleanup delete files long before keepFiles periods are up;
// that is counted, logged and shown in /readyz, never silent. Rotations over files as old as
// their periods are not.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createFileSink } = require('../../logging/file-sink')
const { createFileHistory } = require('../../logging/file-history')
const { accessEntry } = require('../../logging/access-entry')
const { until } = require('../support/until')

const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-file-history-'))
  dirs.push(dir)
  return dir
}
afterAll(() => { for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true }) })

const entry = (i) => accessEntry({
  ts: 1700000000000 + i, endpoint: 'sample4', id: String(i), status: 200, ms: 1, ip: null, ua: 'x'.repeat(200), ref: null
})

test('a flood rotating on size: every cleanup that deletes young history is counted and logged', async () => {
  const dir = tempDir()
  const warnings = []
  const sink = createFileSink({
    path: path.join(dir, 'access.log'),
    rotateSize: '4k',
    keepFiles: 3,
    logger: { warn: (fields, message) => warnings.push({ fields, message }) }
  })
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < 20; i++) sink.write(entry(round * 20 + i))
    await sink.flush()
  }
  await until('an early rotation', () => sink.stats().history.earlyRotations > 0, 5000)
  const { history } = sink.stats()
  expect(history).toMatchObject({ promisedMs: 2 * 86400000, short: true })
  expect(history.keptMs).toBeLessThan(60000)
  // The budget: keepFiles rotated files and the one being written. pino-roll deletes the oldest
  // after it opened the next one, without waiting for the unlink, so a fifth file may still be
  // there for a moment after a rotation.
  await until('the oldest file deleted', () => sink.files().length <= 4, 5000)
  expect(warnings[0]).toMatchObject({ message: expect.stringMatching(/rotation deleted history/), fields: { promisedMs: 2 * 86400000 } })
  await sink.close()
})

test('a full set of files as old as their periods is the promised history: no alarm; fewer files than keepFiles never is', () => {
  const dir = tempDir()
  const day = 86400000
  const now = Date.parse('2026-12-02T12:00:00Z')
  const files = []
  const make = (name, ageMs) => {
    const file = path.join(dir, name)
    fs.writeFileSync(file, 'x\n')
    fs.utimesSync(file, (now - ageMs) / 1000, (now - ageMs) / 1000)
    files.push(file)
  }
  make('a.1.log', 2.5 * day)
  make('a.2.log', 1.5 * day)
  make('a.3.log', 0.5 * day)
  make('a.4.log', 0)
  const onShort = jest.fn()
  const steady = createFileHistory({ files: () => files, keepFiles: 3, rotateFrequency: 'daily', now: () => now, onShort })
  steady.check()
  expect(steady.stats()).toMatchObject({ short: false, earlyRotations: 0, keptMs: 2.5 * day })
  const young = createFileHistory({ files: () => files.slice(2), keepFiles: 3, rotateFrequency: 'daily', now: () => now, onShort })
  young.check() // two files: nothing deleted yet, whatever their age
  expect(young.stats().short).toBe(false)
  const hourly = createFileHistory({ files: () => files, keepFiles: 3, rotateFrequency: 'hourly', now: () => now, onShort })
  hourly.check()
  expect(hourly.stats().short).toBe(false)
  const flooded = createFileHistory({ files: () => files, keepFiles: 3, rotateFrequency: 'daily', now: () => now - 2 * day, onShort })
  flooded.check() // seen from when the oldest was half a day old: less than the day one full set holds at the least
  expect(flooded.stats()).toMatchObject({ short: true, earlyRotations: 1 })
  expect(onShort).toHaveBeenCalledTimes(1)
})
