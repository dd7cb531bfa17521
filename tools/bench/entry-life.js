'use strict'

/**
 * Microbenchmark of a logged entry's life in the HBase sink, before any socket, both ways in one
 * process: a realistic entry (tools/bench/lib/log-entries.js: user agents, referers, a tenth events)
 * accepted (serialized, its row key made), held while `--held` newer entries arrive (the queue
 * under load: what the garbage collector meets), then put in a batch of `--batch` and the Multi
 * frame encoded with a cell block, as the live path does.
 * - strings: the record kept as `{ key, value }` strings (the sink until 2026-11-27; a replayed
 *   record still is), each converted to UTF-8 by the client at the put; `+ WAL` adds durable
 *   mode's line (formatRecord + Buffer.from, as wal.append did);
 * - encoded once: the record encoded at accept (logging/hbase-sink/journal/record-bytes.js), the put sending views
 *   of its bytes; durable mode's write-ahead log writes the same line, so `+ WAL` adds nothing.
 * `entries alone` is the floor: entries made, serialized and keyed, and dropped. CPU is
 * process.cpuUsage (user + system, every thread: GC helpers too) per entry; each of
 * `--runs` runs measures every case once after a warm-up; median and min–max printed.
 *
 *   node tools/bench/entry-life.js [--batch 500] [--held 10000] [--entries 200000] [--runs 7]
 */

const { parseArgs } = require('node:util')
const { toBytes, buildPut } = require('@beacon/hbase-client/lib/cells')
const { METHODS, encodeCall } = require('@beacon/hbase-client/lib/protocol')
const { multiRequest } = require('@beacon/hbase-client/lib/batch')
const { serializeEntry } = require('../../logging/access-entry')
const { accessLogRowKey, DEFAULT_LOG_BUCKETS } = require('../../logging/access-log-layout')
const { formatRecord } = require('../../logging/hbase-sink/journal')
const { createRecordEncoder } = require('../../logging/hbase-sink/journal/record-bytes')
const { toPut } = require('../../logging/hbase-sink/batcher')
const { logEntries } = require('./lib/log-entries')

const { values: args } = parseArgs({
  options: {
    batch: { type: 'string', default: '500' },
    held: { type: 'string', default: '10000' },
    entries: { type: 'string', default: '200000' },
    runs: { type: 'string', default: '7' }
  }
})
const BATCH = Number(args.batch)
const HELD = Number(args.held)
const ENTRIES = Number(args.entries)
const RUNS = Number(args.runs)
// One region: grouping is the same work both ways and not what is measured here.
// Only the region's spec is read by the encoder: the rest of a Region is not made up here.
const GROUPS = [{ region: /** @type {any} */ ({ spec: { type: 1, value: Buffer.from('access_log,,1764000000123.0.') } }), indexes: [] }]
GROUPS[0].indexes = Array.from({ length: BATCH }, (_, i) => i)

let sink = 0 // keeps results alive so nothing is optimised away

/** What multiPut does with a batch: a mutation per put (toBytes + buildPut), one frame. */
function sendBatch (batch) {
  const actions = batch.map((record) => {
    const put = toPut(record)
    const row = toBytes(put.row, 'row')
    return { row, mutation: buildPut(row, put.cells, {}) }
  })
  sink += encodeCall(1, METHODS.ClientService.Multi, multiRequest(actions, GROUPS), 60000, true).length
}

/**
 * @param {(key: string, value: string) => object|undefined} accept the record the sink keeps
 * @returns {number} CPU µs per entry
 */
function life (accept) {
  const held = new Array(HELD)
  let batch = []
  let i = 0
  const start = process.cpuUsage()
  for (const entry of logEntries({ count: ENTRIES })) {
    const n = i++
    const key = accessLogRowKey(n % DEFAULT_LOG_BUCKETS, entry.ts, 'w1-' + n)
    const record = accept(key, serializeEntry(entry))
    const old = held[n % HELD]
    held[n % HELD] = record
    if (old === undefined) continue
    batch.push(old)
    if (batch.length === BATCH) {
      sendBatch(batch)
      batch = []
    }
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / ENTRIES
}

const encodeRecord = createRecordEncoder()
const CASES = {
  // The floor: entries made, serialized and keyed, then dropped (no batch is ever full).
  'entries alone': () => life(() => undefined),
  strings: () => life((key, value) => ({ key, value })),
  'strings + WAL': () => life((key, value) => {
    sink += Buffer.from(formatRecord(key, value) + '\n').length
    return { key, value }
  }),
  'encoded once (+ WAL: the same line)': () => life((key, value) => ({ key, line: encodeRecord(key, value) }))
}

for (const fn of Object.values(CASES)) fn() // warm-up
const samples = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]))
for (let run = 0; run < RUNS; run++) for (const [name, fn] of Object.entries(CASES)) samples[name].push(fn())

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`${ENTRIES} entries per case and run, ${HELD} held, batches of ${BATCH}, ${RUNS} runs; CPU µs per entry, ` +
  'median (min–max)')
for (const [name, xs] of Object.entries(samples)) {
  console.log(`${name.padEnd(38)} ${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`)
}
if (sink < 0) console.log(sink)
