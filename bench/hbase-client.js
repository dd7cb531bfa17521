'use strict'

/**
 * Benchmark of the native HBase client against the real HBase: sequential and concurrent gets,
 * sequential puts, and access-log-shaped batched multi-puts. Writes
 * bench/results/hbase-client-<time>.{json,md}.
 *
 *   npm run bench:hbase-client -- [--gets 20000] [--concurrency 50] [--entries 200000]
 *     [--batch 500] [--warmup-seconds 20] [--bootstrap host:port,...] [--out FILE.json]
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { createHBaseClient } = require('../lib/hbase')
const { accessLogSplitKeys, bucketPrefix, DEFAULT_LOG_BUCKETS } = require('../logging/access-log-layout')
const { describeMachine, percentile, timestampForFile } = require('./lib/machine')

const { values: args } = parseArgs({
  options: {
    gets: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '50' },
    puts: { type: 'string', default: '5000' },
    entries: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '500' },
    inflight: { type: 'string', default: '4' },
    rows: { type: 'string', default: '1000' },
    'warmup-seconds': { type: 'string', default: '20' },
    bootstrap: { type: 'string' },
    out: { type: 'string' }
  }
})
const N = Object.fromEntries(Object.entries(args).filter(([k]) => !['bootstrap', 'out'].includes(k)).map(([k, v]) => [k, Number(v)]))

const CONFIG_TABLE = 'beacon_bench_config'
const LOG_TABLE = 'beacon_bench_log'

async function ensureTables (client) {
  if (!(await client.admin.tableExists(CONFIG_TABLE))) await client.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  if (!(await client.admin.tableExists(LOG_TABLE))) await client.admin.createTable(LOG_TABLE, { families: ['l'], splits: accessLogSplitKeys() })
  const puts = []
  for (let id = 1; id <= N.rows; id++) puts.push({ row: String(id), cells: { c: { json: JSON.stringify({ id, features: { a: true, b: id % 2 === 0 } }) } } })
  const failed = (await client.multiPut(CONFIG_TABLE, puts)).filter(Boolean)
  if (failed.length) throw failed[0]
}

function summarize (latencies, elapsedMs) {
  latencies.sort((a, b) => a - b)
  return {
    ops: latencies.length,
    opsPerSec: Math.round((latencies.length / elapsedMs) * 1000),
    p50Ms: +percentile(latencies, 50).toFixed(3),
    p99Ms: +percentile(latencies, 99).toFixed(3),
    maxMs: +latencies[latencies.length - 1].toFixed(3)
  }
}

async function sequentialGets (client, n) {
  const lat = new Array(n)
  const started = performance.now()
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    const row = await client.get(CONFIG_TABLE, String(1 + (i % N.rows)))
    if (!row) throw new Error('seeded row missing')
    lat[i] = performance.now() - t
  }
  return summarize(lat, performance.now() - started)
}

async function concurrentGets (client, n, concurrency) {
  const lat = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++
      const t = performance.now()
      await client.get(CONFIG_TABLE, String(1 + (i % N.rows)))
      lat.push(performance.now() - t)
    }
  }))
  return summarize(lat, performance.now() - started)
}

async function sequentialPuts (client, n) {
  const lat = new Array(n)
  const started = performance.now()
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await client.put(CONFIG_TABLE, `put-${i % 1000}`, { c: { json: `{"i":${i}}` } })
    lat[i] = performance.now() - t
  }
  return summarize(lat, performance.now() - started)
}

// Access-log-shaped entries, batched as the HBase log sink batches them.
async function batchedLogPuts (client, n, batch, inflight) {
  const entry = (i) => JSON.stringify({ ts: Date.now(), endpoint: 'sample5', id: String(1 + (i % 10000)), status: 200, ms: 0.31, ip: '127.0.0.1', ua: 'bench/1.0', ref: 'http://example.test/page' })
  const batchLat = []
  let failed = 0
  let sent = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: inflight }, async (_, worker) => {
    while (sent < n) {
      const from = sent
      const size = Math.min(batch, n - from)
      sent += size
      const puts = new Array(size)
      for (let j = 0; j < size; j++) {
        const i = from + j
        const key = `${bucketPrefix(i % DEFAULT_LOG_BUCKETS)}${String(Date.now()).padStart(13, '0')}b${worker}-${i}`
        puts[j] = { row: key, cells: { l: { e: entry(i) } } }
      }
      const t = performance.now()
      const results = await client.multiPut(LOG_TABLE, puts)
      batchLat.push(performance.now() - t)
      failed += results.filter(Boolean).length
    }
  }))
  const elapsed = performance.now() - started
  batchLat.sort((a, b) => a - b)
  return {
    entries: n,
    batch,
    inflightBatches: inflight,
    entriesPerSec: Math.round((n / elapsed) * 1000),
    batchP50Ms: +percentile(batchLat, 50).toFixed(3),
    batchP99Ms: +percentile(batchLat, 99).toFixed(3),
    failed
  }
}

async function warmUp (client, seconds) {
  const until = Date.now() + seconds * 1000
  let n = 0
  while (Date.now() < until) {
    await Promise.all(Array.from({ length: 20 }, (_, j) => client.get(CONFIG_TABLE, String(1 + ((n + j) % N.rows)))))
    n += 20
  }
  return n
}

function markdown (report) {
  const r = report.results
  const rows = [
    ['sequential gets', r.sequentialGets.opsPerSec, r.sequentialGets.p50Ms, r.sequentialGets.p99Ms],
    [`${N.concurrency} concurrent gets`, r.concurrentGets.opsPerSec, r.concurrentGets.p50Ms, r.concurrentGets.p99Ms],
    ['sequential puts', r.sequentialPuts.opsPerSec, r.sequentialPuts.p50Ms, r.sequentialPuts.p99Ms],
    [`access-log multi-puts (batch ${N.batch}, ${N.inflight} in flight)`, r.batchedLogPuts.entriesPerSec, r.batchedLogPuts.batchP50Ms, r.batchedLogPuts.batchP99Ms]
  ]
  return [
    `# HBase client benchmark — ${report.date}`,
    '',
    `Machine: ${report.machine.cores} cores, ${report.machine.cpuModel}, node ${report.machine.node}; HBase ${report.machine.hbaseVersion} standalone on ${report.bootstrap.join(', ')}.`,
    `Warm-up: ${N['warmup-seconds']} s of gets before measuring.`,
    '',
    '| workload | ops/s (entries/s) | p50 ms | p99 ms |',
    '|---|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    '(multi-put latencies are per batch.)',
    ''
  ].join('\n')
}

async function resolveBootstrap () {
  if (args.bootstrap) return args.bootstrap.split(',')
  if (process.env.BEACON_HBASE_BOOTSTRAP) return process.env.BEACON_HBASE_BOOTSTRAP.split(',')
  const infra = require('../infra/hbase')
  const info = await infra.up(infra.resolveOptions(), { log: (line) => console.error(line) })
  return info.bootstrap
}

async function main () {
  const bootstrap = await resolveBootstrap()
  const client = createHBaseClient({ bootstrap })
  try {
    await ensureTables(client)
    console.error(`warming up for ${N['warmup-seconds']} s…`)
    await warmUp(client, N['warmup-seconds'])
    const results = {}
    console.error('sequential gets…')
    results.sequentialGets = await sequentialGets(client, N.gets)
    console.error(`${N.concurrency} concurrent gets…`)
    results.concurrentGets = await concurrentGets(client, N.gets * 2, N.concurrency)
    console.error('sequential puts…')
    results.sequentialPuts = await sequentialPuts(client, N.puts)
    console.error('batched access-log multi-puts…')
    results.batchedLogPuts = await batchedLogPuts(client, N.entries, N.batch, N.inflight)
    const report = {
      date: new Date().toISOString(),
      machine: describeMachine({ hbaseVersion: process.env.BEACON_HBASE_VERSION || '2.6.1' }),
      bootstrap,
      parameters: N,
      results
    }
    const out = args.out || path.join(__dirname, 'results', `hbase-client-${timestampForFile()}.json`)
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
    fs.writeFileSync(out.replace(/\.json$/, '') + '.md', markdown(report))
    console.log(markdown(report))
    console.error(`written: ${out}`)
  } finally {
    await client.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
