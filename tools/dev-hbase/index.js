'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { resolveOptions, REPO_ROOT } = require('./options')
const { ensureClasspath, cachedClasspath } = require('./classpath')
const { writeConfig } = require('./site-config')
const { ensureToolCompiled, ensureCompiled, runTool, toolJvmArgs } = require('./tool')
const { mkdirPrivate, narrowTree } = require('./private-files')
const { cdsFiles } = require('./cds')
const { javaBin, javaFlags, shortLivedJavaFlags } = require('./jvm')
const { buildArchiveInBackground } = require('./cds-background')
const { sampleConfig } = require('./sample-data')
const { processesOf, processOf, bootstrapServers } = require('./processes')
const { status, inspectCluster, dumpTable } = require('./status')
const server = require('./server-process')
const {
  tables: { ACCESS_LOG_FAMILY, ACCESS_LOG_STORAGE, accessLogSplitKeys, ROLLUP_FAMILY, ROLLUP_STORAGE, encodeToggles, configSplitKeys },
  settings: { DEFAULTS: SETTINGS, parseDuration }
} = require('../../index.js')

/** @typedef {import('./processes').HBaseProcess} HBaseProcess */

const noop = () => {}
const WATCH_MS = 500
const STOP_TIMEOUT_MS = 60000
const SHUTDOWN_REQUEST_MS = 20000
const ZK_START_MS = 30000
const PROCESS_START_MS = 60000

/**
 * Starts every JVM of the instance that is not running yet (standalone: the one JVM; cluster:
 * ZooKeeper, then the masters, then the RegionServers). Returns as soon as they are spawned;
 * setupTables() waits until HBase serves.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ log?: (line: string) => void, classpath?: string }} [io]
 * @returns {Promise<{ alreadyRunning: boolean, pid: number, pids: Record<string, number>, started: string[] }>}
 *   pid: the standalone JVM's, or the first master's in a cluster
 */
async function start (opts, { log = noop, classpath } = {}) {
  classpath ??= await ensureClasspath(opts, { log })
  // Two `up`s at once (a developer's and a test run's) must not both spawn JVMs on one data dir.
  return server.withStartLock(opts, async () => {
    const procs = processesOf(opts)
    /** @type {Record<string, number>} */
    const pids = {}
    const missing = []
    for (const proc of procs) {
      const pid = server.runningPid(opts, proc)
      if (pid) pids[proc.name] = pid
      else missing.push(proc)
    }
    if (missing.length === 0) {
      // Alive but not accepting yet: another `up` has just started it. setupTables() waits for it
      // (or times out if it is wedged).
      const [first] = procs
      if (!opts.cluster && !(await server.portAccepts(opts.host, first.port))) {
        log(`hbase: pid ${pids[first.name]} is running but not serving yet; waiting for it`)
      }
    } else {
      await server.assertPortsFree(opts, missing)
      const builder = buildArchiveInBackground(cdsFiles(opts, classpath), classpath)
      if (builder) log(`hbase: building the class-data archive in the background (pid ${builder}); this start runs without it`)
      // The build and class-data dirs hold no visitor data but sit in beacon's state dir too, written by
      // whoever ran a tool last (e.g. `npm test` under umask 022); they are a few files each.
      const narrowed = narrowTree(opts.stateDir) + narrowTree(opts.buildDir, { always: true }) +
        (opts.cdsDir ? narrowTree(opts.cdsDir, { always: true }) : 0)
      if (narrowed > 0) log(`hbase: made ${narrowed} files and folders of ${opts.stateDir} and its build dirs this user's only`)
      writeConfig(opts)
      // The servers load their file system from the tool classes (site-config.js).
      await ensureToolCompiled(opts, classpath)
      mkdirPrivate(opts.dataDir)
      for (const proc of missing) {
        fs.rmSync(proc.pidFile, { force: true })
        pids[proc.name] = server.spawnProcess(opts, proc, classpath)
        // HBase's servers retry ZooKeeper, but each failed attempt costs seconds of back-off.
        if (proc.role === 'zookeeper') await waitServing(opts, proc, pids[proc.name], ZK_START_MS)
      }
    }
    return {
      alreadyRunning: missing.length === 0,
      pid: pids[procs.find((p) => p.role !== 'zookeeper').name],
      pids,
      started: missing.map((p) => p.name)
    }
  })
}

/**
 * Waits until HBase serves reads on every region (covers master init and WAL recovery after a
 * crash; in a cluster, every RegionServer reported in), creates the config and access-log tables
 * if absent (pre-split; in a cluster the config table gets one region per RegionServer), seeds
 * the config table once, and in a cluster waits until every RegionServer holds access-log regions.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ log?: (line: string) => void, classpath?: string, signal?: AbortSignal }} [io]
 * @returns {Promise<{ readyMs: number, totalMs: number, created: string[], regions: Record<string, number>, seeded: number,
 *   probe: string, spread: Record<string, number> }>}
 *   readyMs/totalMs are measured from the start of the setup tool's JVM; spread: access-log
 *   regions per RegionServer (cluster only)
 */
async function setupTables (opts, { log = noop, classpath, signal } = {}) {
  classpath ??= await ensureClasspath(opts, { log })
  writeConfig(opts)
  await ensureToolCompiled(opts, classpath)
  const args = [
    'setup',
    '--timeout-ms', String(opts.startTimeoutMs),
    '--config-table', opts.configTable,
    '--config-family', SETTINGS.hbase.configFamily,
    '--config-qualifier', SETTINGS.hbase.configQualifier,
    '--seed-check-row', String(opts.seedCount),
    '--probe-row', '1',
    '--log-table', opts.accessLogTable,
    '--log-family', ACCESS_LOG_FAMILY,
    '--rollup-table', opts.rollupTable,
    '--rollup-family', ROLLUP_FAMILY,
    '--expect-servers', String(opts.regionServers),
    ...ttlArgs('--log-ttl', opts.accessLogRetention),
    ...ttlArgs('--rollup-ttl', opts.rollupRetention),
    ...Object.entries(ACCESS_LOG_STORAGE).flatMap(([name, value]) => ['--log-attr', `${name}=${value}`]),
    ...Object.entries(ROLLUP_STORAGE).flatMap(([name, value]) => ['--rollup-attr', `${name}=${value}`]),
    ...accessLogSplitKeys(opts.accessLogBuckets, opts.accessLogRegions).flatMap((key) => ['--split', key]),
    ...configSplitKeys(opts.regionServers).flatMap((key) => ['--config-split', key])
  ]
  const summary = /** @type {any} */ (await runTool(opts, classpath, args, { stdinLines: seedLines(opts.seedCount), signal }))
  if (summary.probe === null) throw new Error(`hbase: row 1 of ${opts.configTable} is missing after setup`)
  return summary
}

/**
 * @param {string} flag
 * @param {string} retention a duration (config/duration.js)
 * @returns {string[]} the flag and its seconds, or nothing for `forever` (the tool's default)
 */
function ttlArgs (flag, retention) {
  const seconds = parseDuration(retention)
  return seconds == null ? [] : [flag, String(seconds)]
}

function * seedLines (count) {
  for (let id = 1; id <= count; id++) yield `${id}\t${encodeToggles(sampleConfig(id))}`
}

/**
 * Makes sure HBase runs and serves with tables and seed in place: ensureClasspath, start, setupTables.
 * In a cluster it also restarts any of its JVMs that is not running.
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<{ bootstrap: string[], pid: number, pids: Record<string, number>, alreadyRunning: boolean, startedMs: number,
 *   setup: Record<string, any> }>}
 *   startedMs: how long this call took until HBase served reads with tables and seed in place
 */
async function up (opts = resolveOptions(), { log = noop } = {}) {
  const t0 = Date.now()
  const classpath = await ensureClasspath(opts, { log })
  const { alreadyRunning, pid, pids, started } = await start(opts, { log, classpath })
  const what = opts.cluster ? `${opts.regionServers} RegionServers, ${opts.masters} master(s), ZooKeeper` : 'standalone'
  log(alreadyRunning
    ? `hbase: already running (${what}; pid ${pid}), checking tables`
    : `hbase: started ${started.map((name) => `${name} pid ${pids[name]}`).join(', ')}; data ${opts.dataDir}; logs ${opts.logDir}`)

  // If a JVM dies while we wait (bad config, port race, OOM) fail now instead of at the deadline.
  const procs = processesOf(opts)
  const controller = new AbortController()
  /** @type {HBaseProcess|null} */
  let died = null
  const watch = setInterval(() => {
    died = procs.find((p) => !server.isAlive(pids[p.name])) || null
    if (died) controller.abort()
  }, WATCH_MS)
  let setup
  const toolStarted = Date.now()
  try {
    setup = await setupTables(opts, { log, classpath, signal: controller.signal })
  } catch (err) {
    const dead = /** @type {HBaseProcess|null} */ (died)
    if (!controller.signal.aborted || !dead) throw err
    fs.rmSync(dead.pidFile, { force: true })
    throw new Error(`hbase: the ${dead.name} JVM (pid ${pids[dead.name]}) exited during startup; last log lines:\n${server.logTail(dead)}`)
  } finally {
    clearInterval(watch)
  }

  const startedMs = Date.now() - t0
  const servingS = ((toolStarted - t0 + setup.readyMs) / 1000).toFixed(1)
  log(`hbase: ${alreadyRunning ? 'was running, serving' : 'started, serving'} ` +
    `after ${servingS} s, tables ready after ${(startedMs / 1000).toFixed(1)} s` +
    ` (created: ${setup.created.join(', ') || 'none'}; seeded rows: ${setup.seeded || `already present, ${opts.seedCount}`})`)
  if (opts.cluster) {
    log(`hbase: ${opts.accessLogTable} regions per RegionServer: ${Object.entries(setup.spread).map(([s, n]) => `${s} ${n}`).join(', ')}`)
    log(`hbase: ZooKeeper ${opts.host}:${opts.zkPort}; bootstrap ${bootstrapServers(opts).join(',')}`)
  } else {
    log(`hbase: RegionServer ${opts.host}:${opts.rsPort}, master ${opts.host}:${opts.masterPort}, ZooKeeper ${opts.host}:${opts.zkPort}` +
      (opts.masterInfoPort === -1 ? '' : `, UI http://${opts.host}:${opts.masterInfoPort}/`))
  }
  return { bootstrap: bootstrapServers(opts), pid, pids, alreadyRunning, startedMs, setup }
}

/**
 * Graceful stop: asks the master for an orderly cluster shutdown, then SIGTERM to whatever is
 * left (ZooKeeper last), and SIGKILL if a JVM is still there after 60 s in all.
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, pids: number[], forced: boolean, stopMs: number }>}
 */
async function down (opts = resolveOptions()) {
  const started = Date.now()
  const procs = processesOf(opts)
  const pids = procs.map((p) => server.runningPid(opts, p))
  const hbasePids = procs.map((p, i) => p.role === 'zookeeper' ? null : pids[i]).filter(Boolean)
  if (hbasePids.length > 0) {
    try {
      const classpath = cachedClasspath(opts)
      if (!classpath) throw new Error('no cached classpath')
      await ensureToolCompiled(opts, classpath)
      await runTool(opts, classpath, ['shutdown', '--timeout-ms', String(SHUTDOWN_REQUEST_MS)])
      await Promise.all(hbasePids.map((pid) => server.waitForExit(pid, SHUTDOWN_REQUEST_MS)))
    } catch {
      // The signals below still stop them.
    }
  }
  const remaining = () => Math.max(STOP_TIMEOUT_MS - (Date.now() - started), 1000)
  // ZooKeeper last: a RegionServer that loses it mid-shutdown hangs in retries.
  const results = await Promise.all(procs.filter((p) => p.role !== 'zookeeper')
    .map((p) => server.stopProcess(opts, p, { signal: 'SIGTERM', timeoutMs: remaining() })))
  for (const p of procs.filter((p) => p.role === 'zookeeper')) {
    results.push(await server.stopProcess(opts, p, { signal: 'SIGTERM', timeoutMs: remaining() }))
  }
  const running = pids.filter(Boolean)
  return {
    wasRunning: running.length > 0,
    pid: running[0] ?? null,
    pids: running,
    forced: results.some((r) => r.forced),
    stopMs: Date.now() - started
  }
}

/**
 * Crash stop: SIGKILL right away, every JVM of the instance or the one named (for recovery tests).
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @param {{ role: 'master'|'regionserver'|'zookeeper', index: number }} [target] one process of a cluster
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, pids: number[], stopMs: number, killed: string[] }>}
 */
async function kill (opts = resolveOptions(), target) {
  const started = Date.now()
  const procs = target ? [processOf(opts, target.role, target.index)] : processesOf(opts)
  const results = await Promise.all(procs.map((p) => server.stopProcess(opts, p, { signal: 'SIGKILL' })))
  const killed = procs.filter((p, i) => results[i].pid !== null)
  const pids = results.map((r) => r.pid).filter((pid) => pid !== null)
  return { wasRunning: pids.length > 0, pid: pids[0] ?? null, pids, stopMs: Date.now() - started, killed: killed.map((p) => p.name) }
}

/**
 * Starts one process of a cluster again: stops it first (SIGTERM, so a RegionServer closes its
 * regions) if it runs, then waits until it accepts connections on its port.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ role: 'master'|'regionserver'|'zookeeper', index: number }} target
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<{ name: string, stoppedPid: number|null, pid: number, stopMs: number, startMs: number }>}
 */
async function restart (opts, target, { log = noop } = {}) {
  const proc = processOf(opts, target.role, target.index)
  const classpath = await ensureClasspath(opts, { log })
  const stopped = await server.stopProcess(opts, proc, { signal: 'SIGTERM', timeoutMs: STOP_TIMEOUT_MS })
  const t0 = Date.now()
  const pid = await server.withStartLock(opts, async () => {
    await server.assertPortsFree(opts, [proc])
    writeConfig(opts)
    await ensureToolCompiled(opts, classpath)
    return server.spawnProcess(opts, proc, classpath)
  })
  await waitServing(opts, proc, pid, PROCESS_START_MS)
  return { name: proc.name, stoppedPid: stopped.pid, pid, stopMs: stopped.stopMs, startMs: Date.now() - t0 }
}

/**
 * Stops HBase and deletes its data dir (tables, WALs, ZooKeeper state). The stop is graceful
 * unless `crash` is set: data about to be deleted needs no orderly shutdown, and a SIGKILL ends
 * an instance in well under a second where an orderly one takes several (tests discard theirs so).
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @param {{ crash?: boolean }} [how]
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, forced: boolean, stopMs: number, removed: string }>}
 */
async function wipe (opts = resolveOptions(), { crash = false } = {}) {
  const dir = path.resolve(opts.dataDir)
  if (dir === path.parse(dir).root || REPO_ROOT.startsWith(dir + path.sep) || dir === REPO_ROOT) {
    throw new Error(`hbase: refusing to wipe ${dir}`)
  }
  const stopped = crash ? { ...await kill(opts), forced: true } : await down(opts)
  fs.rmSync(dir, { recursive: true, force: true })
  return { wasRunning: stopped.wasRunning, pid: stopped.pid, forced: stopped.forced, stopMs: stopped.stopMs, removed: dir }
}

async function waitServing (opts, proc, pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (!await server.portAccepts(opts.host, proc.port, 500)) {
    if (!server.isAlive(pid)) {
      throw new Error(`hbase: ${proc.name} (pid ${pid}) exited while starting; last log lines:\n${server.logTail(proc)}`)
    }
    if (Date.now() > deadline) {
      throw new Error(`hbase: ${proc.name} (pid ${pid}) does not accept on ${opts.host}:${proc.port} after ${timeoutMs} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

module.exports = {
  resolveOptions,
  ensureClasspath,
  start,
  setupTables,
  up,
  down,
  kill,
  restart,
  wipe,
  status,
  inspectCluster,
  dumpTable,
  // What tests and the bench use beside the lifecycle: the Java tools and JVM flags, the sample
  // config rows, a process's liveness and the start lock, the site files of an instance.
  runTool,
  ensureToolCompiled,
  ensureCompiled,
  toolJvmArgs,
  javaBin,
  javaFlags,
  shortLivedJavaFlags,
  sampleConfig,
  writeConfig,
  isAlive: server.isAlive,
  withStartLock: server.withStartLock
}
