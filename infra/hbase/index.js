'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { resolveOptions, REPO_ROOT } = require('./options')
const { ensureClasspath, cachedClasspath } = require('./classpath')
const { writeConfig } = require('./site-config')
const { ensureToolCompiled, runTool } = require('./tool')
const { sampleConfig } = require('./sample-data')
const server = require('./server-process')
const { ACCESS_LOG_FAMILY, accessLogSplitKeys } = require('../../logging/access-log-layout')
const { DEFAULTS: SETTINGS } = require('../../config/defaults')
const { encodeToggles } = require('../../lib/toggles/store')

const noop = () => {}
const WATCH_MS = 500
const STOP_TIMEOUT_MS = 60000
const SHUTDOWN_REQUEST_MS = 20000

/**
 * Starts the standalone HBase JVM unless this instance's JVM is already running. Returns as soon
 * as the JVM is spawned; setupTables() waits until it serves.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ log?: (line: string) => void, classpath?: string }} [io]
 * @returns {Promise<{ alreadyRunning: boolean, pid: number }>}
 */
async function start (opts, { log = noop, classpath } = {}) {
  classpath ??= await ensureClasspath(opts, { log })
  // Two `up`s at once (a developer's and a test run's) must not both spawn a JVM on one data dir.
  return server.withStartLock(opts, async () => {
    const pid = server.runningPid(opts)
    if (pid) {
      // Alive but not accepting yet: another `up` has just started it. setupTables() waits for it
      // (or times out if it is wedged).
      if (!await server.portAccepts(opts.host, opts.rsPort)) log(`hbase: pid ${pid} is running but not serving yet; waiting for it`)
      return { alreadyRunning: true, pid }
    }
    fs.rmSync(opts.pidFile, { force: true })
    await server.assertPortsFree(opts)
    writeConfig(opts)
    fs.mkdirSync(opts.dataDir, { recursive: true })
    return { alreadyRunning: false, pid: server.spawnServer(opts, classpath) }
  })
}

/**
 * Waits until HBase serves reads on every region (covers master init and WAL recovery after a
 * crash), creates the config and access-log tables if absent and seeds the config table once.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ log?: (line: string) => void, classpath?: string, signal?: AbortSignal }} [io]
 * @returns {Promise<{ readyMs: number, totalMs: number, created: string[], regions: Record<string, number>, seeded: number, probe: string }>}
 *   readyMs/totalMs are measured from the start of the setup tool's JVM
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
    ...accessLogSplitKeys(opts.accessLogBuckets, opts.accessLogRegions).flatMap((key) => ['--split', key])
  ]
  const summary = /** @type {any} */ (await runTool(opts, classpath, args, { stdinLines: seedLines(opts.seedCount), signal }))
  if (summary.probe === null) throw new Error(`hbase: row 1 of ${opts.configTable} is missing after setup`)
  return summary
}

function * seedLines (count) {
  for (let id = 1; id <= count; id++) yield `${id}\t${encodeToggles(sampleConfig(id))}`
}

/**
 * Makes sure HBase runs and serves with tables and seed in place: ensureClasspath, start, setupTables.
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<{ bootstrap: string[], pid: number, alreadyRunning: boolean, startedMs: number, setup: Record<string, any> }>}
 *   startedMs: how long this call took until HBase served reads with tables and seed in place
 */
async function up (opts = resolveOptions(), { log = noop } = {}) {
  const t0 = Date.now()
  const classpath = await ensureClasspath(opts, { log })
  const { alreadyRunning, pid } = await start(opts, { log, classpath })
  log(alreadyRunning
    ? `hbase: already running (pid ${pid}), checking tables`
    : `hbase: started pid ${pid}; data ${opts.dataDir}; log ${opts.logFile}`)

  // If the JVM dies while we wait (bad config, port race, OOM) fail now instead of at the deadline.
  const controller = new AbortController()
  const watch = setInterval(() => { if (!server.isAlive(pid)) controller.abort() }, WATCH_MS)
  let setup
  const toolStarted = Date.now()
  try {
    setup = await setupTables(opts, { log, classpath, signal: controller.signal })
  } catch (err) {
    if (!controller.signal.aborted) throw err
    fs.rmSync(opts.pidFile, { force: true })
    throw new Error(`hbase: the HBase JVM (pid ${pid}) exited during startup; last log lines:\n${server.logTail(opts)}`)
  } finally {
    clearInterval(watch)
  }

  const startedMs = Date.now() - t0
  const servingS = ((toolStarted - t0 + setup.readyMs) / 1000).toFixed(1)
  log(`hbase: ${alreadyRunning ? 'was running, serving' : 'started, serving'} after ${servingS} s, tables ready after ${(startedMs / 1000).toFixed(1)} s` +
    ` (created: ${setup.created.join(', ') || 'none'}; seeded rows: ${setup.seeded || `already present, ${opts.seedCount}`})`)
  log(`hbase: RegionServer ${opts.host}:${opts.rsPort}, master ${opts.host}:${opts.masterPort}, ZooKeeper ${opts.host}:${opts.zkPort}` +
    (opts.masterInfoPort === -1 ? '' : `, UI http://${opts.host}:${opts.masterInfoPort}/`))
  return { bootstrap: bootstrapServers(opts), pid, alreadyRunning, startedMs, setup }
}

/**
 * Graceful stop: asks the master for an orderly cluster shutdown, then SIGTERM, and SIGKILL if the
 * JVM is still there after 60 s in all.
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, forced: boolean, stopMs: number }>}
 */
async function down (opts = resolveOptions()) {
  const started = Date.now()
  const pid = server.runningPid(opts)
  if (pid) {
    try {
      const classpath = cachedClasspath(opts)
      if (!classpath) throw new Error('no cached classpath')
      await ensureToolCompiled(opts, classpath)
      await runTool(opts, classpath, ['shutdown', '--timeout-ms', String(SHUTDOWN_REQUEST_MS)])
      await server.waitForExit(pid, SHUTDOWN_REQUEST_MS)
    } catch {
      // The signals below still stop it.
    }
  }
  const remaining = Math.max(STOP_TIMEOUT_MS - (Date.now() - started), 1000)
  const { forced } = await server.stopServer(opts, { signal: 'SIGTERM', timeoutMs: remaining })
  return { wasRunning: pid !== null, pid, forced, stopMs: Date.now() - started }
}

/**
 * Crash stop: SIGKILL the recorded pid right away (for recovery tests).
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, stopMs: number }>}
 */
async function kill (opts = resolveOptions()) {
  const { pid, stopMs } = await server.stopServer(opts, { signal: 'SIGKILL' })
  return { wasRunning: pid !== null, pid, stopMs }
}

/**
 * Stops HBase gracefully and deletes its data dir (tables, WALs, ZooKeeper state).
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @returns {Promise<{ wasRunning: boolean, pid: number|null, forced: boolean, stopMs: number, removed: string }>}
 */
async function wipe (opts = resolveOptions()) {
  const dir = path.resolve(opts.dataDir)
  if (dir === path.parse(dir).root || REPO_ROOT.startsWith(dir + path.sep) || dir === REPO_ROOT) {
    throw new Error(`hbase: refusing to wipe ${dir}`)
  }
  const stopped = await down(opts)
  fs.rmSync(dir, { recursive: true, force: true })
  return { ...stopped, removed: dir }
}

/**
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @returns {Promise<{ running: boolean, pid: number|null, serving: boolean, host: string, zkPort: number, masterPort: number, rsPort: number, masterInfoPort: number, rsInfoPort: number, bootstrap: string[], dataDir: string, logFile: string }>}
 *   serving: the RegionServer port accepts connections
 */
async function status (opts = resolveOptions()) {
  const pid = server.runningPid(opts)
  return {
    running: pid !== null,
    pid,
    serving: await server.portAccepts(opts.host, opts.rsPort),
    host: opts.host,
    zkPort: opts.zkPort,
    masterPort: opts.masterPort,
    rsPort: opts.rsPort,
    masterInfoPort: opts.masterInfoPort,
    rsInfoPort: opts.rsInfoPort,
    bootstrap: bootstrapServers(opts),
    dataDir: opts.dataDir,
    logFile: opts.logFile
  }
}

function bootstrapServers (opts) {
  return [`${opts.host}:${opts.rsPort}`, `${opts.host}:${opts.masterPort}`]
}

module.exports = { resolveOptions, ensureClasspath, start, setupTables, up, down, kill, wipe, status }
