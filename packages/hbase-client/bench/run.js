'use strict'

/**
 * Benchmark of the native HBase client against the real HBase: sequential and concurrent gets,
 * coalesced multi-gets (as the config source reads), sequential puts, and access-log-shaped
 * batched multi-puts (tools/bench/lib/hbase-client-workloads.js); with the CPU each op costs the HBase
 * JVM (/proc, see tools/bench/lib/proc-sampler.js) and the client. Writes results/hbase-client-<time>.md here
 * (the raw .json beside it, git-ignored).
 *
 * --cell-blocks both compares cells inline in protobuf (off) with KeyValueCodec cell blocks (on)
 * in one run: --rounds rounds of off then on, each mode on its own warmed client, and writes
 * results/hbase-client-cellblocks-<time>.{json,md} with medians and ranges per op.
 *
 * --client both compares beacon's client (with --cell-blocks off or on) with HBase's own Java
 * client (tools/dev-hbase/java/BeaconHBaseLoad.java, one warmed JVM; its CPU from /proc) the same way,
 * on the same tables, rows and concurrency: results/hbase-client-java-<time>.{json,md}.
 * --client java measures the Java client alone.
 *
 *   npm run bench:hbase-client -- [--gets 20000] [--concurrency 50] [--entries 200000]
 *     [--batch 500] [--multi-get 20] [--warmup-seconds 20] [--cell-blocks off|on|both]
 *     [--client node|java|both] [--rounds 1] [--workloads name,...]
 *     [--bootstrap host:port,... --hbase-pid PID] [--own-hbase [--stop-hbase]] [--out FILE.json]
 *
 * --own-hbase runs on an HBase instance of its own (.state/hbase-bench-client, ports 2381,
 * 17100, 17120), so other people's tests do not add to the JVM's CPU; --stop-hbase stops it after.
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { createHBaseClient } = require('@beacon/hbase-client')
const { describeMachine, timestampForFile, createSampler } = require('../../../tools/bench')
const { HBASE_RPC_THREADS, readNamedThreads, threadCpuUs } = require('./lib/thread-cpu')
const { readThreadGroups, groupCpuUs } = require('./lib/thread-groups')
const { createWorkloads } = require('./lib/workloads')
const { summarizeRounds, markdown } = require('./lib/report')
const { startJavaLoad } = require('./lib/java-load')

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
    client: { type: 'string', default: 'node' },
    workloads: { type: 'string', default: 'sequentialGets,concurrentGets,multiGets,sequentialPuts,batchedLogPuts' },
    'hbase-pid': { type: 'string' },
    'own-hbase': { type: 'boolean', default: false },
    'stop-hbase': { type: 'boolean', default: false },
    bootstrap: { type: 'string' },
    out: { type: 'string' }
  }
})
const TEXT_ARGS = ['bootstrap', 'out', 'cell-blocks', 'client', 'workloads', 'hbase-pid', 'own-hbase', 'stop-hbase']
const N = Object.fromEntries(Object.entries(args).filter(([k]) => !TEXT_ARGS.includes(k)).map(([k, v]) => [k, Number(v)]))
const MODES = { off: ['off'], on: ['on'], both: ['off', 'on'] }[args['cell-blocks']]
const CLIENTS = { node: ['node'], java: ['java'], both: ['node', 'java'] }[args.client]
if (!MODES) throw new Error('--cell-blocks must be off, on or both')
if (!CLIENTS) throw new Error('--client must be node, java or both')
if (MODES.length > 1 && args.client !== 'node') {
  throw new Error("--cell-blocks both compares beacon's client with itself: use it with --client node")
}

// What a run compares: the cell-block modes of beacon's client, or beacon's client and Java's.
const AXIS = args.client === 'node'
  ? {
      variants: MODES,
      column: 'cell blocks',
      title: 'cells inline vs cell blocks',
      file: MODES.length > 1 ? 'hbase-client-cellblocks' : 'hbase-client',
      clientCpu: "this process's process.cpuUsage"
    }
  : {
      variants: CLIENTS,
      column: 'client',
      title: 'beacon\'s native client vs HBase\'s Java client',
      file: 'hbase-client-java',
      clientCpu: 'node: this process\'s process.cpuUsage; java: the load JVM\'s utime+stime from /proc, its GC and JIT threads included',
      note: `Clients: node is @beacon/hbase-client (cell blocks ${MODES[0]}); java is HBase ` +
        `${process.env.BEACON_HBASE_VERSION || '2.6.1'}'s AsyncConnection (KeyValueCodec cell blocks, its default; RPC bootstrap ` +
        'registry), driven by tools/dev-hbase/java/BeaconHBaseLoad.java with the same tables, rows, batch sizes and calls in flight.'
    }

const { ensureTables, warmUp, workloads: WORKLOADS } = createWorkloads(N)

/**
 * @typedef {object} Variant a warmed client the rounds measure
 * @property {string} key
 * @property {number|null} pid the client's own process (a JVM), or null: this process
 * @property {(seconds: number) => Promise<unknown>} warmUp
 * @property {(name: string) => Promise<Record<string, any>>} run
 * @property {() => Promise<void>} close
 */

/** @returns {Variant} */
function nodeVariant (key, bootstrap, cellBlocks) {
  const client = createHBaseClient({ bootstrap, cellBlocks })
  return { key, pid: null, warmUp: (s) => warmUp(client, s), run: (name) => WORKLOADS[name].node(client), close: () => client.close() }
}

/** @returns {Promise<Variant>} */
async function javaVariant (bootstrap) {
  const java = await startJavaLoad({ hbaseOpts: hbaseOptions(), bootstrap, N, log: (line) => console.error(line) })
  return {
    key: 'java',
    pid: java.pid,
    warmUp: (s) => java.run('warmup', s),
    run: (name) => java.run(name, WORKLOADS[name].ops),
    close: () => java.close()
  }
}

/**
 * Runs one workload, with the CPU the HBase JVM and the client spent on it, per op.
 * @param {string} name
 * @param {Variant} variant
 * @param {number|null} hbasePid
 * @param {number|null} idleUsPerSec
 * @returns {Promise<object>}
 */
async function measured (name, variant, hbasePid, idleUsPerSec) {
  const sampler = createSampler({ hbase: () => [hbasePid], client: () => [variant.pid] })
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  sampler.start()
  const rpc0 = hbasePid ? readNamedThreads(hbasePid, HBASE_RPC_THREADS) : null
  const groups0 = readThreadGroups(hbasePid)
  const result = await variant.run(name)
  const rpcUs = hbasePid ? threadCpuUs(rpc0, readNamedThreads(hbasePid, HBASE_RPC_THREADS)) : null
  const groupUs = groupCpuUs(groups0, readThreadGroups(hbasePid))
  const roles = sampler.stop()
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const ops = WORKLOADS[name].ops
  const hbaseUs = hbasePid ? roles.hbase.cpuUs : null
  const clientUs = variant.pid ? roles.client.cpuUs : cpu.user + cpu.system
  return {
    ...result,
    seconds: +seconds.toFixed(2),
    hbaseCpuUsPerOp: hbaseUs == null ? null : +(hbaseUs / ops).toFixed(2),
    // Less what the JVM spends idle over as long (chores, GC, other clients): the ops' own share.
    hbaseNetCpuUsPerOp: hbaseUs == null || idleUsPerSec == null ? null : +((hbaseUs - idleUsPerSec * seconds) / ops).toFixed(2),
    // Only the threads that decode, run and answer calls (no compactions, flushes, GC or chores).
    hbaseRpcCpuUsPerOp: rpcUs == null ? null : +(rpcUs / ops).toFixed(2),
    clientCpuUsPerOp: clientUs == null ? null : +(clientUs / ops).toFixed(2),
    // The HBase JVM's CPU by thread group (handlers, netty loops, WAL, GC, JIT…).
    hbaseThreadsUsPerOp: groupUs &&
    Object.fromEntries(
      Object.entries(groupUs)
        .filter(([, us]) => us / ops >= 0.01)
        .map(([g, us]) => [g, +(us / ops).toFixed(2)])
    ),
    hbaseCpuSource: roles.hbase.cpuSource
  }
}

/** CPU the HBase JVM spends per second while no client sends (chores, GC, others' calls). */
async function idleCpuUsPerSec (hbasePid, seconds = 5) {
  if (!hbasePid) return null
  const sampler = createSampler({ hbase: () => [hbasePid] })
  sampler.start()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const us = sampler.stop().hbase.cpuUs
  return us == null ? null : Math.round(us / seconds)
}

// Ports and state dir of the bench's own instance (see the header).
function ownHBaseOptions () {
  const infra = require('../../../tools/dev-hbase')
  return infra.resolveOptions({
    stateDir: path.join(__dirname, '..', '..', '..', '.state', 'hbase-bench-client'),
    zkPort: 2381,
    masterPort: 17100,
    rsPort: 17120,
    masterInfoPort: -1,
    rsInfoPort: -1,
    seedCount: 100
  })
}

/** The infra options of the instance measured (for its classpath and tool classes too). */
function hbaseOptions () {
  return args['own-hbase'] ? ownHBaseOptions() : require('../../../tools/dev-hbase').resolveOptions()
}

/** @returns {Promise<{ bootstrap: string[], pid: number|null }>} */
async function resolveHBase () {
  const pid = args['hbase-pid'] ? Number(args['hbase-pid']) : null
  if (args.bootstrap) return { bootstrap: args.bootstrap.split(','), pid }
  if (process.env.BEACON_HBASE_BOOTSTRAP) return { bootstrap: process.env.BEACON_HBASE_BOOTSTRAP.split(','), pid }
  const info = await require('../../../tools/dev-hbase').up(hbaseOptions(), { log: (line) => console.error(line) })
  return { bootstrap: info.bootstrap, pid: info.pid }
}

async function main () {
  const names = args.workloads.split(',').map((s) => s.trim()).filter(Boolean)
  for (const name of names) if (!WORKLOADS[name]) throw new Error(`unknown workload ${name}; known: ${Object.keys(WORKLOADS).join(', ')}`)
  const { bootstrap, pid } = await resolveHBase()
  /** @type {Record<string, Variant>} */
  const clients = {}
  try {
    const setup = createHBaseClient({ bootstrap })
    await ensureTables(setup).finally(() => setup.close())
    for (const key of AXIS.variants) {
      clients[key] =
        key === 'java' ? await javaVariant(bootstrap) : nodeVariant(key, bootstrap, key === 'node' ? MODES[0] === 'on' : key === 'on')
    }
    for (const key of AXIS.variants) {
      console.error(`warming up the ${key} client for ${N['warmup-seconds']} s…`)
      await clients[key].warmUp(N['warmup-seconds'])
    }
    const idleHBaseCpuUsPerSec = await idleCpuUsPerSec(pid)
    const rounds = []
    for (let round = 1; round <= N.rounds; round++) {
      // First variant first in odd rounds, last first in even ones (A B B A …): a JVM still getting
      // faster, or load that comes and goes, favours neither.
      const order = round % 2 ? AXIS.variants : [...AXIS.variants].reverse()
      const results = { order, idleHBaseCpuUsPerSec: await idleCpuUsPerSec(pid, 2) }
      for (const key of order) {
        results[key] = {}
        for (const name of names) {
          console.error(`round ${round}/${N.rounds}, ${AXIS.column} ${key}: ${name}…`)
          results[key][name] = await measured(name, clients[key], pid, results.idleHBaseCpuUsPerSec)
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
      parameters: { ...N, cellBlocks: args['cell-blocks'], client: args.client, ownHBase: args['own-hbase'] },
      variants: AXIS.variants,
      axis: { column: AXIS.column, title: AXIS.title, clientCpu: AXIS.clientCpu, note: AXIS.note },
      workloads: names,
      summary: summarizeRounds(rounds, names, AXIS.variants),
      rounds
    }
    const labels = Object.fromEntries(Object.entries(WORKLOADS).map(([name, w]) => [name, w.label]))
    const out = args.out || path.join(__dirname, 'results', `${AXIS.file}-${timestampForFile()}.json`)
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
    fs.writeFileSync(out.replace(/\.json$/, '') + '.md', markdown(report, labels))
    console.log(markdown(report, labels))
    console.error(`written: ${out}`)
  } finally {
    await Promise.all(Object.values(clients).map((c) => c.close()))
    if (args['own-hbase'] && args['stop-hbase']) await require('../../../tools/dev-hbase').down(ownHBaseOptions())
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
