'use strict'

/**
 * Change streams at scale: `node tools/bench/sse.js` opens --streams streams (10,000) on ONE worker of
 * a real `server.js` (BEACON_WORKERS=1, on the running HBase), all watching one id, and measures
 *
 * - RSS per stream: the worker's resident set with every stream open, less with none, divided
 *   by the count (each reading the median of several, after the worker settled);
 * - CPU at idle: the worker's utime + stime from /proc over --idle-seconds (30) with no stream,
 *   then with every stream open (heartbeats every 15 s included);
 * - fan-out: --puts (20) admin PUTs of the watched id, one at a time; per PUT the time from
 *   sending it to the last stream receiving its event (and the first and the median stream),
 *   p50/p99 over PUTs. The client processes read every stream on the two cores they share with
 *   the server: the spread from first to last is their reading as much as the server's writing;
 * - close: SIGTERM, the time until the last stream is ended by the server, and how many cleanly.
 *
 * The clients are raw sockets in --client-processes (2) processes of their own
 * (tools/bench/lib/sse-clients.js), the streams shared among them. Not part of `npm test`. Writes
 * tools/bench/results/<timestamp>-sse.md (and .json).
 *
 *   node tools/bench/sse.js [--streams 10000] [--puts 20] [--idle-seconds 30] [--port 4310]
 *     [--client-processes 2] [--bootstrap host:port,...] [--out FILE.json]
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork, execFileSync } = require('node:child_process')
const { parseArgs } = require('node:util')
const hbase = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { startNode, waitForHttp } = require('./lib/processes')
const { parseStat } = require('./lib/proc-sampler')
const { describeMachine, percentile, timestampForFile } = require('./lib/machine')
const { sseMarkdown } = require('./lib/sse-report')

const ROOT = path.resolve(__dirname, '..', '..')
const ID = 'ssebench'
const TOKEN = 'sse-bench-token-0123456789'
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

const { values: args } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000' },
    puts: { type: 'string', default: '20' },
    'idle-seconds': { type: 'string', default: '30' },
    port: { type: 'string', default: '4310' },
    'client-processes': { type: 'string', default: '2' },
    bootstrap: { type: 'string' },
    out: { type: 'string' }
  }
})
const STREAMS = Number(args.streams)
const PUTS = Number(args.puts)
const IDLE_S = Number(args['idle-seconds'])
const PORT = Number(args.port)
const CLIENTS = Number(args['client-processes'])
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (line) => process.stderr.write(line + '\n')

/** utime + stime (s) and RSS (bytes) of a process, from /proc. */
function procStat (pid) {
  const { cpuTicks, rssBytes } = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))
  return { cpuS: cpuTicks / CLK_TCK, rssBytes }
}

/** The pids of a process's children. */
function childrenOf (pid) {
  return fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((p) => {
    try {
      return parseStat(fs.readFileSync(`/proc/${p}/stat`, 'utf8')).ppid === pid
    } catch {
      return false
    }
  })
}

/** The median of `n` RSS readings a second apart. */
async function settledRss (pid, n = 5) {
  const readings = []
  for (let i = 0; i < n; i++) {
    await sleep(1000)
    readings.push(procStat(pid).rssBytes)
  }
  return readings.sort((a, b) => a - b)[Math.floor(n / 2)]
}

/** CPU (share of one core) of a process over `seconds`. */
async function idleCpu (pid, seconds) {
  const before = procStat(pid).cpuS
  await sleep(seconds * 1000)
  return (procStat(pid).cpuS - before) / seconds
}

/**
 * `n` client processes; `ask` sends a message to each (an `open` shares its count among them) and
 * merges their answers.
 */
function clients (n) {
  const children = Array.from({ length: n }, () =>
    fork(path.join(__dirname, 'lib', 'sse-clients.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  const askOne = (child, msg) => new Promise((resolve, reject) => {
    const onMessage = (reply) => {
      if (reply.type !== msg.type) return
      child.off('message', onMessage)
      if (reply.error) reject(new Error(reply.error))
      else resolve(reply)
    }
    child.on('message', onMessage)
    child.send(msg)
  })
  const ask = async (msg) => {
    const replies = await Promise.all(children.map((child, i) => askOne(child, msg.type === 'open'
      ? { ...msg, count: Math.floor(msg.count / n) + (i < msg.count % n ? 1 : 0), concurrency: Math.ceil(msg.concurrency / n) }
      : msg)))
    const sum = (key) => replies.reduce((total, r) => total + r[key], 0)
    if (msg.type === 'open') return { opened: sum('opened'), failed: sum('failed'), ms: Math.max(...replies.map((r) => r.ms)) }
    if (msg.type === 'arrivals') return { times: replies.flatMap((r) => r.times), missing: sum('missing') }
    if (msg.type === 'wait-ended') {
      return { ended: sum('ended'), clean: sum('clean'), lastEndedAt: Math.max(...replies.map((r) => r.lastEndedAt)) }
    }
    return replies[0]
  }
  return { kill: () => children.forEach((child) => child.kill()), ask }
}

async function putConfig (adminPort, value) {
  const res = await fetch(`http://127.0.0.1:${adminPort}/admin/config/${ID}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(value)
  })
  if (res.status !== 200) throw new Error(`PUT answered ${res.status}`)
}

async function main () {
  const opts = hbase.resolveOptions()
  if (!args.bootstrap && !(await hbase.status(opts)).running) throw new Error('HBase is not running: npm run hbase:up (or --bootstrap)')
  const bootstrap = args.bootstrap ? args.bootstrap.split(',') : [`${opts.host}:${opts.rsPort}`, `${opts.host}:${opts.masterPort}`]
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-sse-bench-'))
  const configTable = `bench_sse_cfg_${Date.now().toString(36)}`
  const client = createHBaseClient({ bootstrap })
  await client.admin.createTable(configTable, { families: ['c'] })
  // sample3 (HBase config, cached, no access log) with a cap above the count.
  const settingsFile = path.join(stateDir, 'settings.json')
  fs.writeFileSync(settingsFile, JSON.stringify({ endpoints: { sample3: { ofrep: { maxStreams: STREAMS + 1000 } } } }))
  const server = startNode(path.join(ROOT, 'server.js'), [], {
    env: {
      PORT: String(PORT),
      ADMIN_PORT: String(PORT + 1),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '1',
      BEACON_STATE_DIR: stateDir,
      BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
      BEACON_CONFIG_TABLE: configTable,
      BEACON_ADMIN_TOKEN: TOKEN,
      BEACON_CONFIG_FILE: settingsFile,
      BEACON_LOG_LEVEL: 'warn'
    },
    log,
    name: 'server'
  })
  const { kill, ask } = clients(CLIENTS)
  const result = { streams: STREAMS, puts: PUTS, idleSeconds: IDLE_S, clientProcesses: CLIENTS, machine: describeMachine() }
  try {
    await waitForHttp(`http://127.0.0.1:${PORT + 1}/readyz`, { child: server })
    const [worker] = childrenOf(server.pid)
    if (!worker) throw new Error('no worker process found')
    await putConfig(PORT + 1, { n: 0 })
    log(`server ${server.pid}, worker ${worker}; idle ${IDLE_S} s with no stream`)
    const rssNone = await settledRss(worker)
    result.idleCpuNone = await idleCpu(worker, IDLE_S)

    log(`opening ${STREAMS} streams`)
    const opened = await ask({ type: 'open', port: PORT, path: `/api/sample3/changes?id=${ID}`, count: STREAMS, concurrency: 200 })
    result.open = opened
    if (opened.opened !== STREAMS) throw new Error(`only ${opened.opened} of ${STREAMS} streams opened (${opened.failed} failed)`)
    const rssAll = await settledRss(worker)
    result.rss = { noneMiB: rssNone / 2 ** 20, allMiB: rssAll / 2 ** 20, perStreamKiB: (rssAll - rssNone) / STREAMS / 1024 }
    log(`idle ${IDLE_S} s with ${STREAMS} streams`)
    result.idleCpuAll = await idleCpu(worker, IDLE_S)

    const firsts = []
    const lasts = []
    const medians = []
    const answered = []
    for (let i = 1; i <= PUTS; i++) {
      await ask({ type: 'arm' })
      const sent = now()
      await putConfig(PORT + 1, { n: i })
      answered.push(now() - sent)
      const { times, missing } = await ask({ type: 'arrivals', timeoutMs: 10000 })
      if (missing > 0) throw new Error(`PUT ${i}: ${missing} streams got no event within 10 s`)
      const sorted = times.map((t) => t - sent).sort((a, b) => a - b)
      firsts.push(sorted[0])
      lasts.push(sorted[sorted.length - 1])
      medians.push(percentile(sorted, 50))
      await sleep(500)
    }
    const ordered = [...lasts].sort((a, b) => a - b)
    result.fanout = {
      firstMs: firsts,
      lastMs: lasts,
      medianStreamMs: medians,
      putAnsweredMs: answered,
      p50LastMs: percentile(ordered, 50),
      p99LastMs: percentile(ordered, 99)
    }

    log('SIGTERM')
    const stopAt = now()
    const stopping = server.stop(30000)
    const ended = await ask({ type: 'wait-ended', timeoutMs: 30000 })
    result.close = { ended: ended.ended, clean: ended.clean, lastEndedMs: ended.lastEndedAt - stopAt, exitCode: await stopping }
  } finally {
    kill()
    await server.stop(5000)
    await client.admin.deleteTable(configTable).catch(() => {})
    await client.close()
    fs.rmSync(stateDir, { recursive: true, force: true })
  }
  const stamp = timestampForFile()
  const out = args.out || path.join(__dirname, 'results', `${stamp}-sse.json`)
  fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
  fs.writeFileSync(out.replace(/\.json$/, '.md'), sseMarkdown(result, { stamp }))
  log(`wrote ${out.replace(/\.json$/, '.md')}`)
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch((err) => {
  log(err.stack)
  process.exit(1)
})
