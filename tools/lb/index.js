'use strict'

/**
 * HAProxy in front of beacon's app hosts: writes an haproxy.cfg (config.js), runs
 * `haproxy -db -f <cfg>` as a child process tracked by its PID, and reads the servers' health
 * and counters from HAProxy's admin socket (stats.js). HAProxy is Debian's package
 * (`apt-get install haproxy`); nothing here downloads or builds it.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { setTimeout: sleep } = require('node:timers/promises')
const { haproxyConfig, DEFAULTS } = require('./config')
const { serverStats } = require('./stats')

const CANDIDATES = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy']
const BACKEND = 'app'
const START_TIMEOUT_MS = 10000
const STOP_TIMEOUT_MS = 5000

/**
 * Where the haproxy binary is: BEACON_HAPROXY, else Debian's /usr/sbin/haproxy, else
 * /usr/local/sbin, else the PATH.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string}
 * @throws {Error} naming every place looked at and how to install it
 */
function findHAProxy (env = process.env) {
  const looked = []
  const candidates = env.BEACON_HAPROXY
    ? [env.BEACON_HAPROXY]
    : [
        ...CANDIDATES,
        ...(env.PATH || '')
          .split(path.delimiter)
          .filter(Boolean)
          .map((d) => path.join(d, 'haproxy'))
      ]
  for (const file of candidates) {
    looked.push(file)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {
      // not there: try the next
    }
  }
  throw new Error(
    `tools/lb: haproxy not found (looked at ${env.BEACON_HAPROXY ? `BEACON_HAPROXY=${looked[0]}` : looked.join(', ')}); install Debian's ` +
      'package (apt-get install haproxy) or set BEACON_HAPROXY to the binary'
  )
}

/**
 * @typedef {{ pid: number, configFile: string, address: { host: string, port: number },
 *   servers: () => Promise<import('./stats').ServerStat[]>,
 *   server: (name: string) => Promise<import('./stats').ServerStat>,
 *   waitFor: (name: string, status: 'UP'|'DOWN', timeoutMs?: number) => Promise<number>,
 *   output: () => string, stop: () => Promise<void> }} LoadBalancer
 *   waitFor: resolves with the ms it took for the server to reach exactly that status
 */

/**
 * Writes the config into `dir` and starts HAProxy; resolves once its admin socket answers and
 * every server has been checked once.
 * @param {Omit<import('./config').LbConfigOptions, 'statsSocket'> & { dir: string,
 *   spawn?: (command: string, args: string[], options: import('node:child_process').SpawnOptions) =>
 *     import('node:child_process').ChildProcess,
 *   haproxyPath?: string, env?: NodeJS.ProcessEnv }} options
 *   dir: where haproxy.cfg and the admin socket go (a unix socket path must stay under 108
 *   bytes); spawn: how to start a process, e.g. in the lb host's namespace (`topology.exec` on
 *   'lb'); the child's pid must be haproxy's own (ip netns exec and taskset exec theirs)
 * @returns {Promise<LoadBalancer>}
 */
async function startLoadBalancer (options) {
  const { dir, spawn: spawnFn = spawn, haproxyPath, env = process.env, ...config } = options
  const binary = haproxyPath || findHAProxy(env)
  fs.mkdirSync(dir, { recursive: true })
  const statsSocket = path.join(path.resolve(dir), 'haproxy.sock')
  if (Buffer.byteLength(statsSocket) > 107) {
    throw new Error(`tools/lb: the admin socket path ${statsSocket} is too long for a unix socket; use a shorter dir`)
  }
  const configFile = path.join(dir, 'haproxy.cfg')
  fs.writeFileSync(configFile, haproxyConfig({ ...config, statsSocket }))
  fs.rmSync(statsSocket, { force: true })

  const child = spawnFn(binary, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const keep = (c) => { out = (out + c).slice(-20000) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal || code)))
  /** @type {Error|null} */
  let spawnError = null
  child.once('error', (err) => { spawnError = err })

  const servers = () => serverStats(statsSocket, BACKEND)
  const lb = {
    pid: child.pid,
    configFile,
    address: { ...config.listen },
    servers,
    async server (name) {
      const s = (await servers()).find((x) => x.name === name)
      if (!s) throw new Error(`tools/lb: no server ${name} in the backend`)
      return s
    },
    async waitFor (name, status, timeoutMs = 30000) {
      const t0 = Date.now()
      for (;;) {
        if ((await lb.server(name)).status === status) return Date.now() - t0
        if (Date.now() - t0 > timeoutMs) throw new Error(`tools/lb: server ${name} not ${status} within ${timeoutMs} ms`)
        await sleep(25)
      }
    },
    output: () => out,
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null || spawnError) return
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
      child.kill('SIGTERM') // haproxy -db: SIGTERM stops at once (SIGUSR1 would wait for sessions)
      await exited
      clearTimeout(timer)
      fs.rmSync(statsSocket, { force: true })
    }
  }

  // Up when the admin socket answers and every server has its first check result.
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (spawnError) throw new Error(`tools/lb: could not start ${binary}: ${spawnError.message}`)
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`tools/lb: haproxy exited (${child.signalCode || child.exitCode}) at start:\n${out.trim()}`)
    }
    const stats = await servers().catch(() => null)
    if (stats && stats.every((s) => s.checkStatus && !s.checkStatus.startsWith('INI'))) return lb
    if (Date.now() > deadline) {
      await lb.stop()
      throw new Error(`tools/lb: haproxy did not come up within ${START_TIMEOUT_MS} ms:\n${out.trim()}`)
    }
    await sleep(50)
  }
}

module.exports = { startLoadBalancer, findHAProxy, haproxyConfig, DEFAULTS, BACKEND }
