'use strict'

const path = require('node:path')

/**
 * @typedef {object} HBaseProcess one JVM of an instance
 * @property {string} name 'standalone', 'zk', 'master-1', 'rs-2', …: the file names and the CLI use it
 * @property {'standalone'|'zookeeper'|'master'|'regionserver'} role
 * @property {number} index 1-based within its role (1 for standalone and zookeeper)
 * @property {string} mainClass
 * @property {string[]} args after the main class (`-D` overrides, then the command)
 * @property {string} heap
 * @property {number} port the port it serves clients on (ZooKeeper client, master or RegionServer RPC)
 * @property {number} infoPort its web UI port, or -1
 * @property {string} pidFile
 * @property {string} logFile
 * @property {string} outFile its stdout/stderr
 * @property {string} log4jFile
 */

const HMASTER = 'org.apache.hadoop.hbase.master.HMaster'
const HREGIONSERVER = 'org.apache.hadoop.hbase.regionserver.HRegionServer'
const ZOOKEEPER = 'org.apache.zookeeper.server.ZooKeeperServerMain'

/**
 * The JVMs of one instance, in start order. Standalone: one HMaster JVM that also runs a
 * RegionServer and ZooKeeper. Cluster: ZooKeeper, the masters (the 2nd and 3rd as backups) and
 * the RegionServers, each its own process with its own ports, pid, log and tmp dir, sharing the
 * conf dir and the root dir, the way HBase's local-master-backup.sh and local-regionservers.sh
 * run extra servers on one machine.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {HBaseProcess[]}
 */
function processesOf (opts) {
  if (!opts.cluster) {
    return [{
      ...files(opts, 'standalone', 'hbase'),
      pidFile: opts.pidFile,
      role: 'standalone',
      index: 1,
      mainClass: HMASTER,
      args: ['start'],
      heap: opts.heap,
      port: opts.rsPort,
      infoPort: opts.rsInfoPort
    }]
  }
  /** @type {HBaseProcess[]} */
  const list = [{
    ...files(opts, 'zk'),
    role: 'zookeeper',
    index: 1,
    mainClass: ZOOKEEPER,
    args: [path.join(opts.confDir, 'zoo.cfg')],
    heap: opts.zkHeap,
    port: opts.zkPort,
    infoPort: -1
  }]
  for (let i = 1; i <= opts.masters; i++) {
    const port = opts.masterPort + i - 1
    const infoPort = offset(opts.masterInfoPort, i)
    list.push({
      ...files(opts, `master-${i}`),
      role: 'master',
      index: i,
      mainClass: HMASTER,
      args: [
        ...defines({ 'hbase.master.port': port, 'hbase.master.info.port': infoPort, 'hbase.tmp.dir': tmpDir(opts, `master-${i}`) }),
        ...(i > 1 ? ['--backup'] : []), 'start'
      ],
      heap: opts.masterHeap,
      port,
      infoPort
    })
  }
  for (let i = 1; i <= opts.regionServers; i++) {
    const port = opts.rsPort + i - 1
    const infoPort = offset(opts.rsInfoPort, i)
    list.push({
      ...files(opts, `rs-${i}`),
      role: 'regionserver',
      index: i,
      mainClass: HREGIONSERVER,
      args: [
        ...defines({ 'hbase.regionserver.port': port, 'hbase.regionserver.info.port': infoPort, 'hbase.tmp.dir': tmpDir(opts, `rs-${i}`) }),
        'start'
      ],
      heap: opts.heap,
      port,
      infoPort
    })
  }
  return list
}

/**
 * The one process named by role and 1-based index, e.g. ('regionserver', 2).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {'master'|'regionserver'|'zookeeper'} role
 * @param {number} index
 * @returns {HBaseProcess}
 */
function processOf (opts, role, index) {
  if (!opts.cluster) {
    throw new Error('hbase: single processes can be addressed only in a cluster (BEACON_HBASE_REGIONSERVERS > 1); standalone HBase is ' +
      'one JVM')
  }
  const found = processesOf(opts).find((p) => p.role === role && p.index === index)
  if (!found) {
    const count = processesOf(opts).filter((p) => p.role === role).length
    throw new RangeError(`hbase: there is no ${role} ${index} (this cluster has ${count}, numbered from 1)`)
  }
  return found
}

/**
 * Addresses a client may bootstrap from: every RegionServer and master (any of them answers
 * where hbase:meta is).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {string[]}
 */
function bootstrapServers (opts) {
  if (!opts.cluster) return [`${opts.advertiseHost}:${opts.rsPort}`, `${opts.advertiseHost}:${opts.masterPort}`]
  return processesOf(opts)
    .filter((p) => p.role === 'regionserver' || p.role === 'master')
    .map((p) => `${opts.advertiseHost}:${p.port}`)
}

function files (opts, name, base = name) {
  return {
    name,
    pidFile: path.join(opts.stateDir, 'pids', `${name}.pid`),
    logFile: path.join(opts.logDir, `${base}.log`),
    outFile: path.join(opts.logDir, `${base}.out`),
    log4jFile: path.join(opts.confDir, `log4j-${name}.properties`)
  }
}

function tmpDir (opts, name) {
  return path.join(opts.dataDir, 'tmp', name)
}

function offset (port, index) {
  return port === -1 ? -1 : port + index - 1
}

function defines (props) {
  return Object.entries(props).map(([key, value]) => `-D${key}=${value}`)
}

module.exports = { processesOf, processOf, bootstrapServers, HMASTER, HREGIONSERVER, ZOOKEEPER }
