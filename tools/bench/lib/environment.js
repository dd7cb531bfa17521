'use strict'

/**
 * Where a benchmark runs: the three roles of the seed (HBase, app server, load generator) on
 * loopback (tools/topology's loopback addresses) and, with BEACON_PIN_<ROLE>, each pinned to its
 * cores with taskset.
 *
 * Everything this module starts it also stops (close()): the server, the baseline and the load
 * workers. The shared HBase is brought up if needed and always left running (others use it).
 */

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const hbase = require('../../dev-hbase')
const { loopbackAddress } = require('../../topology')
const { startNode, waitForHttp, firstJsonLine } = require('./processes')
const { createSampler } = require('./proc-sampler')

const ROOT = path.join(__dirname, '..', '..', '..')
const LOAD_WORKER = path.join(__dirname, 'load-worker.js')
/**
 * The heap of an HBase the bench starts, unless BEACON_HBASE_HEAP says otherwise. The 1 GB of
 * `npm start` leaves a standalone JVM some 200 MB beside its block cache and memstores, and a
 * full run's millions of log rows (durable ones with a WAL sync each) ran it out of heap.
 */
const BENCH_HBASE_HEAP = '4g'

/**
 * The -Xmx a running JVM was started with (the last one wins, as in the JVM), or null.
 * @param {number|null|undefined} pid
 * @returns {string|null}
 */
function jvmHeapOf (pid) {
  if (!pid) return null
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    const xmx = args.filter((a) => a.startsWith('-Xmx')).pop()
    return xmx ? xmx.slice(4) : null
  } catch {
    return null
  }
}

/** @returns {string} */
function benchHeap () {
  return process.env.BEACON_HBASE_HEAP || BENCH_HBASE_HEAP
}

/**
 * @param {{ workers: number, port: number, env: Record<string, string>, log: (line: string) => void }} options
 *   env: extra environment of the server (state dir, access-log table, config file...)
 */
async function createEnvironment (options) {
  const { log } = options
  const address = (host) => loopbackAddress(host)
  const pinOf = (host) => process.env[`BEACON_PIN_${host.toUpperCase()}`] || null
  /**
   * How to start a role's process: pinned to the role's cores when BEACON_PIN_<ROLE> says so.
   * @param {string} host
   * @returns {typeof spawn}
   */
  function spawnOn (host) {
    const pin = pinOf(host)
    if (!pin) return spawn
    /** @type {any} */
    const pinned = (command, args, spawnOptions) => spawn('taskset', ['-c', pin, command, ...args], spawnOptions)
    return pinned
  }
  const owned = new Set()

  function track (child) {
    owned.add(child)
    child.once('exit', () => owned.delete(child))
    return child
  }

  const hbaseOptions = hbase.resolveOptions({ heap: benchHeap() })
  // A running instance is used as it is, whatever heap it was started with.
  await hbase.up(hbaseOptions, { log })
  const bootstrap = [`${hbaseOptions.host}:${hbaseOptions.rsPort}`, `${hbaseOptions.host}:${hbaseOptions.masterPort}`]
  const hbasePid = () => (hbase.status(hbaseOptions).then((s) => s.pid))
  let hbasePidNow = await hbasePid()

  const appHost = address('app')
  const port = options.port
  const baselinePort = port + 2
  const serverEnv = {
    ...options.env,
    PORT: String(port),
    ADMIN_PORT: String(port + 1),
    HOST: appHost,
    ADMIN_HOST: appHost,
    // An admin API beyond 127.0.0.1 starts only with a token of its own.
    BEACON_ADMIN_TOKEN: options.env.BEACON_ADMIN_TOKEN || crypto.randomBytes(16).toString('hex'),
    BEACON_WORKERS: String(options.workers),
    BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
    // The load comes from one address: per-client limits off unless the run sets them.
    BEACON_RATE_LIMIT: options.env.BEACON_RATE_LIMIT || '0'
  }

  /**
   * Starts the server cluster on the app host and waits until `probePath` answers 200.
   * @param {string} probePath
   */
  async function startServer (probePath) {
    const server = track(startNode(path.join(ROOT, 'server.js'), [], { env: serverEnv, log, name: 'beacon', spawnFn: spawnOn('app') }))
    await waitForHttp(`http://${appHost}:${port}${probePath}`, { child: server })
    return server
  }

  async function startBaseline () {
    const script = path.join(__dirname, '..', 'baseline-server.js')
    const args = [String(baselinePort), String(options.workers), appHost]
    const baseline = track(startNode(script, args, { log, name: 'baseline', spawnFn: spawnOn('app') }))
    await waitForHttp(`http://${appHost}:${baselinePort}/`, { child: baseline })
    return baseline
  }

  /**
   * Runs one load job on the mon host while sampling the server side.
   * @param {object} job load-worker job without host/port
   * @param {{ target: { host: string, port: number }, serverPids: number[] }} where
   *   serverPids: the server's processes (their CPU is summed as `app`)
   * @returns {Promise<object>} the worker's summary plus `sampled` (per role CPU and RSS)
   */
  async function load (job, { target, serverPids }) {
    const workerJob = JSON.stringify({ ...job, host: target.host, port: target.port })
    const child = track(spawnOn('mon')(process.execPath, [LOAD_WORKER, workerJob], { stdio: ['ignore', 'pipe', 'pipe'] }))
    let stderr = ''
    child.stderr.on('data', (c) => { stderr += c })
    const sampler = createSampler({
      app: () => serverPids,
      hbase: () => [hbasePidNow],
      loadgen: () => [child.pid]
    })
    sampler.start()
    const timeoutMs = (job.durationMs || 0) + (job.timeoutMs || 10000) + 120000
    try {
      const summary = await firstJsonLine(child, timeoutMs, `load worker (${job.generator} ${job.paths.endpoint})`)
      return { ...summary, sampled: sampler.stop() }
    } catch (err) {
      sampler.stop()
      child.kill('SIGKILL')
      throw new Error(`${err.message}${stderr ? `; stderr: ${stderr.trim()}` : ''}`)
    }
  }

  /** Stops everything this environment started. */
  async function close () {
    for (const child of [...owned]) {
      if (child.stop) await child.stop()
      else child.kill('SIGKILL')
    }
  }

  const pins = ['app', 'mon', 'hbase'].map((h) => [h, pinOf(h)]).filter(([, p]) => p)
  return {
    describe: () => ({
      topology: 'loopback (single host: load generator, server and HBase share the cores)',
      pinning: pins.length ? pins.map(([h, p]) => `${h}=${p}`).join(', ') : null,
      hbaseHeap: jvmHeapOf(hbasePidNow)
    }),
    hbaseOptions,
    bootstrap,
    address,
    port,
    baselinePort,
    serverEnv,
    startServer,
    startBaseline,
    load,
    refreshHBasePid: async () => { hbasePidNow = await hbasePid() },
    /** The HBase JVM's pid as last refreshed (the cpu scenario samples it idle). */
    hbasePid: () => hbasePidNow,
    close
  }
}

module.exports = { createEnvironment }
