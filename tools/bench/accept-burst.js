'use strict'

/**
 * What a burst of new connections costs, by who accepts them (`BEACON_ACCEPT_CONNECTIONS`): the
 * cluster primary, handing each to a worker over IPC, or the workers from the shared socket.
 * For each mode in turn, it starts the real server (server.js, 2 workers, optionally pinned with
 * taskset), then sends bursts: N connections opened at once, each carrying requests at a
 * constant rate (open-loop.js), and counts the first answers of a connection over 50 ms.
 * sample1 only (no HBase on the request path; the server still needs one to start: the
 * checkout's, as `npm start`).
 *
 *   taskset -c 0 node tools/bench/accept-burst.js [--pin-app 1] [--bursts 20] [--connections 100]
 *     [--rate 4000] [--rounds 2] [--port 4600] [--out FILE.json]
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { parseArgs } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { runOpenLoop } = require('./lib/open-loop')
const { startNode, waitForHttp } = require('./lib/processes')

const SERVER = path.join(__dirname, '..', '..', 'server.js')
const MODES = ['primary', 'workers']

/** Starts server.js in one accept mode; resolves once its admin port answers /healthz. */
async function startServer ({ mode, port, pinApp }) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-accept-'))
  const env = {
    PORT: String(port),
    ADMIN_PORT: String(port + 1),
    BEACON_WORKERS: '2',
    BEACON_ACCEPT_CONNECTIONS: mode,
    BEACON_STATE_DIR: stateDir,
    BEACON_LOG_LEVEL: 'warn'
  }
  // taskset execs node, so the process startNode watches is the server's.
  /** @type {any} */
  const pinned = (command, args, options) => spawn('taskset', ['-c', pinApp, command, ...args], options)
  const child = startNode(SERVER, [], {
    env,
    name: `server ${mode}`,
    log: (line) => console.error(line),
    ...(pinApp === undefined ? {} : { spawnFn: pinned })
  })
  await waitForHttp(`http://127.0.0.1:${port + 1}/healthz`, { timeoutMs: 120000, child })
  return {
    stop: async () => {
      await child.stop()
      fs.rmSync(stateDir, { recursive: true, force: true })
    }
  }
}

/** N bursts of fresh connections against a running server. */
async function bursts ({ port, count, connections, rate }) {
  const maxima = []
  let slowFirst = 0
  let firsts = 0
  for (let i = 0; i < count; i++) {
    let n = 0
    const r = await runOpenLoop({
      host: '127.0.0.1',
      port,
      rate,
      durationMs: Math.max(50, (connections / rate) * 1000 * 2),
      connections,
      next: () => ({ path: `/api/sample1.js?id=${n++}&callback=cb` })
    })
    if (r.errors > 0) throw new Error(`burst ${i}: ${r.errors} errors ${JSON.stringify(r.errorCodes)}`)
    slowFirst += r.slow.firstOnConnection
    firsts += Math.min(connections, r.sent)
    maxima.push(r.max)
    await sleep(200) // the connections close between bursts
  }
  maxima.sort((a, b) => a - b)
  const at = (q) => maxima[Math.min(maxima.length - 1, Math.floor(q * maxima.length))]
  return { bursts: count, firstAnswers: firsts, firstOver50ms: slowFirst, burstMaxMs: { p50: at(0.5), p90: at(0.9), max: at(1) } }
}

async function main () {
  const { values } = parseArgs({
    options: {
      'pin-app': { type: 'string' },
      bursts: { type: 'string', default: '20' },
      connections: { type: 'string', default: '100' },
      rate: { type: 'string', default: '4000' },
      rounds: { type: 'string', default: '2' },
      port: { type: 'string', default: '4600' },
      out: { type: 'string' }
    }
  })
  const o = {
    pinApp: values['pin-app'],
    count: Number(values.bursts),
    connections: Number(values.connections),
    rate: Number(values.rate),
    rounds: Number(values.rounds),
    port: Number(values.port)
  }
  const rows = []
  for (let round = 1; round <= o.rounds; round++) {
    for (const mode of MODES) {
      const server = await startServer({ mode, port: o.port, pinApp: o.pinApp })
      try {
        const r = await bursts({ port: o.port, count: o.count, connections: o.connections, rate: o.rate })
        rows.push({ round, mode, ...r })
        console.error(`round ${round} ${mode}: ${JSON.stringify(r)}`)
      } finally {
        await server.stop()
      }
    }
  }
  const result = { date: new Date().toISOString(), parameters: o, rows }
  if (values.out) fs.writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n')
  console.log('| round | accepted by | first answers | over 50 ms | burst max p50 / p90 / max ms |')
  console.log('|---:|---|---:|---:|---:|')
  for (const r of rows) {
    console.log(`| ${r.round} | ${r.mode} | ${r.firstAnswers} | ${r.firstOver50ms} | ` +
      `${r.burstMaxMs.p50} / ${r.burstMaxMs.p90} / ${r.burstMaxMs.max} |`)
  }
}

main().catch((err) => {
  console.error(err.stack || err.message)
  process.exitCode = 1
})
