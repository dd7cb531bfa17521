'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const { settings: { DEFAULTS: SETTINGS, parseDuration, DURATION_HELP } } = require('../../index.js')

const REPO_ROOT = path.resolve(__dirname, '..', '..')
// The resolved classpath is cached per HBase version and pom: a jar added to the pom must reach
// the next start, not only a fresh checkout's.
const POM_HASH = crypto.createHash('sha256').update(fs.readFileSync(path.join(__dirname, 'pom.xml'))).digest('hex').slice(0, 8)

const port = { parse: parseInteger, min: 1, max: 65535 }
const infoPort = { parse: parseInteger, min: -1, max: 65535, check: (n) => n !== 0 || 'must be -1 (disabled) or 1..65535' }
const tableName = { parse: parseTableName }
const retention = { parse: parseRetention }

// key -> [env var, default, kind]. A default may be a function of the options resolved so far.
/** @typedef {((raw: any) => any) & { expected?: string }} SpecParse */
/** @typedef {{ parse: SpecParse, min?: number, max?: number, check?: (value: any) => true|string }} SpecKind */
/** @type {Record<string, [string, any, SpecKind]>} */
const SPEC = {
  version: ['BEACON_HBASE_VERSION', '2.6.1', { parse: parseVersion }],
  stateDir: ['BEACON_HBASE_STATE_DIR', path.join(REPO_ROOT, '.state', 'hbase'), { parse: parseDir }],
  dataDir: ['BEACON_HBASE_DATA_DIR', (o) => path.join(o.stateDir, 'data'), { parse: parseDir }],
  host: ['BEACON_HBASE_HOST', '127.0.0.1', { parse: parseHost }],
  // The address HBase tells clients (in hbase:meta and ZooKeeper) to reach its servers at, when
  // that is not where they listen: e.g. a fault-injecting proxy in front of every server port.
  advertiseHost: ['BEACON_HBASE_ADVERTISE_HOST', (o) => o.host, { parse: parseHost }],
  zkPort: ['BEACON_HBASE_ZK_PORT', 2181, port],
  masterPort: ['BEACON_HBASE_MASTER_PORT', 16000, port],
  rsPort: ['BEACON_HBASE_RS_PORT', 16020, port],
  masterInfoPort: ['BEACON_HBASE_MASTER_INFO_PORT', 16010, infoPort],
  rsInfoPort: ['BEACON_HBASE_RS_INFO_PORT', 16030, infoPort],
  // 1 = standalone (one JVM is master, RegionServer and ZooKeeper); N > 1 = a distributed-mode
  // cluster on this machine: a ZooKeeper, `masters` HMasters and N HRegionServer JVMs.
  regionServers: ['BEACON_HBASE_REGIONSERVERS', 1, { parse: parseInteger, min: 1, max: 9 }],
  masters: ['BEACON_HBASE_MASTERS', 1, { parse: parseInteger, min: 1, max: 3 }],
  // Standalone: the one JVM's heap. Cluster: each RegionServer's heap.
  heap: ['BEACON_HBASE_HEAP', (o) => o.regionServers > 1 ? '512m' : '1g', { parse: parseHeap }],
  masterHeap: ['BEACON_HBASE_MASTER_HEAP', '384m', { parse: parseHeap }],
  zkHeap: ['BEACON_HBASE_ZK_HEAP', '128m', { parse: parseHeap }],
  // server: C2 and G1, for long, hot runs; light: C1 and the serial collector (jvm.js), for the
  // instances tests start and kill within minutes.
  jvm: ['BEACON_HBASE_JVM', 'server', { parse: parseJvmProfile }],
  // How long ZooKeeper waits before it declares a silent server dead (HBase's default is 90 s).
  // ZooKeeper runs with tickTime 1 s and grants sessions of 2..20 ticks.
  zkSessionTimeoutMs: ['BEACON_HBASE_ZK_SESSION_TIMEOUT_MS', 10000, { parse: parseInteger, min: 2000, max: 20000 }],
  // The JVMs' class-data archive (tools/dev-hbase/cds.js), shared by every
  // instance of the checkout; 'off' for none.
  cdsDir: ['BEACON_HBASE_CDS_DIR', path.join(REPO_ROOT, '.state', 'jvm-cds'), { parse: parseDirOrOff }],
  // The resolved classpath and the compiled tool classes, shared by every instance of the
  // checkout: resolving runs Maven and compiling javac, seconds of CPU each per state dir else.
  buildDir: ['BEACON_HBASE_BUILD_DIR', path.join(REPO_ROOT, '.state', 'hbase-build'), { parse: parseDir }],
  startTimeoutMs: ['BEACON_HBASE_START_TIMEOUT_MS', 180000, { parse: parseInteger, min: 1000, max: 3600000 }],
  configTable: ['BEACON_CONFIG_TABLE', SETTINGS.hbase.configTable, tableName],
  accessLogTable: ['BEACON_ACCESS_LOG_TABLE', SETTINGS.logSinks.hbase.table, tableName],
  rollupTable: ['BEACON_ACCESS_ROLLUP_TABLE', SETTINGS.logSinks.hbase.rollupTable, tableName],
  // The TTL a table gets when setup creates it (config/duration.js); an existing one keeps its own.
  accessLogRetention: ['BEACON_ACCESS_LOG_RETENTION', SETTINGS.logSinks.hbase.retention, retention],
  rollupRetention: ['BEACON_ACCESS_ROLLUP_RETENTION', SETTINGS.logSinks.hbase.rollupRetention, retention],
  accessLogBuckets: ['BEACON_ACCESS_LOG_BUCKETS', 16, { parse: parseInteger, min: 1, max: 256 }],
  accessLogRegions: ['BEACON_ACCESS_LOG_REGIONS', 8, { parse: parseInteger, min: 1, max: 256 }],
  seedCount: ['BEACON_SEED_COUNT', 10000, { parse: parseInteger, min: 1, max: 10000000 }]
}

/**
 * Options for one HBase instance (standalone, or a cluster when regionServers > 1): explicit overrides, else environment, else defaults.
 * Every function in tools/dev-hbase takes this object, so a second instance only needs another
 * stateDir and other ports.
 * @param {Record<string, string|number>} [overrides] keys as in the returned object
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Readonly<Record<string, any>>}
 */
function resolveOptions (overrides = {}, env = process.env) {
  for (const key of Object.keys(overrides)) {
    if (!Object.hasOwn(SPEC, key)) throw new TypeError(`hbase options: unknown option "${key}"`)
  }
  const o = {}
  for (const [key, [envName, def, kind]] of Object.entries(SPEC)) {
    let raw, source
    if (overrides[key] !== undefined) {
      raw = overrides[key]
      source = `option ${key}`
    } else if (env[envName] !== undefined && env[envName] !== '') {
      raw = env[envName]
      source = envName
    } else {
      raw = typeof def === 'function' ? def(o) : def
      source = `default of ${envName}`
    }
    o[key] = validate(raw, kind, source)
  }
  if (o.masters > 1 && o.regionServers === 1) {
    throw new RangeError('hbase options: BEACON_HBASE_MASTERS > 1 needs a cluster (BEACON_HBASE_REGIONSERVERS > 1); standalone HBase has ' +
      'one master')
  }
  checkDistinctPorts(o)
  Object.assign(o, {
    cluster: o.regionServers > 1,
    confDir: path.join(o.stateDir, 'conf'),
    logDir: path.join(o.stateDir, 'logs'),
    logFile: path.join(o.stateDir, 'logs', 'hbase.log'),
    outFile: path.join(o.stateDir, 'logs', 'hbase.out'),
    toolLogFile: path.join(o.stateDir, 'logs', 'tool.log'),
    pidFile: path.join(o.stateDir, 'hbase.pid'),
    classesDir: path.join(o.buildDir, 'classes'),
    classpathFile: path.join(o.buildDir, `classpath-${o.version}-${POM_HASH}.txt`)
  })
  return Object.freeze(o)
}

function validate (raw, kind, source) {
  const value = kind.parse(raw)
  if (value === undefined) throw new TypeError(`hbase options: ${source}=${JSON.stringify(raw)} is not valid (${kind.parse.expected})`)
  if (typeof value === 'number' && (value < kind.min || value > kind.max)) {
    throw new RangeError(`hbase options: ${source}=${value} is out of range ${kind.min}..${kind.max}`)
  }
  const problem = kind.check && kind.check(value)
  if (typeof problem === 'string') throw new RangeError(`hbase options: ${source}=${value} ${problem}`)
  return value
}

// In a cluster the i-th master (and RegionServer) uses the base port + i - 1, as HBase's own
// local-master-backup.sh and local-regionservers.sh offset theirs.
function checkDistinctPorts (o) {
  const seen = new Map()
  const counts = { zkPort: 1, masterPort: o.masters, masterInfoPort: o.masters, rsPort: o.regionServers, rsInfoPort: o.regionServers }
  for (const [key, count] of Object.entries(counts)) {
    if (o[key] === -1) continue
    for (let i = 0; i < count; i++) {
      const port = o[key] + i
      const name = count > 1 ? `${key}+${i}` : key
      if (port > 65535) throw new RangeError(`hbase options: ${name} is ${port}, above 65535`)
      if (seen.has(port)) throw new RangeError(`hbase options: ${name} and ${seen.get(port)} are both ${port}`)
      seen.set(port, name)
    }
  }
}

function parseInteger (raw) {
  const s = String(raw).trim()
  return /^-?\d+$/.test(s) ? Number(s) : undefined
}
parseInteger.expected = 'an integer'

function parseVersion (raw) {
  const s = String(raw).trim()
  return /^\d+\.\d+\.\d+[\w.-]*$/.test(s) ? s : undefined
}
parseVersion.expected = 'a version like 2.6.1'

function parseDir (raw) {
  const s = String(raw).trim()
  return s ? path.resolve(s) : undefined
}
parseDir.expected = 'a directory path'

function parseDirOrOff (raw) {
  return String(raw).trim() === 'off' ? '' : parseDir(raw)
}
parseDirOrOff.expected = 'a directory path, or off'

function parseHost (raw) {
  const s = String(raw).trim()
  return /^[\w.:-]+$/.test(s) ? s : undefined
}
parseHost.expected = 'a host name or IP address'

function parseJvmProfile (raw) {
  const s = String(raw).trim()
  return s === 'server' || s === 'light' ? s : undefined
}
parseJvmProfile.expected = 'server or light'

function parseHeap (raw) {
  const s = String(raw).trim()
  return /^\d+[kmgKMG]?$/.test(s) ? s : undefined
}
parseHeap.expected = 'a JVM size like 512m or 1g'

function parseTableName (raw) {
  const s = String(raw).trim()
  return /^([\w-]+:)?\w[\w.-]*$/.test(s) ? s : undefined
}
parseTableName.expected = 'an HBase table name'

function parseRetention (raw) {
  const s = String(raw).trim()
  return parseDuration(s) === undefined ? undefined : s
}
parseRetention.expected = DURATION_HELP

module.exports = { resolveOptions, REPO_ROOT }
