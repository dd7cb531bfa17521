'use strict'

// The HBase sink's books (logging/hbase-sink/ledger.js) under random sequences of writes, HBase
// going down and up, flushes, replays, orphan claims, waits and a close, against a real journal
// on a real disk and a stand-in HBase (test/support/fake-hbase.js; the real HBase runs the same
// paths in test/logging/hbase-sink.test.js and the fault tests). After every step the books
// balance and agree with the batcher; after the close, every entry that was not shed is a row
// or a line left on disk, and what is left is exactly what the books say.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const fc = require('fast-check')
const { Ledger } = require('../../logging/hbase-sink/ledger')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { journalFiles, readRecords } = require('../../logging/hbase-sink/journal')
const { createFakeHBase } = require('../support/fake-hbase')
const { writeOrphan, records } = require('../support/crafted-files')

jest.setTimeout(120000)

const dirs = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function balanced (s) {
  return s.accepted + s.claimed === s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** At most `ms`: a flush waits for HBase in shed mode, which a step must not. */
const bounded = (promise, ms) => Promise.race([promise, sleep(ms)])

const step = fc.oneof(
  fc.record({ op: fc.constant('write'), n: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ op: fc.constant('down') }),
  fc.record({ op: fc.constant('up') }),
  fc.record({ op: fc.constant('flush') }),
  fc.record({ op: fc.constant('replay') }),
  fc.record({ op: fc.constant('orphan'), n: fc.integer({ min: 1, max: 300 }), wal: fc.boolean() }),
  fc.record({ op: fc.constant('wait'), ms: fc.integer({ min: 0, max: 60 }) })
)

let runs = 0

async function run ({ steps, overload, upAtClose }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-ledger-'))
  dirs.push(dir)
  const hbase = createFakeHBase()
  const sink = createHBaseSink({
    client: hbase.client,
    table: 't',
    journalDir: dir,
    writerId: `books${runs++}`,
    overload,
    strictLedger: true,
    flushIntervalMs: 5,
    batchSize: 50,
    maxQueue: 200,
    retryMaxMs: 30,
    retryBaseMs: 5,
    replayBaseMs: 10,
    replayMaxBackoffMs: 40,
    claimIntervalMs: 25,
    journalFileBytes: 8192
  })
  const check = (where) => {
    const s = sink.stats()
    if (!balanced(s)) throw new Error(`books out of balance after ${where}: ${JSON.stringify(s)}`)
    if (s.pending !== s.queueDepth + s.inFlight) {
      throw new Error(`pending ${s.pending} vs the batcher's ${s.queueDepth} + ${s.inFlight} after ${where}`)
    }
  }
  let orphans = 0
  let seq = 0
  for (const s of steps) {
    if (s.op === 'write') {
      for (let i = 0; i < s.n; i++) sink.write({ ts: 1700000000000 + seq, endpoint: 'sample5', id: String(seq++), status: 200 })
    } else if (s.op === 'down' || s.op === 'up') {
      hbase.up = s.op === 'up'
    } else if (s.op === 'flush') {
      await bounded(sink.flush(), 50)
    } else if (s.op === 'replay') {
      await bounded(sink.replay(), 50)
    } else if (s.op === 'orphan') {
      writeOrphan(dir, records(`o${orphans++}`, s.n), s.wal ? 'gone-wal' : 'gone')
    } else {
      await sleep(s.ms)
    }
    check(s.op)
  }
  hbase.up = upAtClose
  const closed = await sink.close({ timeoutMs: 3000 })
  check('close')
  const s = sink.stats()
  const onDisk = new Set()
  let lines = 0
  for (const file of journalFiles(dir)) {
    for (const r of (await readRecords(file)).records) {
      onDisk.add(r.key)
      lines++
    }
  }
  const everywhere = new Set([...hbase.rows.keys(), ...onDisk])
  expect(s.corrupt).toBe(0)
  expect(everywhere.size).toBe(s.accepted + s.claimed - s.shed)
  expect(closed.leftOnDisk.entries).toBe(lines)
  if (upAtClose) {
    expect(closed.leftOnDisk).toEqual({ entries: 0, files: [] })
    expect(s.written).toBe(s.accepted + s.claimed - s.shed)
  } else {
    // Nothing reaches HBase: every entry not written is on disk, and the books say how many.
    expect(s.journalPending).toBe(s.accepted + s.claimed - s.shed - s.written)
    expect(closed.leftOnDisk.entries).toBeGreaterThanOrEqual(s.journalPending)
  }
}

test('the books balance after every step, and a close leaves exactly what they say', async () => {
  await fc.assert(fc.asyncProperty(
    fc.record({
      steps: fc.array(step, { minLength: 1, maxLength: 25 }),
      overload: fc.constantFrom('spill', 'shed'),
      upAtClose: fc.boolean()
    }),
    run
  ), { numRuns: 40 })
})

test('the ledger refuses a transition that breaks the books, in strict mode', () => {
  const ledger = new Ledger({ strict: true })
  ledger.accept()
  ledger.spill()
  expect(() => ledger.damaged(2)).toThrow(/out of balance/)
  const lax = new Ledger()
  lax.accept()
  lax.writtenLive(2)
  expect(lax.balanced()).toBe(false)
})
