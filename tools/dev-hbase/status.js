'use strict'

const { ensureClasspath } = require('./classpath')
const { writeConfig } = require('./site-config')
const { ensureToolCompiled, runTool } = require('./tool')
const { processesOf, bootstrapServers } = require('./processes')
const server = require('./server-process')

const INSPECT = 'BeaconHBaseInspect'
const INSPECT_TIMEOUT_MS = 30000

/**
 * @typedef {{ server: string, startCode: number, regions: number, meta: boolean, tables: Record<string, number> }} LiveServer
 * @typedef {{ active: string, backups: string[], live: LiveServer[], dead: string[], inTransition: number }} ClusterView
 */

/**
 * What HBase's own Java client (bootstrapped from ZooKeeper) sees: the active and backup masters,
 * each live RegionServer with the regions it holds (asked of the server itself), dead servers and
 * regions in transition. Starts a JVM: a few seconds.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ timeoutMs?: number }} [how]
 * @returns {Promise<ClusterView>}
 */
async function inspectCluster (opts, { timeoutMs = INSPECT_TIMEOUT_MS } = {}) {
  return /** @type {any} */ (await runInspect(opts, ['cluster', '--timeout-ms', String(timeoutMs)]))
}

/**
 * Writes every row of one column of a table to `outFile` as "rowkey TAB value" lines, read with
 * HBase's own Java client: an independent count of what beacon wrote.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ table: string, family: string, qualifier: string, outFile: string, timeoutMs?: number }} what
 * @returns {Promise<{ rows: number }>}
 */
async function dumpTable (opts, { table, family, qualifier, outFile, timeoutMs = 120000 }) {
  return /** @type {any} */ (await runInspect(opts, ['dump', '--timeout-ms', String(timeoutMs),
    '--table', table, '--family', family, '--qualifier', qualifier, '--out', outFile]))
}

async function runInspect (opts, args) {
  const classpath = await ensureClasspath(opts)
  writeConfig(opts)
  await ensureToolCompiled(opts, classpath)
  return runTool(opts, classpath, args, { tool: INSPECT })
}

/**
 * One entry per JVM of the instance: role, pid, ports, whether it accepts connections, and with
 * `regions` (and HBase reachable) the regions each RegionServer holds and which master is active.
 * @param {Readonly<Record<string, any>>} [opts] from resolveOptions()
 * @param {{ regions?: boolean }} [how]
 * @returns {Promise<{ running: boolean, pid: number|null, serving: boolean, host: string, zkPort: number, masterPort: number,
 *   rsPort: number,
 *   masterInfoPort: number, rsInfoPort: number, bootstrap: string[], dataDir: string, logFile: string, logDir: string,
 *   cluster: boolean, processes: Array<Record<string, any>>, view: ClusterView|null, viewError: string|null }>}
 *   running/pid/serving: of the standalone JVM, or in a cluster of any JVM / the first master /
 *   every RegionServer
 */
async function status (opts, { regions = false } = {}) {
  const processes = await Promise.all(processesOf(opts).map(async (proc) => {
    const pid = server.runningPid(opts, proc)
    return {
      name: proc.name,
      role: proc.role,
      index: proc.index,
      pid,
      port: proc.port,
      infoPort: proc.infoPort,
      serving: await server.portAccepts(opts.host, proc.port),
      logFile: proc.logFile
    }
  }))
  let view = null
  let viewError = null
  if (regions && processes.some((p) => p.pid)) {
    try {
      view = await inspectCluster(opts, { timeoutMs: 15000 })
    } catch (err) {
      viewError = err.message.split('\n')[0]
    }
  }
  if (view) annotate(opts, processes, view)
  const masters = processes.filter((p) => p.role !== 'zookeeper' && p.role !== 'regionserver')
  const servers = processes.filter((p) => p.role !== 'zookeeper' && p.role !== 'master')
  return {
    running: processes.some((p) => p.pid !== null),
    pid: masters[0].pid,
    serving: servers.every((p) => p.serving),
    host: opts.host,
    zkPort: opts.zkPort,
    masterPort: opts.masterPort,
    rsPort: opts.rsPort,
    masterInfoPort: opts.masterInfoPort,
    rsInfoPort: opts.rsInfoPort,
    bootstrap: bootstrapServers(opts),
    dataDir: opts.dataDir,
    logFile: processes[0].logFile,
    logDir: opts.logDir,
    cluster: opts.cluster,
    processes,
    view,
    viewError
  }
}

function annotate (opts, processes, view) {
  const byAddress = new Map(view.live.map((s) => [s.server, s]))
  for (const p of processes) {
    const address = `${opts.advertiseHost}:${p.port}`
    if (p.role === 'master' && p.pid) {
      p.master = view.active === address ? 'active' : view.backups.includes(address) ? 'backup' : 'not registered'
    }
    const live = (p.role === 'regionserver' || p.role === 'standalone') && byAddress.get(address)
    if (live) Object.assign(p, { regions: live.regions, meta: live.meta, tables: live.tables, startCode: live.startCode })
  }
}

module.exports = { status, inspectCluster, dumpTable }
