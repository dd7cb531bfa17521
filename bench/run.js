'use strict'

/**
 * `npm run bench` — the seed's protocol against our server: per endpoint a warm-up, then N runs
 * of D seconds at C connections (autocannon), second-best throughput reported with that run's
 * latency; a bare node:http baseline in the same run; access-log completeness (lost: N).
 *
 *   npm run bench -- [--quick] [--out FILE.json] [--label NAME] [--connections 100]
 *     [--duration 30] [--runs 3] [--warmup 10] [--workers N] [--miss-ratio 0]
 *     [--endpoints sample1,sample2,...]
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const autocannon = require('autocannon')
const hbase = require('../infra/hbase')
const { createHBaseClient } = require('../lib/hbase')
const { accessLogSplitKeys } = require('../lib/tables')
const { loadSettings } = require('../config')
const { countLines } = require('../logging/file-sink')
const { startNode, waitForHttp } = require('./lib/processes')
const { describeMachine, timestampForFile } = require('./lib/machine')
const { secondBest, summarizeRun, withRatios, markdownReport } = require('./lib/report')

const ROOT = path.join(__dirname, '..')
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    label: { type: 'string' },
    connections: { type: 'string' },
    duration: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    workers: { type: 'string' },
    'miss-ratio': { type: 'string', default: '0' },
    'hbase-warmup': { type: 'string' },
    'id-range': { type: 'string', default: '10000' },
    endpoints: { type: 'string' },
    port: { type: 'string', default: '4100' }
  }
})

const params = {
  label: args.label || (args.quick ? 'quick' : 'full'),
  connections: Number(args.connections || 100),
  durationSeconds: Number(args.duration || (args.quick ? 5 : 30)),
  runs: Number(args.runs || (args.quick ? 1 : 3)),
  warmupSeconds: Number(args.warmup || (args.quick ? 2 : 10)),
  workers: Number(args.workers || os.availableParallelism()),
  missRatio: Number(args['miss-ratio']),
  idRange: Number(args['id-range']),
  // A freshly started HBase serves about half as fast for its first minute (JIT): warm it first.
  hbaseWarmupSeconds: Number(args['hbase-warmup'] || (args.quick ? 15 : 45))
}
const port = Number(args.port)
const adminPort = port + 1
const baselinePort = port + 2
const log = (line) => process.stderr.write(line + '\n')

/** Request path for one request: ids from 1..idRange, or absent ids at missRatio. */
function pathFor (endpoint) {
  return () => {
    const id = Math.random() < params.missRatio
      ? `absent${Math.floor(Math.random() * 1e9)}`
      : String(1 + Math.floor(Math.random() * params.idRange))
    return `/api/${endpoint}.js?id=${id}&callback=EXAMPLE.process`
  }
}

/**
 * Warm-up paths: every id in order, several times over, so each worker's cache sees each id
 * whichever connection (and so worker) carries it. Measured runs then draw ids at random.
 */
function sweepFor (endpoint, passes) {
  let k = 0
  return () => {
    const id = 1 + (Math.floor(k++ / passes) % params.idRange)
    return `/api/${endpoint}.js?id=${id}&callback=EXAMPLE.process`
  }
}

function load (url, pickPath, limit) {
  return autocannon({
    url,
    connections: params.connections,
    pipelining: 1,
    ...limit,
    requests: [{ setupRequest: (req) => ({ ...req, path: pickPath() }) }]
  })
}

/**
 * Warm-up plus measured runs; returns the reported (second-best) run, the 2xx total and the
 * requests sent (a response still in flight when a run stops is sent but not counted).
 */
async function measure (name, url, pickPath, warmPath) {
  const sweep = params.idRange * params.workers * 3
  log(`${name}: warm-up ${params.warmupSeconds} s${warmPath ? ` + a sweep of ${sweep} requests over all ids` : ''}`)
  const warm = await load(url, pickPath, { duration: params.warmupSeconds })
  let ok = warm['2xx']
  let sent = warm.requests.sent
  if (warmPath) {
    const swept = await load(url, warmPath, { amount: sweep })
    ok += swept['2xx']
    sent += swept.requests.sent
  }
  const runs = []
  for (let i = 0; i < params.runs; i++) {
    const result = await load(url, pickPath, { duration: params.durationSeconds })
    ok += result['2xx']
    sent += result.requests.sent
    const summary = summarizeRun(result)
    log(`${name}: run ${i + 1}/${params.runs}: ${summary.rps} req/s, mean ${summary.latencyMean} ms, p99 ${summary.p99} ms, non2xx ${summary.non2xx}, errors ${summary.errors}`)
    runs.push(summary)
  }
  return { reported: secondBest(runs), runs, ok, sent }
}

/** Concurrent config reads for `seconds`, so HBase's JIT is warm before anything is measured. */
async function warmHBase (client, table, seconds) {
  const until = Date.now() + seconds * 1000
  let reads = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (Date.now() < until) {
      const ids = Array.from({ length: 8 }, () => String(1 + Math.floor(Math.random() * params.idRange)))
      await client.multiGet(table, ids)
      reads += ids.length
    }
  }))
  return reads
}

/** Polls until the access-log count stops short of nothing (or stops moving), bounded. */
async function settleCount (count, expected, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs
  let last = -1
  let stableSince = Date.now()
  for (;;) {
    const n = await count()
    if (n >= expected) return n
    if (n !== last) {
      last = n
      stableSince = Date.now()
    }
    if (Date.now() > deadline || Date.now() - stableSince > 15000) return n
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

async function main () {
  const started = new Date()
  const hbaseOptions = hbase.resolveOptions()
  const { bootstrap } = await hbase.up(hbaseOptions, { log })
  const stateDir = path.join(ROOT, '.state', 'bench', timestampForFile(started))
  fs.mkdirSync(stateDir, { recursive: true })
  const accessLogTable = `beacon_bench_access_log_${timestampForFile(started).replace(/-/g, '').replace('T', '_')}`
  const client = createHBaseClient({ bootstrap })
  await client.admin.createTable(accessLogTable, { families: ['l'], splits: accessLogSplitKeys() })

  const env = {
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    HOST: '127.0.0.1',
    BEACON_WORKERS: String(params.workers),
    BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
    BEACON_STATE_DIR: stateDir,
    BEACON_ACCESS_LOG_TABLE: accessLogTable,
    BEACON_LOG_LEVEL: 'warn'
  }
  const settings = loadSettings({ env: { ...process.env, ...env } })
  log(`warming HBase for ${params.hbaseWarmupSeconds} s…`)
  const warmReads = await warmHBase(client, settings.hbase.configTable, params.hbaseWarmupSeconds)
  log(`HBase warm-up: ${warmReads} reads`)
  const names = args.endpoints ? args.endpoints.split(',') : Object.keys(settings.endpoints)
  const server = startNode(path.join(ROOT, 'server.js'), [], { env, log, name: 'beacon' })
  const baseline = startNode(path.join(__dirname, 'baseline-server.js'), [String(baselinePort), String(params.workers)], { log, name: 'baseline' })
  const endpoints = {}
  let baselineSummary
  try {
    await waitForHttp(`http://127.0.0.1:${port}/api/${names[0]}.js?id=1`, { child: server })
    await waitForHttp(`http://127.0.0.1:${baselinePort}/`, { child: baseline })

    // Same path generator as the endpoints, so the load generator does the same work.
    baselineSummary = (await measure('baseline', `http://127.0.0.1:${baselinePort}`, pathFor('sample1'))).reported
    await baseline.stop()

    const served = {}
    const sent = {}
    for (const name of names) {
      const cached = settings.endpoints[name].cache.type !== 'off'
      const result = await measure(name, `http://127.0.0.1:${port}`, pathFor(name), cached ? sweepFor(name, params.workers * 3) : null)
      endpoints[name] = result.reported
      served[name] = result.ok
      sent[name] = result.sent
    }

    // Completeness: every 2xx must have left exactly one access-log entry.
    for (const name of names) {
      const sinks = settings.endpoints[name].accessLog
      if (!sinks.length) continue
      const found = {}
      for (const sinkName of sinks) {
        const sink = settings.logSinks[sinkName]
        // Other endpoints may share a sink: only count when this endpoint is its only writer.
        const writers = names.filter((n) => settings.endpoints[n].accessLog.includes(sinkName))
        const expected = writers.reduce((n, w) => n + served[w], 0)
        const upper = writers.reduce((n, w) => n + sent[w], 0)
        found[sinkName] = sink.type === 'file'
          ? await settleCount(async () => countLines(path.dirname(sink.path)), expected)
          : await settleCount(() => client.count(sink.table), expected)
        // Responses in flight when a run stopped were logged but not counted by autocannon, so
        // the count may exceed the 2xx seen, by at most the requests sent and not counted.
        endpoints[name].lost = Math.max(0, expected - found[sinkName])
        endpoints[name].duplicates = Math.max(0, found[sinkName] - upper)
      }
      log(`${name}: 2xx seen ${served[name]}, sent ${sent[name]}; access-log entries ${JSON.stringify(found)}; lost: ${endpoints[name].lost}, duplicates: ${endpoints[name].duplicates}`)
    }
  } finally {
    await server.stop()
    await baseline.stop()
    await client.admin.deleteTable(accessLogTable).catch(() => {})
    await client.close()
  }

  const report = {
    date: started.toISOString(),
    machine: describeMachine({ hbaseVersion: hbaseOptions.version, topology: 'loopback (single host: load generator, server and HBase share 2 cores)', netem: 'none' }),
    parameters: params,
    endpoints: withRatios(endpoints, 'sample1'),
    baseline: baselineSummary
  }
  const out = args.out || path.join(__dirname, 'results', `${timestampForFile(started)}-${params.label}.json`)
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true })
  fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
  const md = markdownReport(report)
  const mdOut = args.out ? out.replace(/\.json$/, '') + '.md' : path.join(__dirname, 'results', `${timestampForFile(started)}-${params.label}.md`)
  fs.writeFileSync(mdOut, md)
  fs.rmSync(stateDir, { recursive: true, force: true })
  console.log(md)
  log(`written: ${out} and ${mdOut}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
