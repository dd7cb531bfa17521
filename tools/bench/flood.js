'use strict'

/**
 * A flood you can run (issue 35): `npm run bench:flood` starts a real `server.js` (2 workers, on
 * the running HBase, a config table of its own with --ids ids and an access log of its own) with
 * the per-client limits at their defaults (the report states them), and sends, open loop:
 *
 * - real visitors: --visitors-rate req/s of sample5 (HBase config, cached, logged to HBase), ids
 *   drawn Zipf(1.1) over --ids known ids, from 40 loopback addresses, a browser's user agent;
 * - a bot flood: --bots-rate req/s of sample5 with an id never seen before each, from 200 other
 *   addresses (each under the limit: a distributed flood), a crawler's user agent;
 * - one greedy client: --greedy-rate req/s of new ids from one address, and --greedy-streams change
 *   streams it opens and holds.
 *
 * A warm-up of visitors alone, then --rounds rounds of a baseline (visitors alone, --seconds) and
 * the flood (everything, --seconds): the cache keeps warming for minutes (its stale window is
 * 5), and the visitors' own misses make their p99, so baselines and floods take turns and each
 * side is the mean of its rounds. The greedy client opens its streams at each flood and lets
 * them go after it. Reported: the visitors' p99 and cache hit ratio
 * in each (hits and stale hits over their lookups: every bot id is new, so bots add misses
 * only), each source in a process of its own (tools/bench/lib/flood-load.js), 429s by source, the
 * streams the greedy client got, the access log's rows against the views answered (all sources),
 * and how long after the load the rollups were exact. Not part of `npm test`. Writes
 * tools/bench/results/<timestamp>-flood.md (and .json).
 *
 *   node tools/bench/flood.js [--rounds 3] [--seconds 20] [--warmup-seconds 60] [--visitors-rate 400] [--bots-rate 1200]
 *     [--greedy-rate 2000] [--greedy-streams 3000] [--ids 100000] [--port 4420] [--bootstrap host:port,...]
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const hbase = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { spawn, execFileSync } = require('node:child_process')
const { startNode, waitForHttp, firstJsonLine } = require('./lib/processes')
const { GREEDY_ADDRESS } = require('./lib/flood-load')
const { seedConfigRows } = require('./lib/config-seed')
const { describeMachine } = require('./lib/machine')
const { writeResult } = require('./lib/result-files')
const { openStreams } = require('./lib/flood-streams')
const { floodMarkdown } = require('./lib/flood-report')
const {
  tables: { accessLogSplitKeys, ACCESS_LOG_FAMILY, ROLLUP_FAMILY },
  settings: { DEFAULTS, OFREP_DEFAULTS }
} = require('../../index.js')

const ROOT = path.resolve(__dirname, '..', '..')
const TOKEN = 'flood-bench-token-0123456789-01234'
const FLOOD_LOAD = path.join(__dirname, 'lib', 'flood-load.js')
const GREEDY = GREEDY_ADDRESS

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '20' },
    'warmup-seconds': { type: 'string', default: '60' },
    'visitors-rate': { type: 'string', default: '400' },
    'bots-rate': { type: 'string', default: '1200' },
    'greedy-rate': { type: 'string', default: '2000' },
    'greedy-streams': { type: 'string', default: '3000' },
    ids: { type: 'string', default: '100000' },
    port: { type: 'string', default: '4420' },
    bootstrap: { type: 'string' },
    out: { type: 'string' }
  }
})
const SECONDS = Number(args.seconds)
const PORT = Number(args.port)
const IDS = Number(args.ids)
const log = (line) => process.stderr.write(line + '\n')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const admin = (p) => fetch(`http://127.0.0.1:${PORT + 1}${p}`, { headers: { Authorization: `Bearer ${TOKEN}` } })
/** @param {string} p @returns {Promise<any>} the admin API's JSON answer */
const adminJson = async (p) => (await admin(p)).json()

/** @returns {{ busy: number, total: number }} the machine's CPU ticks so far, from /proc/stat */
function cpuTicks () {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)
  const ticks = fields.map(Number)
  const total = ticks.reduce((a, b) => a + b, 0)
  return { busy: total - ticks[3] - (ticks[4] || 0), total } // idle and iowait are not busy
}

/**
 * Summed over the workers: the sample5 lookups that were hits (fresh or stale), the config reads
 * sent to HBase (RPCs), and the lookups the known-id filter answered without one.
 * @returns {Promise<{ hits: number, configRpcs: number, skipped: number }>}
 */
async function serverCounts () {
  const text = await (await admin('/metrics')).text()
  const sum = (re) => text.split('\n').reduce((n, line) => n + Number((re.exec(line) || [])[1] || 0), 0)
  return {
    hits: sum(/^beacon_config_lookups_total\{endpoint="sample5",outcome="(?:hit|stale)"\} (\d+)/),
    configRpcs: sum(/^beacon_hbase_rpcs_total\{kind="config",method="(?:Get|Multi)"\} (\d+)/),
    skipped: sum(/^beacon_config_reads_skipped_total (\d+)/)
  }
}

/**
 * The sources of a phase, each in a process of its own (tools/bench/lib/flood-load.js); `flood`
 * false: the visitors alone.
 * @returns {Promise<Array<{ source: string, summary: object, sent: number, byStatus: Record<string, number> }>>}
 */
function load ({ flood, durationMs }) {
  const rates = { visitors: Number(args['visitors-rate']), bots: Number(args['bots-rate']), greedy: Number(args['greedy-rate']) }
  const sources = flood ? ['visitors', 'bots', 'greedy'] : ['visitors']
  return Promise.all(sources.map((source) => {
    const job = JSON.stringify({ source, port: PORT, rate: rates[source], durationMs, ids: IDS })
    const child = spawn(process.execPath, [FLOOD_LOAD, job], { stdio: ['ignore', 'pipe', 'inherit'] })
    return firstJsonLine(child, durationMs + 60000, `flood-load ${source}`)
  }))
}

/** A phase: its runs, and the visitors' p99 and hit ratio over it. */
async function phase (name, flood, durationMs, counts) {
  log(`${name}: ${durationMs / 1000} s${flood ? ', with the flood' : ''}`)
  const before = await serverCounts()
  const cpuBefore = cpuTicks()
  const runs = await load({ flood, durationMs })
  const cpuAfter = cpuTicks()
  const after = await serverCounts()
  const hits = after.hits - before.hits
  /** @type {Record<string, { sent: number, byStatus: Record<string, number> }>} */
  const mine = {}
  for (const { source, sent, byStatus } of runs) {
    mine[source] = { sent, byStatus }
    const all = (counts[source] ??= { sent: 0, byStatus: {} })
    all.sent += sent
    for (const [status, n] of Object.entries(byStatus)) all.byStatus[status] = (all.byStatus[status] || 0) + n
  }
  const visitors = runs[0]
  const looked = visitors.sent - (visitors.byStatus[429] || 0) - (visitors.byStatus[0] || 0)
  // Every process of the machine (server, HBase, the generators): how much room the phase left.
  const cpuBusy = (cpuAfter.busy - cpuBefore.busy) / Math.max(1, cpuAfter.total - cpuBefore.total)
  const configRpcs = after.configRpcs - before.configRpcs
  const readsSkipped = after.skipped - before.skipped
  const hitRatio = looked > 0 ? hits / looked : null
  return { name, visitors: visitors.summary, hitRatio, cpuBusy, configRpcs, readsSkipped, bySource: mine }
}

/** Polls until `read` returns what `done` accepts, or `boundMs` passes; returns the last value and the wait. */
async function waitFor (read, done, boundMs) {
  const started = Date.now()
  let value = await read()
  while (!done(value) && Date.now() - started < boundMs) {
    await sleep(1000)
    value = await read()
  }
  return { value, waitedMs: Date.now() - started, met: done(value) }
}

async function main () {
  const opts = hbase.resolveOptions()
  if (!args.bootstrap && !(await hbase.status(opts)).running) throw new Error('HBase is not running: npm run hbase:up (or --bootstrap)')
  const bootstrap = args.bootstrap ? args.bootstrap.split(',') : [`${opts.host}:${opts.rsPort}`, `${opts.host}:${opts.masterPort}`]
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-flood-bench-'))
  const tag = Date.now().toString(36)
  const tables = { config: `bench_flood_cfg_${tag}`, log: `bench_flood_log_${tag}`, rollup: `bench_flood_rollup_${tag}` }
  const client = createHBaseClient({ bootstrap })
  await client.admin.createTable(tables.config, { families: [DEFAULTS.hbase.configFamily] })
  await client.admin.createTable(tables.log, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(16, 4) })
  await client.admin.createTable(tables.rollup, { families: [ROLLUP_FAMILY] })
  log(`seeding ${IDS} ids into ${tables.config}`)
  await seedConfigRows({ client, table: tables.config, ids: IDS, log })
  // The defaults, said out loud; no trusted proxy, so the greedy client's address is its own
  // for the connection share too (loopback is trusted by default).
  const { maxStreams, maxStreamsPerClient } = OFREP_DEFAULTS
  const limits = {
    rateLimit: { ...DEFAULTS.rateLimit, trustedProxies: [] },
    http: DEFAULTS.http,
    ofrep: { maxStreams, maxStreamsPerClient }
  }
  const settingsFile = path.join(stateDir, 'settings.json')
  fs.writeFileSync(settingsFile, JSON.stringify({ rateLimit: limits.rateLimit }))
  const server = startNode(path.join(ROOT, 'server.js'), [], {
    env: {
      PORT: String(PORT),
      ADMIN_PORT: String(PORT + 1),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '2',
      BEACON_STATE_DIR: stateDir,
      BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
      BEACON_CONFIG_TABLE: tables.config,
      BEACON_ACCESS_LOG_TABLE: tables.log,
      BEACON_ACCESS_ROLLUP_TABLE: tables.rollup,
      BEACON_ADMIN_TOKEN: TOKEN,
      BEACON_CONFIG_FILE: settingsFile,
      BEACON_RATE_LIMIT: `${DEFAULTS.rateLimit.perSecond}:${DEFAULTS.rateLimit.burst}`,
      BEACON_LOG_LEVEL: 'warn'
    },
    log,
    name: 'server'
  })
  const report = {
    command: `node tools/bench/flood.js ${process.argv.slice(2).join(' ')}`.trim(),
    commit: execFileSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' }).trim(),
    machine: describeMachine(),
    settings: {
      workers: 2,
      ids: IDS,
      seconds: SECONDS,
      rounds: Number(args.rounds),
      rates: { visitors: Number(args['visitors-rate']), bots: Number(args['bots-rate']), greedy: Number(args['greedy-rate']) },
      greedyStreams: Number(args['greedy-streams']),
      limits
    }
  }
  let streams = null
  try {
    await waitForHttp(`http://127.0.0.1:${PORT + 1}/readyz`, { child: server, timeoutMs: 60000 })
    const counts = {}
    const from = Date.now() - 1000
    await phase('warm-up', false, Number(args['warmup-seconds']) * 1000, counts)
    const phases = []
    const streamCount = Number(args['greedy-streams'])
    report.streams = { asked: 0, opened: 0, byStatus: {} }
    for (let round = 1; round <= Number(args.rounds); round++) {
      phases.push(await phase(`baseline ${round}`, false, SECONDS * 1000, counts))
      log(`opening ${streamCount} streams from ${GREEDY}`)
      streams = await openStreams({ port: PORT, localAddress: GREEDY, count: streamCount, path: '/api/sample5/changes?id=1' })
      phases.push(await phase(`flood ${round}`, true, SECONDS * 1000, counts))
      const got = streams.summary()
      streams.close()
      report.streams.asked += got.asked
      report.streams.opened += got.opened
      for (const [status, n] of Object.entries(got.byStatus)) report.streams.byStatus[status] = (report.streams.byStatus[status] || 0) + n
    }
    const loadEnd = Date.now()
    const answered = Object.values(counts).reduce((n, c) => n + c.sent - (c.byStatus[429] || 0) - (c.byStatus[0] || 0), 0)
    const to = loadEnd + 2000
    const range = `from=${from}&to=${to}&endpoint=sample5`
    const countRows = async () => (await adminJson(`/admin/log/count?${range}&scan=1`)).total
    const rows = await waitFor(countRows, (n) => n >= answered, 60000)
    log('waiting for the rollups to be exact')
    const exact = await waitFor(() => adminJson(`/admin/log/check?from=${from}&to=${to}`),
      (c) => c.exact === true && c.marked.length === 0, 180000)
    const byBot = (await adminJson(`/admin/log/count?${range}&by=bot`)).groups
    report.phases = phases
    report.counts = counts
    const rollups = { exact: exact.met, lagMs: Date.now() - loadEnd, minutes: exact.value.minutes }
    report.log = { answered, rows: rows.value, byBot, rollups }
  } finally {
    if (streams) streams.close()
    await server.stop(20000)
    for (const table of Object.values(tables)) await client.admin.deleteTable(table).catch(() => {})
    await client.close()
    fs.rmSync(stateDir, { recursive: true, force: true })
  }
  const file = writeResult({ out: args.out, name: 'flood', report, markdown: floodMarkdown(report) })
  log(`wrote ${file}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
