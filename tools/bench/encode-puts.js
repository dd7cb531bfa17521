'use strict'

/**
 * Microbenchmark of the client-side CPU a logged request costs the HBase client (`@beacon/hbase-client`) before any socket: the
 * access-log batcher's multiPut of `--batch` entries, as the client does it — each entry's
 * mutation built (toBytes + buildPut, client.js), the actions grouped into one Multi request per
 * server with one RegionAction per region (batch.js), and the call frame encoded (encodeCall,
 * protocol.js) with cells inline and in a KeyValueCodec cell block. No HBase needed.
 *
 * Rows and values are shaped like the access log's (logging/access-log-layout.js, access-entry.js):
 * a salted 13-digit-time key, one JSON cell l:e, spread over the table's 8 regions.
 * CPU is process.cpuUsage (user + system) over `--iterations` batches; each of `--runs` runs
 * measures every case once after a warm-up, and the median µs per put is printed with min–max.
 *
 *   node tools/bench/encode-puts.js [--batch 500] [--iterations 400] [--runs 7] [--json]
 */

const { parseArgs } = require('node:util')
const { toBytes, buildPut } = require('@beacon/hbase-client/lib/cells')
const { METHODS, encodeCall } = require('@beacon/hbase-client/lib/protocol')
const { multiRequest } = require('@beacon/hbase-client/lib/batch')
const { accessEntry, serializeEntry } = require('../../logging/access-entry')
const { accessLogRowKey, accessLogSplitKeys, DEFAULT_LOG_BUCKETS } = require('../../logging/access-log-layout')
const { toPut } = require('../../logging/hbase-sink/batcher')

const { values: args } = parseArgs({
  options: {
    batch: { type: 'string', default: '500' },
    iterations: { type: 'string', default: '400' },
    runs: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false }
  }
})
const BATCH = Number(args.batch)
const ITERATIONS = Number(args.iterations)
const RUNS = Number(args.runs)

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const T0 = 1764000000000

/** A batch of access-log records as the batcher holds them: `{ key, value }`. */
function records () {
  const out = []
  for (let i = 0; i < BATCH; i++) {
    const ts = T0 + i
    const entry = accessEntry({
      ts,
      endpoint: 'sample4',
      id: String(1 + ((i * 7919) % 10000)),
      status: 200,
      ms: 0.25 + (i % 7) / 3,
      ip: '10.1.' + (i % 256) + '.7',
      ua: UA,
      ref: i % 3 ? 'https://shop.example.com/p/' + i : null
    })
    out.push({ key: accessLogRowKey(i % DEFAULT_LOG_BUCKETS, ts, 'w1-' + (100000 + i)), value: serializeEntry(entry) })
  }
  return out
}

// The access-log table's regions as a meta lookup gives them: a start key and a region name.
const REGIONS = ['', ...accessLogSplitKeys()].map((start, i) => ({
  start,
  spec: { type: 1, value: Buffer.from(`access_log,${start},1764000000123.${String(i).repeat(32).slice(0, 32)}.`) }
}))

function regionOf (row) {
  let found = REGIONS[0]
  for (const region of REGIONS) if (Buffer.compare(Buffer.from(region.start), row) <= 0) found = region
  return found
}

/** What multiPut builds: one action per put. */
function buildActions (puts) {
  return puts.map((p) => {
    const key = toBytes(p.row, 'row')
    return { row: key, mutation: buildPut(key, p.cells, {}) }
  })
}

function groupByRegion (actions) {
  const byRegion = new Map()
  actions.forEach((a, i) => {
    const region = regionOf(a.row)
    if (!byRegion.has(region)) byRegion.set(region, [])
    byRegion.get(region).push(i)
  })
  return [...byRegion].map(([region, indexes]) => ({ region, indexes }))
}

const puts = records().map(toPut)
const groups = groupByRegion(buildActions(puts))
const fixedActions = buildActions(puts)
const fixedRequest = multiRequest(fixedActions, groups)

let sink = 0 // keeps results alive so nothing is optimised away
const CASES = {
  'build (toBytes + buildPut)': () => { sink += buildActions(puts).length },
  'encode inline (encodeCall)': () => { sink += encodeCall(1, METHODS.ClientService.Multi, fixedRequest, 60000, false).length },
  'encode cell block (encodeCall)': () => { sink += encodeCall(1, METHODS.ClientService.Multi, fixedRequest, 60000, true).length },
  'multiPut inline (build + group + encode)': () => {
    sink += encodeCall(1, METHODS.ClientService.Multi, multiRequest(buildActions(puts), groups), 60000, false).length
  },
  'multiPut cell block (build + group + encode)': () => {
    sink += encodeCall(1, METHODS.ClientService.Multi, multiRequest(buildActions(puts), groups), 60000, true).length
  }
}

function cpuMicros (fn, iterations) {
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) fn()
  const used = process.cpuUsage(start)
  return used.user + used.system
}

for (const fn of Object.values(CASES)) cpuMicros(fn, Math.max(50, ITERATIONS >> 2)) // warm-up
const samples = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]))
for (let run = 0; run < RUNS; run++) {
  for (const [name, fn] of Object.entries(CASES)) samples[name].push(cpuMicros(fn, ITERATIONS) / (ITERATIONS * BATCH))
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const rows = Object.entries(samples).map(([name, xs]) => ({
  case: name,
  medianUs: median(xs),
  minUs: Math.min(...xs),
  maxUs: Math.max(...xs)
}))
if (args.json) {
  console.log(
    JSON.stringify(
      {
        batch: BATCH,
        iterations: ITERATIONS,
        runs: RUNS,
        frameBytes: encodeCall(1, METHODS.ClientService.Multi, fixedRequest, 60000, false).length,
        rows
      },
      null,
      2
    )
  )
} else {
  console.log(`${BATCH} puts per Multi, ${REGIONS.length} regions, ${ITERATIONS} batches per run, ${RUNS} runs; CPU µs per put, median ` +
    '(min–max)')
  for (const r of rows) console.log(`${r.case.padEnd(46)} ${r.medianUs.toFixed(3)} (${r.minUs.toFixed(3)}–${r.maxUs.toFixed(3)})`)
}
if (sink < 0) console.log(sink)
