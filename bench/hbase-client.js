'use strict'

/**
 * Benchmark of the native HBase client against the real HBase: sequential and concurrent gets,
 * coalesced multi-gets (as the config source reads), sequential puts, and access-log-shaped
 * batched multi-puts; with the CPU each op costs the HBase JVM (/proc, see lib/proc-sampler.js)
 * and this client process (process.cpuUsage). Writes bench/results/hbase-client-<time>.{json,md}.
 *
 * --cell-blocks both compares cells inline in protobuf (off) with KeyValueCodec cell blocks (on)
 * in one run: --rounds rounds of off then on, each mode on its own warmed client, and writes
 * bench/results/hbase-client-cellblocks-<time>.{json,md} with medians and ranges per op.
 *
 *   npm run bench:hbase-client -- [--gets 20000] [--concurrency 50] [--entries 200000]
 *     [--batch 500] [--multi-get 20] [--warmup-seconds 20] [--cell-blocks off|on|both]
 *     [--rounds 1] [--workloads name,...] [--bootstrap host:port,... --hbase-pid PID]
 *     [--own-hbase [--stop-hbase]] [--out FILE.json]
 *
 * --own-hbase runs on an HBase instance of its own (.state/hbase-bench-client, ports 2381,
 * 17100, 17120), so other people's tests do not add to the JVM's CPU; --stop-hbase stops it after.
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { createHBaseClient } = require('../lib/hbase')
const { accessLogSplitKeys, bucketPrefix, DEFAULT_LOG_BUCKETS } = require('../logging/access-log-layout')
const { describeMachine, percentile, timestampForFile } = require('./lib/machine')
const { createSampler } = require('./lib/proc-sampler')
const { HBASE_RPC_THREADS, readNamedThreads, threadCpuUs } = require('./lib/thread-cpu')

const { values: args } = parseArgs({
  options: {
    gets: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '50' },
    puts: { type: 'string', default: '5000' },
    entries: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '500' },
    inflight: { type: 'string', default: '4' },
    rows: { type: 'string', default: '1000' },
    'multi-get': { type: 'string', default: '20' },
    'warmup-seconds': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    'cell-blocks': { type: 'string', default: 'off' },
    workloads: { type: 'string', default: 'sequentialGets,concurrentGets,multiGets,sequentialPuts,batchedLogPuts' },
    'hbase-pid': { type: 'string' },
    'own-hbase': { type: 'boolean', default: false },
    'stop-hbase': { type: 'boolean', default: false },
    bootstrap: { type: 'string' },
    out: { type: 'string' }
  }
})
const TEXT_ARGS = ['bootstrap', 'out', 'cell-blocks', 'workloads', 'hbase-pid', 'own-hbase', 'stop-hbase']
const N = Object.fromEntries(Object.entries(args).filter(([k]) => !TEXT_ARGS.includes(k)).map(([k, v]) => [k, Number(v)]))
const MODES = { off: ['off'], on: ['on'], both: ['off', 'on'] }[args['cell-blocks']]
if (!MODES) throw new Error('--cell-blocks must be off, on or both')

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

// Config reads as the HBase config source makes them: the ids of one event-loop turn in one
// multi-get, `concurrency / size` of them in flight.
async function multiGets (client, n, size, concurrency) {
  const lat = []
  let next = 0
  let missing = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(concurrency / size)) }, async () => {
    while (next < n) {
      const from = next
      const rows = Array.from({ length: Math.min(size, n - from) }, (_, j) => String(1 + ((from + j) % N.rows)))
      next += rows.length
      const t = performance.now()
      const results = await client.multiGet(CONFIG_TABLE, rows)
      lat.push(performance.now() - t)
      missing += results.filter((r) => !r || r instanceof Error).length
    }
  }))
  if (missing) throw new Error(`${missing} multi-get rows missing or failed`)
  return { ...summarize(lat, performance.now() - started), ops: n, opsPerSec: Math.round((n / (performance.now() - started)) * 1000), size }
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

// Gets, multi-gets and log multi-puts in turn, so every path measured is compiled (JIT) on both
// sides before the first round.
async function warmUp (client, seconds) {
  const until = Date.now() + seconds * 1000
  let n = 0
  while (Date.now() < until) {
    await Promise.all(Array.from({ length: 20 }, (_, j) => client.get(CONFIG_TABLE, String(1 + ((n + j) % N.rows)))))
    await multiGets(client, 200, N['multi-get'], N.concurrency)
    await batchedLogPuts(client, 2000, N.batch, N.inflight)
    n += 20
  }
  return n
}

/** workload name → [label, run(client), ops it performs] */
const WORKLOADS = {
  sequentialGets: ['sequential gets', (c) => sequentialGets(c, N.gets), () => N.gets],
  concurrentGets: [`${N.concurrency} concurrent gets`, (c) => concurrentGets(c, N.gets * 2, N.concurrency), () => N.gets * 2],
  multiGets: [`multi-gets of ${N['multi-get']} (${N.concurrency} rows in flight)`, (c) => multiGets(c, N.gets * 2, N['multi-get'], N.concurrency), () => N.gets * 2],
  sequentialPuts: ['sequential puts', (c) => sequentialPuts(c, N.puts), () => N.puts],
  batchedLogPuts: [`access-log multi-puts (batch ${N.batch}, ${N.inflight} in flight)`, (c) => batchedLogPuts(c, N.entries, N.batch, N.inflight), () => N.entries]
}

/**
 * Runs one workload, with the CPU the HBase JVM and this process spent on it, per op.
 * @returns {Promise<object>}
 */
async function measured (name, client, hbasePid, idleUsPerSec) {
  const [, run, opsOf] = WORKLOADS[name]
  const sampler = createSampler({ hbase: () => [hbasePid] })
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  sampler.start()
  const rpc0 = hbasePid ? readNamedThreads(hbasePid, HBASE_RPC_THREADS) : null
  const result = await run(client)
  const rpcUs = hbasePid ? threadCpuUs(rpc0, readNamedThreads(hbasePid, HBASE_RPC_THREADS)) : null
  const roles = sampler.stop()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const ops = opsOf()
  const hbaseUs = hbasePid ? roles.hbase.cpuUs : null
  return {
    ...result,
    seconds: +seconds.toFixed(2),
    hbaseCpuUsPerOp: hbaseUs == null ? null : +(hbaseUs / ops).toFixed(2),
    // Less what the JVM spends idle over as long (chores, GC, other clients): the ops' own share.
    hbaseNetCpuUsPerOp: hbaseUs == null || idleUsPerSec == null ? null : +((hbaseUs - idleUsPerSec * seconds) / ops).toFixed(2),
    // Only the threads that decode, run and answer calls (no compactions, flushes, GC, chores).
    hbaseRpcCpuUsPerOp: rpcUs == null ? null : +(rpcUs / ops).toFixed(2),
    clientCpuUsPerOp: +((cpu.user + cpu.system) / ops).toFixed(2),
    hbaseCpuSource: roles.hbase.cpuSource
  }
}

function median (values) {
  const s = values.filter((v) => v != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : +((s[s.length / 2 - 1] + s[s.length / 2]) / 2).toFixed(2)
}

/** Per workload and mode: median and range over the rounds of each figure. */
function summarizeRounds (rounds, names) {
  const out = {}
  for (const name of names) {
    out[name] = {}
    for (const mode of MODES) {
      const runs = rounds.map((r) => r[mode][name])
      const stat = (key) => {
        const v = runs.map((x) => x[key]).filter((x) => x != null)
        return { median: median(v), min: v.length ? Math.min(...v) : null, max: v.length ? Math.max(...v) : null }
      }
      out[name][mode] = { hbaseCpuUsPerOp: stat('hbaseCpuUsPerOp'), hbaseNetCpuUsPerOp: stat('hbaseNetCpuUsPerOp'), hbaseRpcCpuUsPerOp: stat('hbaseRpcCpuUsPerOp'), clientCpuUsPerOp: stat('clientCpuUsPerOp'), opsPerSec: stat('opsPerSec'), entriesPerSec: stat('entriesPerSec') }
    }
    if (MODES.length > 1) {
      // Paired within each round (on minus off), so slow drift and other load cancel out.
      const diff = (key) => {
        const v = rounds.map((r) => r.on[name][key] != null && r.off[name][key] != null ? +(r.on[name][key] - r.off[name][key]).toFixed(2) : null).filter((x) => x != null)
        return { median: median(v), min: v.length ? Math.min(...v) : null, max: v.length ? Math.max(...v) : null, lower: v.filter((x) => x < 0).length, of: v.length }
      }
      out[name].onMinusOff = { hbaseCpuUsPerOp: diff('hbaseCpuUsPerOp'), hbaseNetCpuUsPerOp: diff('hbaseNetCpuUsPerOp'), hbaseRpcCpuUsPerOp: diff('hbaseRpcCpuUsPerOp'), clientCpuUsPerOp: diff('clientCpuUsPerOp') }
    }
  }
  return out
}

/** CPU the HBase JVM spends per second while this client sends nothing (chores, GC, others' calls). */
async function idleCpuUsPerSec (hbasePid, seconds = 5) {
  if (!hbasePid) return null
  const sampler = createSampler({ hbase: () => [hbasePid] })
  sampler.start()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const us = sampler.stop().hbase.cpuUs
  return us == null ? null : Math.round(us / seconds)
}

const fmt = (s) => s.median == null ? '–' : `${s.median} (${s.min}–${s.max})`

function markdown (report) {
  const names = report.workloads
  const lines = [
    `# HBase client benchmark${MODES.length > 1 ? ': cells inline vs cell blocks' : ''} — ${report.date}`,
    '',
    `Machine: ${report.machine.cores} cores, ${report.machine.cpuModel}, node ${report.machine.node}; HBase ${report.machine.hbaseVersion} standalone on ${report.bootstrap.join(', ')}` +
      ` (JVM pid ${report.hbasePid ?? 'unknown'}${args['own-hbase'] ? ', an instance of its own' : ''}).`,
    `Warm-up: ${N['warmup-seconds']} s of gets, multi-gets and log multi-puts per client before measuring; ${N.rounds} round(s)` +
      (MODES.length > 1 ? `, ${MODES.join(' then ')} in odd rounds and the other way round in even ones.` : '.'),
    'CPU per op: the HBase JVM\'s (utime+stime from /proc, to the µs from its threads\' schedstat), that of its RPC threads alone (RpcServer.* handlers and RS-EventLoopGroup netty loops: they decode, run and answer the calls; no compactions, flushes, GC or chores) and this client process\'s (process.cpuUsage), divided by the ops (entries for multi-puts, rows for multi-gets).',
    '',
    '| workload | cell blocks | ops/s (entries/s) | HBase CPU µs/op | HBase, less idle, µs/op | HBase RPC threads µs/op | client CPU µs/op |',
    '|---|---|---:|---:|---:|---:|---:|'
  ]
  for (const name of names) {
    for (const mode of MODES) {
      const s = report.summary[name][mode]
      const rate = s.entriesPerSec.median != null ? s.entriesPerSec : s.opsPerSec
      lines.push(`| ${WORKLOADS[name][0]} | ${mode} | ${fmt(rate)} | ${fmt(s.hbaseCpuUsPerOp)} | ${fmt(s.hbaseNetCpuUsPerOp)} | ${fmt(s.hbaseRpcCpuUsPerOp)} | ${fmt(s.clientCpuUsPerOp)} |`)
    }
  }
  lines.push('', 'Medians over the rounds, (min–max) in brackets.', '')
  if (MODES.length > 1) {
    lines.push('Paired within each round, cell blocks on minus off (negative: cell blocks cost less); "lower in" counts the rounds where on was lower:', '',
      '| workload | HBase CPU µs/op, on − off | lower in | HBase less idle | lower in | HBase RPC threads | lower in | client CPU µs/op | lower in |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    const cell = (d) => `${fmt(d)} | ${d.lower}/${d.of}`
    for (const name of names) {
      const d = report.summary[name].onMinusOff
      lines.push(`| ${WORKLOADS[name][0]} | ${cell(d.hbaseCpuUsPerOp)} | ${cell(d.hbaseNetCpuUsPerOp)} | ${cell(d.hbaseRpcCpuUsPerOp)} | ${cell(d.clientCpuUsPerOp)} |`)
    }
    lines.push('')
  }
  if (report.idleHBaseCpuUsPerSec != null) {
    lines.push(`The HBase JVM idle (this client sending nothing) spent ${report.idleHBaseCpuUsPerSec} µs CPU per second before the rounds, ` +
      `${report.rounds.map((r) => r.idleHBaseCpuUsPerSec).join(', ')} before each round (2 s each); "less idle" subtracts that rate over each workload's duration.`, '')
  }
  if (N.rounds > 1 || MODES.length > 1) {
    for (const [key, what] of [['hbaseCpuUsPerOp', 'HBase JVM'], ['hbaseRpcCpuUsPerOp', 'HBase RPC threads']]) {
      lines.push(`Each round (order in brackets), ${what} CPU µs/op:`, '', `| round | ${names.flatMap((n) => MODES.map((m) => `${n} ${m}`)).join(' | ')} |`, `|---|${names.flatMap(() => MODES.map(() => '---:')).join('|')}|`)
      report.rounds.forEach((r, i) => lines.push(`| ${i + 1} (${r.order.join(', ')}) | ${names.flatMap((n) => MODES.map((m) => r[m][n][key] ?? '–')).join(' | ')} |`))
      lines.push('')
    }
  }
  return lines.join('\n')
}

// Ports and state dir of the bench's own instance (see the header).
function ownHBaseOptions () {
  const infra = require('../infra/hbase')
  return infra.resolveOptions({ stateDir: path.join(__dirname, '..', '.state', 'hbase-bench-client'), zkPort: 2381, masterPort: 17100, rsPort: 17120, masterInfoPort: -1, rsInfoPort: -1, seedCount: 100 })
}

/** @returns {Promise<{ bootstrap: string[], pid: number|null }>} */
async function resolveHBase () {
  const pid = args['hbase-pid'] ? Number(args['hbase-pid']) : null
  if (args.bootstrap) return { bootstrap: args.bootstrap.split(','), pid }
  if (process.env.BEACON_HBASE_BOOTSTRAP) return { bootstrap: process.env.BEACON_HBASE_BOOTSTRAP.split(','), pid }
  const infra = require('../infra/hbase')
  const info = await infra.up(args['own-hbase'] ? ownHBaseOptions() : infra.resolveOptions(), { log: (line) => console.error(line) })
  return { bootstrap: info.bootstrap, pid: info.pid }
}

async function main () {
  const names = args.workloads.split(',').map((s) => s.trim()).filter(Boolean)
  for (const name of names) if (!WORKLOADS[name]) throw new Error(`unknown workload ${name}; known: ${Object.keys(WORKLOADS).join(', ')}`)
  const { bootstrap, pid } = await resolveHBase()
  const clients = Object.fromEntries(MODES.map((mode) => [mode, createHBaseClient({ bootstrap, cellBlocks: mode === 'on' })]))
  try {
    await ensureTables(clients[MODES[0]])
    for (const mode of MODES) {
      console.error(`warming up the cell-blocks ${mode} client for ${N['warmup-seconds']} s…`)
      await warmUp(clients[mode], N['warmup-seconds'])
    }
    const idleHBaseCpuUsPerSec = await idleCpuUsPerSec(pid)
    const rounds = []
    for (let round = 1; round <= N.rounds; round++) {
      // Off first in odd rounds, on first in even ones (A B B A …): a JVM still getting faster, or
      // load that comes and goes, favours neither mode.
      const order = round % 2 ? MODES : [...MODES].reverse()
      const results = { order, idleHBaseCpuUsPerSec: await idleCpuUsPerSec(pid, 2) }
      for (const mode of order) {
        results[mode] = {}
        for (const name of names) {
          console.error(`round ${round}/${N.rounds}, cell blocks ${mode}: ${name}…`)
          results[mode][name] = await measured(name, clients[mode], pid, results.idleHBaseCpuUsPerSec)
        }
      }
      rounds.push(results)
    }
    const report = {
      date: new Date().toISOString(),
      machine: describeMachine({ hbaseVersion: process.env.BEACON_HBASE_VERSION || '2.6.1' }),
      bootstrap,
      hbasePid: pid,
      idleHBaseCpuUsPerSec,
      parameters: { ...N, cellBlocks: args['cell-blocks'], ownHBase: args['own-hbase'] },
      workloads: names,
      summary: summarizeRounds(rounds, names),
      rounds
    }
    const base = MODES.length > 1 ? 'hbase-client-cellblocks' : 'hbase-client'
    const out = args.out || path.join(__dirname, 'results', `${base}-${timestampForFile()}.json`)
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
    fs.writeFileSync(out.replace(/\.json$/, '') + '.md', markdown(report))
    console.log(markdown(report))
    console.error(`written: ${out}`)
  } finally {
    await Promise.all(Object.values(clients).map((c) => c.close()))
    if (args['own-hbase'] && args['stop-hbase']) await require('../infra/hbase').down(ownHBaseOptions())
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
