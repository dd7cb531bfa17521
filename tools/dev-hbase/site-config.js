'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { processesOf } = require('./processes')
const { mkdirPrivate, touchPrivate, PRIVATE_FILE } = require('./private-files')

/**
 * hbase-site.xml properties for one instance that binds to `opts.host` only and advertises
 * `opts.advertiseHost` (the same unless a proxy stands in front):
 * standalone (master, RegionServer and ZooKeeper in one JVM) or a cluster of separate JVMs. A
 * cluster's per-process ports and tmp dirs are `-D` arguments of each process (processes.js).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {Record<string, string|number|boolean>}
 */
function siteProperties (opts) {
  return { ...commonProperties(opts), ...(opts.cluster ? clusterProperties(opts) : standaloneProperties()) }
}

function standaloneProperties () {
  return {
    // Standalone mode ignores zookeeper.session.timeout and uses this key (10 s by default) for
    // the sessions of its master and RegionServer with the ZooKeeper in the same JVM. A JVM
    // paused for 5 s (GC, or SIGSTOP in the outage test) has both sides frozen; after SIGCONT the
    // client may need a further reconnect, and a session past 10 s expires: the master aborts.
    // 30 s is within the in-JVM ZooKeeper's maximum (20 ticks of 2 s).
    'zookeeper.session.timeout.localHBaseCluster': 30000
  }
}

function clusterProperties (opts) {
  return {
    'hbase.cluster.distributed': true,
    // Every RegionServer reports before the master assigns regions, so tables start spread.
    'hbase.master.wait.on.regionservers.mintostart': opts.regionServers,
    'hbase.master.wait.on.regionservers.maxtostart': opts.regionServers,
    // A SIGKILLed server is noticed when its ZooKeeper session expires: 90 s by default, seconds here.
    'zookeeper.session.timeout': opts.zkSessionTimeoutMs,
    // Rebalance a restarted (empty) RegionServer within a minute instead of HBase's 5.
    'hbase.balancer.period': 60000,
    // A RegionServer that reports a region opened or closed while the active master dies
    // retries the dead master at once, counting each try; once the new master answers "not
    // running yet" it backs off by that count, up to 200 x this pause: 200 s by default, a
    // region left in transition that long (seen in the chaos test). 20 s here.
    'hbase.rpc.shortoperation.retry.pause.time': 100
  }
}

function commonProperties (opts) {
  return {
    'hbase.cluster.distributed': false,
    'hbase.rootdir': pathToFileURL(path.join(opts.dataDir, 'hbase')).href,
    'hbase.tmp.dir': path.join(opts.dataDir, 'tmp'),
    // Its files live in beacon's state dir, which holds logged IPs: this user's only (0600/0700),
    // also where Hadoop's local file system sets modes itself rather than leave them to the umask.
    'fs.permissions.umask-mode': '077',
    'hbase.data.umask.enable': true,
    'hbase.data.umask': '077',
    // Hadoop 2's local file system sets the modes its callers pass (0666 for a WAL) without the
    // umask above; this subclass applies it (compiled with the tool classes).
    'fs.file.impl': 'BeaconPrivateLocalFileSystem',
    // The local file system has no hflush/hsync capability flags; HBase refuses to write WALs without this.
    'hbase.unsafe.stream.capability.enforce': false,
    'hbase.master.wait.on.regionservers.maxtostart': 1,
    // hbase:meta stayed unassigned ("No servers available") until the RegionServer's next report;
    // with the default 3 s interval that cost ~3 s on every start here.
    'hbase.regionserver.msginterval': 1000,
    // ZSTD and LZ4 from the pom's hbase-compression-aircompressor (pure Java). HBase's defaults
    // are Hadoop's codecs, which need a native libhadoop this setup does not have.
    'hbase.io.compress.zstd.codec': 'org.apache.hadoop.hbase.io.compress.aircompressor.ZstdCodec',
    'hbase.io.compress.lz4.codec': 'org.apache.hadoop.hbase.io.compress.aircompressor.Lz4Codec',

    'hbase.zookeeper.quorum': opts.host,
    'hbase.zookeeper.property.clientPort': opts.zkPort,
    'hbase.zookeeper.property.clientPortAddress': opts.host,
    'hbase.zookeeper.property.dataDir': path.join(opts.dataDir, 'zk'),

    'hbase.master.port': opts.masterPort,
    'hbase.master.ipc.address': opts.host,
    'hbase.master.hostname': opts.advertiseHost,
    'hbase.master.info.port': opts.masterInfoPort,
    'hbase.master.info.bindAddress': opts.host,

    'hbase.regionserver.port': opts.rsPort,
    'hbase.regionserver.ipc.address': opts.host,
    'hbase.unsafe.regionserver.hostname': opts.advertiseHost,
    'hbase.regionserver.info.port': opts.rsInfoPort,
    'hbase.regionserver.info.bindAddress': opts.host
  }
}

/**
 * log4j 1.x (reload4j) configuration: everything to one file, noisy libraries at WARN.
 * @param {string} file log file path
 * @param {string} [level]
 * @returns {string}
 */
function log4jProperties (file, level = 'INFO') {
  const quiet = ['org.apache.zookeeper', 'org.apache.hadoop', 'org.apache.hbase.thirdparty', 'org.eclipse.jetty',
    'org.apache.hadoop.hbase.zookeeper.RecoverableZooKeeper', 'org.apache.hadoop.hbase.metrics']
  const lines = [
    `log4j.rootLogger=${level},FILE`,
    'log4j.appender.FILE=org.apache.log4j.RollingFileAppender',
    `log4j.appender.FILE.File=${file}`,
    'log4j.appender.FILE.MaxFileSize=64MB',
    'log4j.appender.FILE.MaxBackupIndex=2',
    'log4j.appender.FILE.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n',
    ...quiet.map((name) => `log4j.logger.${name}=WARN`),
    // Keep the HBase classes under org.apache.hadoop at the chosen level.
    `log4j.logger.org.apache.hadoop.hbase=${level}`
  ]
  return lines.join('\n') + '\n'
}

/**
 * ZooKeeper's own configuration for a cluster: one server, 1 s ticks so that sessions of 2..20 s
 * are allowed (HBase asks for `zkSessionTimeoutMs`), no admin web server (it would take port 8080).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {string}
 */
function zooCfg (opts) {
  return [
    'tickTime=1000',
    'initLimit=10',
    'syncLimit=5',
    'minSessionTimeout=2000',
    'maxSessionTimeout=20000',
    `dataDir=${path.join(opts.dataDir, 'zk')}`,
    `clientPort=${opts.zkPort}`,
    `clientPortAddress=${opts.host}`,
    // Every RegionServer, master and client of this machine connects from one address.
    'maxClientCnxns=0',
    'admin.enableServer=false'
  ].join('\n') + '\n'
}

/**
 * Writes `<confDir>/hbase-site.xml`, a log4j configuration per JVM (each its own file), one for
 * the setup tool, and in a cluster ZooKeeper's `zoo.cfg`.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 */
function writeConfig (opts) {
  mkdirPrivate(opts.confDir)
  mkdirPrivate(opts.logDir)
  // The tool JVMs run under the caller's umask; log4j keeps the mode of a file that exists.
  touchPrivate(opts.toolLogFile)
  writeIfChanged(path.join(opts.confDir, 'hbase-site.xml'), siteXml(siteProperties(opts)))
  for (const proc of processesOf(opts)) writeIfChanged(proc.log4jFile, log4jProperties(proc.logFile))
  writeIfChanged(path.join(opts.confDir, 'tool-log4j.properties'), log4jProperties(opts.toolLogFile, 'WARN'))
  if (opts.cluster) {
    mkdirPrivate(path.join(opts.dataDir, 'zk'))
    writeIfChanged(path.join(opts.confDir, 'zoo.cfg'), zooCfg(opts))
  }
}

function siteXml (props) {
  const body = Object.entries(props)
    .map(([name, value]) => `  <property><name>${name}</name><value>${escapeXml(String(value))}</value></property>`)
    .join('\n')
  return '<?xml version="1.0"?>\n<!-- Generated by tools/dev-hbase/site-config.js; edits are overwritten. ' +
    `-->\n<configuration>\n${body}\n</configuration>\n`
}

function escapeXml (s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function writeIfChanged (file, text) {
  try {
    if (fs.readFileSync(file, 'utf8') === text) return
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
  }
  fs.writeFileSync(file, text, { mode: PRIVATE_FILE })
}

module.exports = { siteProperties, zooCfg, log4jProperties, writeConfig }
