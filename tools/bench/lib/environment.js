'use strict'

/**
 * Where a benchmark runs: the three roles of the seed (HBase, app server, load generator) on the
 * netns topology of tools/topology (HBase in beacon_hbase, the server and the baseline in
 * beacon_app, every load job and the delay proxy in beacon_mon), or all on loopback.
 *
 * Everything this module starts it also stops (close()): the server, the baseline, delay
 * proxies, load workers, and the netns HBase instance if it was not already running. The shared
 * loopback HBase is brought up if needed and always left running (others use it).
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
const DELAY_PROXY = path.join(ROOT, 'tools', 'topology', 'delay-proxy.js')
const HBASE_CLI = path.join(ROOT, 'tools', 'dev-hbase', 'cli.js')
const NETNS_HBASE_STATE = path.join(ROOT, '.state', 'hbase-netns')
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
 * Decides the topology: 'netns' needs root and iproute2 (and fails without), 'loopback' never
 * touches namespaces, 'auto' uses namespaces when available and says why not otherwise.
 * @param {'auto'|'netns'|'loopback'} wanted
 * @param {{ log: (line: string) => void }} io
 * @returns {Promise<{ mode: 'netns'|'loopback', topology: any, namespaces?: Record<string, string>|null, reason: string|null }>}
 */
async function chooseTopology (wanted, { log }) {
  if (wanted === 'loopback') return { mode: 'loopback', topology: null, reason: 'loopback requested (--topology loopback)' }
  const { createTopology } = require('../../topology')
  // Configured from the environment like the module-level topology.
  const topology = createTopology({})
  const { available, reason } = await topology.available()
  if (!available) {
    if (wanted === 'netns') throw new Error(`bench: --topology netns, but network namespaces are unavailable: ${reason}`)
    log(`bench: network namespaces unavailable (${reason}); falling back to loopback`)
    return { mode: 'loopback', topology: null, reason }
  }
  // (up() takes no logger: the module-level topology logs nothing; what it did is in `r`.)
  const r = await topology.up()
  return { mode: 'netns', topology, namespaces: r.namespaces, reason: null }
}

/**
 * @param {{ topology: 'auto'|'netns'|'loopback', workers: number, port: number, env: Record<string, string>,
 *   keepHBase?: boolean, log: (line: string) => void }} options
 *   env: extra environment of the server (state dir, access-log table, config file...)
 */
async function createEnvironment (options) {
  const { log } = options
  const choice = await chooseTopology(options.topology, { log })
  const netns = choice.mode === 'netns'
  const t = choice.topology
  const address = (host) => (netns ? t.hostAddress(host) : loopbackAddress(host))
  const pinOf = (host) => (netns ? t.pin(host) : process.env[`BEACON_PIN_${host.toUpperCase()}`] || null)
  // In loopback mode the BEACON_PIN_* variables still pin each role, like topology.exec does.
  const spawnOn = (host) => (command, args, spawnOptions) => {
    if (netns) return t.exec(host, command, args, spawnOptions)
    const pin = pinOf(host)
    return pin ? spawn('taskset', ['-c', pin, command, ...args], spawnOptions) : spawn(command, args, spawnOptions)
  }
  const owned = new Set()

  function track (child) {
    owned.add(child)
    child.once('exit', () => owned.delete(child))
    return child
  }

  /** tools/topology/delay-proxy.js on `host`, from `listen` to `target`, `delayMs` each way. */
  async function startRelay (host, listen, target, delayMs = 0) {
    const args = [
      DELAY_PROXY,
      '--listen', `${listen.host}:${listen.port}`,
      '--target', `${target.host}:${target.port}`,
      '--delay-ms', String(delayMs),
      ...(delayMs ? [] : ['--no-handshake'])
    ]
    const child = track(spawnOn(host)(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }))
    const { listening } = await firstJsonLine(child, 10000, `delay proxy on ${host}`)
    return {
      host: listening.host,
      port: listening.port,
      stop: () => new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
        setTimeout(() => child.kill('SIGKILL'), 5000).unref()
      })
    }
  }
  // HBase.
  let hbaseOptions
  let startedHBase = false
  if (netns) {
    hbaseOptions = hbase.resolveOptions({ host: address('hbase'), stateDir: NETNS_HBASE_STATE, heap: benchHeap() })
    // The netns has no route out, so Maven cannot resolve anything there: the checkout's build
    // dir (tools/dev-hbase options) already holds the classpath the loopback instance resolved.
    const before = await hbase.status(hbaseOptions)
    const stateDir = path.relative(ROOT, hbaseOptions.stateDir)
    const starting = before.running ? `, already running (pid ${before.pid})` : ', starting'
    log(`bench: HBase in ${choice.namespaces.hbase} (${hbaseOptions.host}), state ${stateDir}${starting}`)
    // HBase's standalone ZooKeeper binds to the host address only, but its startup check polls
    // localhost:<zkPort> and gives up after 30 s. Until tools/dev-hbase binds both, a plain TCP relay
    // (the delay proxy at 0 ms) from 127.0.0.1 to that address in the namespace answers the check.
    const zkLocal = { host: '127.0.0.1', port: hbaseOptions.zkPort }
    const zkHost = { host: hbaseOptions.host, port: hbaseOptions.zkPort }
    const relay = before.running ? null : await startRelay('hbase', zkLocal, zkHost)
    const child = spawnOn('hbase')(process.execPath, [HBASE_CLI, 'up'], {
      env: {
        ...process.env,
        BEACON_HBASE_HOST: hbaseOptions.host,
        BEACON_HBASE_STATE_DIR: hbaseOptions.stateDir,
        BEACON_HBASE_HEAP: hbaseOptions.heap
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const output = []
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (c) => output.push(String(c)))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    if (relay) await relay.stop()
    if (code !== 0) throw new Error(`bench: HBase did not come up in the hbase namespace:\n${output.join('')}`)
    startedHBase = !before.running
  } else {
    hbaseOptions = hbase.resolveOptions({ heap: benchHeap() })
    // A running instance is used as it is, whatever heap it was started with.
    await hbase.up(hbaseOptions, { log })
  }
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
    // An admin API beyond loopback (a namespace's address) starts only with a token of its own.
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

  /** Stops everything this environment started (the netns HBase only if it started it). */
  async function close () {
    for (const child of [...owned]) {
      if (child.stop) await child.stop()
      else child.kill('SIGKILL')
    }
    if (netns && startedHBase && !options.keepHBase) {
      log('bench: stopping the HBase it started in the hbase namespace')
      const child = spawnOn('hbase')(process.execPath, [HBASE_CLI, 'down'], {
        env: { ...process.env, BEACON_HBASE_HOST: hbaseOptions.host, BEACON_HBASE_STATE_DIR: hbaseOptions.stateDir },
        stdio: 'ignore'
      })
      await new Promise((resolve) => child.on('exit', resolve))
    }
  }

  const pins = ['app', 'mon', 'hbase'].map((h) => [h, pinOf(h)]).filter(([, p]) => p)
  return {
    mode: choice.mode,
    describe: () => ({
      topology: netns
        ? `netns (HBase in ${choice.namespaces.hbase} ${address('hbase')}, server in ${choice.namespaces.app} ${appHost}, ` +
          `load generator in ${choice.namespaces.mon} ${address('mon')}; one machine's cores shared)`
        : `loopback (single host: load generator, server and HBase share the cores${choice.reason ? `; ${choice.reason}` : ''})`,
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
