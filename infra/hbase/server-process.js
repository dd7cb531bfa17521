'use strict'

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { setTimeout: sleep } = require('node:timers/promises')
const { javaBin, javaFlags } = require('./jvm')

const MAIN_CLASS = 'org.apache.hadoop.hbase.master.HMaster'
const START_MARKER = '==== beacon: starting'
const PORT_ENV = {
  zkPort: 'BEACON_HBASE_ZK_PORT',
  masterPort: 'BEACON_HBASE_MASTER_PORT',
  rsPort: 'BEACON_HBASE_RS_PORT',
  masterInfoPort: 'BEACON_HBASE_MASTER_INFO_PORT',
  rsInfoPort: 'BEACON_HBASE_RS_INFO_PORT'
}

/**
 * The pid recorded in the pid file if that process is still this instance's HBase JVM, else null.
 * The command line is checked so that a recycled pid is never mistaken for (or signalled as) HBase.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {number|null}
 */
function runningPid (opts) {
  let pid
  try {
    pid = Number(fs.readFileSync(opts.pidFile, 'utf8').trim())
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null
  const cmdline = readCmdline(pid)
  if (cmdline === null) return pid // no /proc (macOS): trust the pid file
  return cmdline.includes(MAIN_CLASS) && cmdline.includes(instanceMarker(opts) + ' ') ? pid : null
}

/**
 * @param {number} pid
 * @returns {boolean} whether the process exists and is not a zombie
 */
function isAlive (pid) {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return err.code === 'EPERM'
  }
  try {
    // A zombie has exited and only waits for its parent to reap it. But a JVM's main thread can
    // show as a zombie while the other threads (and the sockets) are still being torn down.
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    const zombie = /^State:\s+Z/m.test(status)
    const threads = Number((/^Threads:\s+(\d+)/m.exec(status) || [])[1])
    return !(zombie && threads <= 1)
  } catch {
    return true
  }
}

/**
 * Whether something accepts TCP connections on host:port.
 * @param {string} host
 * @param {number} port
 * @param {number} [timeoutMs]
 * @returns {Promise<boolean>}
 */
function portAccepts (host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    const done = (ok) => { socket.destroy(); resolve(ok) }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * Throws a clear error naming the env var if any configured port cannot be bound on opts.host.
 * HBase would otherwise fail deep in its startup (or, for ZooKeeper, silently move to another port).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {Promise<void>}
 */
async function assertPortsFree (opts) {
  const taken = []
  for (const [key, envName] of Object.entries(PORT_ENV)) {
    if (opts[key] === -1) continue
    const err = await tryBind(opts.host, opts[key])
    if (err) taken.push(`${opts.host}:${opts[key]} (${envName}): ${err.code === 'EADDRINUSE' ? 'already in use by another process' : err.message}`)
  }
  if (taken.length) {
    throw new Error(`hbase: cannot start, ports unavailable:\n  ${taken.join('\n  ')}\n` +
      `No HBase of this state dir (${opts.stateDir}) is running; stop whatever holds the ports or choose other ports via the env vars.`)
  }
}

function tryBind (host, port) {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', resolve)
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)))
  })
}

/**
 * Spawns the standalone HBase JVM detached from this process and records its pid.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {string} classpath
 * @returns {number} pid
 */
function spawnServer (opts, classpath) {
  fs.mkdirSync(opts.logDir, { recursive: true })
  const args = [
    `-Xms${opts.heap}`, `-Xmx${opts.heap}`,
    ...javaFlags(),
    instanceMarker(opts),
    `-Dhbase.log.dir=${opts.logDir}`,
    `-Dhbase.log.file=${path.basename(opts.logFile)}`,
    `-Dlog4j.configuration=${pathToFileURL(path.join(opts.confDir, 'log4j.properties')).href}`,
    '-cp', `${opts.confDir}:${classpath}`,
    MAIN_CLASS, 'start'
  ]
  // logTail() shows only what follows the last marker, i.e. this run's lines.
  const marker = `${START_MARKER} ${new Date().toISOString()} HBase ${opts.version}\n`
  fs.appendFileSync(opts.logFile, marker)
  const out = fs.openSync(opts.outFile, 'a')
  try {
    fs.writeSync(out, marker)
    const child = spawn(javaBin(), args, { cwd: opts.stateDir, detached: true, stdio: ['ignore', out, out] })
    // A missing java binary surfaces as an async 'error' event; the caller notices the dead pid.
    child.on('error', () => {})
    if (!child.pid) throw new Error(`hbase: could not spawn ${javaBin()} (install JDK 17 or set JAVA_HOME)`)
    child.unref()
    fs.writeFileSync(opts.pidFile, `${child.pid}\n`)
    return child.pid
  } finally {
    fs.closeSync(out)
  }
}

/**
 * Signals the recorded HBase JVM and waits for it to exit; SIGKILL after `timeoutMs`.
 * Only the pid from the pid file is ever signalled. Removes the pid file.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ signal?: NodeJS.Signals, timeoutMs?: number }} [how]
 * @returns {Promise<{ pid: number|null, forced: boolean, stopMs: number }>}
 */
async function stopServer (opts, { signal = 'SIGTERM', timeoutMs = 60000 } = {}) {
  const started = Date.now()
  const pid = runningPid(opts)
  let forced = signal === 'SIGKILL'
  if (pid) {
    process.kill(pid, signal)
    if (!await waitForExit(pid, timeoutMs)) {
      forced = true
      process.kill(pid, 'SIGKILL')
      if (!await waitForExit(pid, 10000)) throw new Error(`hbase: pid ${pid} survived SIGKILL`)
    }
  }
  fs.rmSync(opts.pidFile, { force: true })
  return { pid, forced, stopMs: Date.now() - started }
}

/**
 * @param {number} pid
 * @param {number} timeoutMs
 * @returns {Promise<boolean>} whether the process exited in time
 */
async function waitForExit (pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false
    await sleep(200)
  }
  return true
}

/**
 * Runs `fn` while holding `<stateDir>/start.lock`; waits for another live holder to finish and
 * takes over a lock whose holder has died.
 * @template T
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {() => Promise<T>} fn
 * @param {number} [timeoutMs]
 * @returns {Promise<T>}
 */
async function withStartLock (opts, fn, timeoutMs = 60000) {
  const lockFile = path.join(opts.stateDir, 'start.lock')
  fs.mkdirSync(opts.stateDir, { recursive: true })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' })
      break
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
    const holder = Number(readOr(lockFile, '').trim())
    if (!(holder > 0) || !isAlive(holder)) {
      fs.rmSync(lockFile, { force: true })
      continue
    }
    if (Date.now() > deadline) throw new Error(`hbase: ${lockFile} is held by pid ${holder}`)
    await sleep(200)
  }
  try {
    return await fn()
  } finally {
    fs.rmSync(lockFile, { force: true })
  }
}

function readOr (file, fallback) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return fallback
  }
}

/**
 * The last lines of the server's stdout/stderr and log file, for error messages.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {number} [n]
 * @returns {string}
 */
function logTail (opts, n = 15) {
  return [opts.outFile, opts.logFile].map((file) => {
    const text = readOr(file, '')
    const run = text.slice(Math.max(0, text.lastIndexOf(START_MARKER)))
    return `--- ${file}\n${run.trim().split('\n').slice(-n).join('\n')}`
  }).join('\n')
}

function readCmdline (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
  } catch {
    return null
  }
}

// Identifies this instance's JVM in /proc/<pid>/cmdline.
function instanceMarker (opts) {
  return `-Dbeacon.hbase.stateDir=${opts.stateDir}`
}

module.exports = { runningPid, isAlive, portAccepts, assertPortsFree, spawnServer, stopServer, waitForExit, withStartLock, logTail }
