'use strict'

/**
 * The chaos run's independent observer: one long-lived JVM (java/BeaconChaosWatch.java) that asks
 * HBase's own Java client every `intervalMs` which master is active, which RegionServers are live
 * and which regions each one serves, and how many regions are in transition. Every look is kept
 * (the timeline the analysis reads); `latest()` is what the chaos driver decides on.
 */

const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { ensureClasspath } = require('../dev-hbase')
const { ensureToolCompiled, ensureCompiled } = require('../dev-hbase')
const { writeConfig } = require('../dev-hbase')
const { javaBin, shortLivedJavaFlags } = require('../dev-hbase')

const SOURCE = path.join(__dirname, 'java', 'BeaconChaosWatch.java')
const CLASS = 'BeaconChaosWatch'

/**
 * @typedef {{ server: string, startCode: number, regions?: string[], unreachable?: string }} WatchedServer
 * @typedef {{ at: number, ms: number, error?: string, active?: string, backups?: string[], dead?: string[],
 *   rit?: number, ritRegions?: string[], ritStates?: Array<{ region: string, state: string, server: string|null }>,
 *   servers?: WatchedServer[] }} Look one look at the cluster
 */

/**
 * Compiles the watcher (against the instance's classpath and tools/dev-hbase's tool classes, whose
 * JSON helpers it uses) unless its class file is newer than its source and the classpath.
 * @param {Readonly<Record<string, any>>} opts tools/dev-hbase options of the watched instance
 * @returns {Promise<{ classpath: string, classesDir: string }>}
 */
async function compileWatcher (opts) {
  const classpath = await ensureClasspath(opts)
  await ensureToolCompiled(opts, classpath)
  const classesDir = path.join(opts.buildDir, 'chaos-classes')
  await ensureCompiled({
    dir: classesDir,
    classes: [CLASS],
    sources: [SOURCE],
    classpath: `${opts.classesDir}:${classpath}`,
    newerThan: [opts.classpathFile, path.join(opts.classesDir, 'BeaconHBaseTool.class')]
  })
  return { classpath, classesDir }
}

/**
 * Starts the watcher and resolves once its first look arrived.
 * @param {Readonly<Record<string, any>>} opts tools/dev-hbase options of the watched instance
 * @param {{ intervalMs?: number, startTimeoutMs?: number }} [how]
 * @returns {Promise<{ looks: Look[], latest: () => Look,
 *   waitFor: (what: string, predicate: (look: Look) => boolean, timeoutMs: number) => Promise<Look>, stop: () => Promise<void> }>}
 */
async function startWatch (opts, { intervalMs = 500, startTimeoutMs = 60000 } = {}) {
  const { classpath, classesDir } = await compileWatcher(opts)
  writeConfig(opts)
  const args = [
    // Not short, but light: a look twice a second never warms enough code to pay for C2.
    ...shortLivedJavaFlags(),
    '-Xmx128m',
    `-Dlog4j.configuration=${pathToFileURL(path.join(opts.confDir, 'tool-log4j.properties')).href}`,
    '-cp', [classesDir, opts.classesDir, opts.confDir, classpath].join(':'),
    CLASS, 'watch', '--interval-ms', String(intervalMs)
  ]
  const child = spawn(javaBin(), args, { stdio: ['pipe', 'pipe', 'pipe'] })
  /** @type {Look[]} */
  const looks = []
  /** @type {Array<{ predicate: (look: Look) => boolean, resolve: (look: Look) => void }>} */
  let waiters = []
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (s) => { stderr = (stderr + s).slice(-4000) })
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let look
    try {
      look = JSON.parse(line)
    } catch {
      return // the JVM's own noise on stdout, if any
    }
    looks.push(look)
    waiters = waiters.filter((w) => {
      if (!w.predicate(look)) return true
      w.resolve(look)
      return false
    })
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))

  /**
   * Resolves with the first look from now on that satisfies `predicate`; rejects after timeoutMs.
   * @param {string} what
   * @param {(look: Look) => boolean} predicate
   * @param {number} timeoutMs
   * @returns {Promise<Look>}
   */
  function waitFor (what, predicate, timeoutMs) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters = waiters.filter((w) => w.resolve !== done)
        reject(new Error(`chaos watch: ${what} not seen within ${timeoutMs} ms; last ` +
          `look: ${JSON.stringify(looks[looks.length - 1] || null).slice(0, 600)}`))
      }, timeoutMs)
      const done = (look) => {
        clearTimeout(timer)
        resolve(look)
      }
      waiters.push({ predicate, resolve: done })
    })
  }

  async function stop () {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end() // the watcher exits when its stdin closes
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000)
      await exited
      clearTimeout(timer)
    }
  }

  const first = waitFor('a first look', () => true, startTimeoutMs)
  const failed = exited.then((code) => { throw new Error(`chaos watch exited (${code}) before its first look: ${stderr.trim()}`) })
  try {
    await Promise.race([first, failed])
  } catch (err) {
    await stop()
    throw err
  }
  failed.catch(() => {}) // a later exit is seen as the looks stopping
  return { looks, latest: () => looks[looks.length - 1], waitFor, stop }
}

module.exports = { startWatch, compileWatcher }
