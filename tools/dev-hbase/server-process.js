'use strict'

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { setTimeout: sleep } = require('node:timers/promises')
const { javaBin, serverJavaFlags } = require('./jvm')
const { cdsFiles, cdsFlags } = require('./cds')
const { mkdirPrivate, underPrivateUmask, PRIVATE_FILE } = require('./private-files')

/** @typedef {import('./processes').HBaseProcess} HBaseProcess */

const START_MARKER = '==== beacon: starting'
const PORT_ENV = {
  zkPort: 'BEACON_HBASE_ZK_PORT',
  masterPort: 'BEACON_HBASE_MASTER_PORT',
  rsPort: 'BEACON_HBASE_RS_PORT',
  masterInfoPort: 'BEACON_HBASE_MASTER_INFO_PORT',
  rsInfoPort: 'BEACON_HBASE_RS_INFO_PORT'
}

/**
 * The pid recorded in the process's pid file if that process is still this instance's JVM, else
 * null. The command line is checked so that a recycled pid is never mistaken for (or signalled as)
 * HBase.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {HBaseProcess} proc
 * @returns {number|null}
 */
function runningPid (opts, proc) {
  let pid
  try {
    pid = Number(fs.readFileSync(proc.pidFile, 'utf8').trim())
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null
  const cmdline = readCmdline(pid)
  if (cmdline === null) return pid // no /proc (macOS): trust the pid file
  return cmdline.includes(proc.mainClass) && instanceMarkers(opts, proc).every((m) => cmdline.includes(m + ' ')) ? pid : null
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
 * Throws a clear error naming the env var if a port of the given processes cannot be bound on
 * opts.host. HBase would otherwise fail deep in its startup (or, for ZooKeeper, silently move to
 * another port).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {HBaseProcess[]} procs the processes about to start
 * @returns {Promise<void>}
 */
async function assertPortsFree (opts, procs) {
  const wanted = opts.cluster
    ? procs.flatMap((p) => [[p.port, `${p.name} port`], [p.infoPort, `${p.name} UI port`]])
    : Object.entries(PORT_ENV).map(([key, envName]) => [opts[key], envName])
  const taken = []
  for (const [port, what] of wanted) {
    if (port === -1) continue
    const err = await tryBind(opts.host, port)
    if (err) taken.push(`${opts.host}:${port} (${what}): ${err.code === 'EADDRINUSE' ? 'already in use by another process' : err.message}`)
  }
  if (taken.length) {
    throw new Error(`hbase: cannot start, ports unavailable:\n  ${taken.join('\n  ')}\n` +
      `No HBase process of this state dir (${opts.stateDir}) holds them; stop whatever does or choose other ports via the env vars ` +
      `(${Object.values(PORT_ENV).join(', ')}; in a cluster the i-th master and RegionServer use the base port + i - 1).`)
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
 * Spawns one JVM of the instance detached from this process and records its pid.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {HBaseProcess} proc
 * @param {string} classpath
 * @returns {number} pid
 */
function spawnProcess (opts, proc, classpath) {
  mkdirPrivate(opts.logDir)
  mkdirPrivate(path.dirname(proc.pidFile))
  const args = [
    // A cluster's small JVMs start with a small heap and grow; the standalone one reserves its heap.
    ...(opts.cluster ? [`-Xmx${proc.heap}`] : [`-Xms${proc.heap}`, `-Xmx${proc.heap}`]),
    ...serverJavaFlags(opts.jvm),
    ...instanceMarkers(opts, proc),
    `-Dhbase.log.dir=${opts.logDir}`,
    `-Dhbase.log.file=${path.basename(proc.logFile)}`,
    `-Dlog4j.configuration=${pathToFileURL(proc.log4jFile).href}`,
    ...cdsFlags(cdsFiles(opts, classpath), proc.name),
    // The jars first: the class-data archive covers those (see cds.js). The tool classes hold
    // the local file system the site config names (java/BeaconPrivateLocalFileSystem.java).
    '-cp', [classpath, opts.classesDir, opts.confDir].join(':'),
    proc.mainClass, ...proc.args
  ]
  // logTail() shows only what follows the last marker, i.e. this run's lines.
  const marker = `${START_MARKER} ${new Date().toISOString()} HBase ${opts.version} ${proc.name}\n`
  fs.appendFileSync(proc.logFile, marker, { mode: PRIVATE_FILE })
  const out = fs.openSync(proc.outFile, 'a', PRIVATE_FILE)
  try {
    fs.writeSync(out, marker)
    const [cmd, cmdArgs] = underPrivateUmask(javaBin(), args)
    const child = spawn(cmd, cmdArgs, { cwd: opts.stateDir, detached: true, stdio: ['ignore', out, out] })
    // A missing java binary makes the shell exit at once; the caller notices the dead pid.
    child.on('error', () => {})
    if (!child.pid) throw new Error(`hbase: could not spawn ${javaBin()} (install JDK 17 or set JAVA_HOME)`)
    child.unref()
    fs.writeFileSync(proc.pidFile, `${child.pid}\n`, { mode: PRIVATE_FILE })
    return child.pid
  } finally {
    fs.closeSync(out)
  }
}

/**
 * Signals one JVM of the instance and waits for it to exit; SIGKILL after `timeoutMs`.
 * Only the pid from its pid file is ever signalled. Removes the pid file.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {HBaseProcess} proc
 * @param {{ signal?: NodeJS.Signals, timeoutMs?: number }} [how]
 * @returns {Promise<{ pid: number|null, forced: boolean, stopMs: number }>}
 */
async function stopProcess (opts, proc, { signal = 'SIGTERM', timeoutMs = 60000 } = {}) {
  const started = Date.now()
  const pid = runningPid(opts, proc)
  let forced = signal === 'SIGKILL'
  if (pid) {
    process.kill(pid, signal)
    if (!await waitForExit(pid, timeoutMs)) {
      forced = true
      process.kill(pid, 'SIGKILL')
      if (!await waitForExit(pid, 10000)) throw new Error(`hbase: pid ${pid} (${proc.name}) survived SIGKILL`)
    }
  }
  fs.rmSync(proc.pidFile, { force: true })
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
  mkdirPrivate(opts.stateDir)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx', mode: PRIVATE_FILE })
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
 * The last lines of a JVM's stdout/stderr and log file, for error messages.
 * @param {HBaseProcess} proc
 * @param {number} [n]
 * @returns {string}
 */
function logTail (proc, n = 15) {
  return [proc.outFile, proc.logFile].map((file) => {
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

// Identify this instance's JVMs in /proc/<pid>/cmdline. The standalone JVM carries only the
// state dir (as it always has), a cluster's JVMs their name too.
function instanceMarkers (opts, proc) {
  const markers = [`-Dbeacon.hbase.stateDir=${opts.stateDir}`]
  if (proc.role !== 'standalone') markers.push(`-Dbeacon.hbase.process=${proc.name}`)
  return markers
}

module.exports = { runningPid, isAlive, portAccepts, assertPortsFree, spawnProcess, stopProcess, waitForExit, withStartLock, logTail }
