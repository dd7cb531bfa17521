'use strict'

// The local HBase's options and process layout, standalone and cluster: pure functions, no JVM.

const path = require('node:path')
const { resolveOptions } = require('../options')
const { processesOf, processOf, bootstrapServers } = require('../processes')
const { siteProperties, zooCfg } = require('../site-config')
const { tables: { configSplitKeys } } = require('../../../index.js')

const STATE = path.resolve('/tmp/beacon-hbase-options-test')

describe('standalone (the default)', () => {
  const opts = resolveOptions({ stateDir: STATE }, {})

  test('one JVM, the pid file and log it always had, bootstrap from its RegionServer and master', () => {
    const procs = processesOf(opts)
    expect(procs).toHaveLength(1)
    expect(procs[0]).toMatchObject({
      name: 'standalone',
      role: 'standalone',
      pidFile: path.join(STATE, 'hbase.pid'),
      logFile: path.join(STATE, 'logs', 'hbase.log'),
      heap: '1g',
      args: ['start']
    })
    expect(bootstrapServers(opts)).toEqual(['127.0.0.1:16020', '127.0.0.1:16000'])
    expect(siteProperties(opts)['hbase.cluster.distributed']).toBe(false)
    // Outlasts a 5 s freeze of the one JVM (the in-JVM ZooKeeper allows up to 40 s).
    expect(siteProperties(opts)['zookeeper.session.timeout.localHBaseCluster']).toBe(30000)
    // Its files are in beacon's state dir: private whatever modes Hadoop's local file system sets itself.
    expect(siteProperties(opts)).toMatchObject({
      'fs.permissions.umask-mode': '077',
      'hbase.data.umask.enable': true,
      'hbase.data.umask': '077',
      'fs.file.impl': 'BeaconPrivateLocalFileSystem'
    })
    // ZSTD and LZ4 from the pom's pure-Java codecs (no native libhadoop here).
    expect(siteProperties(opts)['hbase.io.compress.zstd.codec']).toBe('org.apache.hadoop.hbase.io.compress.aircompressor.ZstdCodec')
    expect(siteProperties(opts)['hbase.io.compress.lz4.codec']).toBe('org.apache.hadoop.hbase.io.compress.aircompressor.Lz4Codec')
    // A jar added to the pom reaches state dirs that cached a classpath before it.
    expect(path.basename(opts.classpathFile)).toMatch(/^classpath-2\.6\.1-[0-9a-f]{8}\.txt$/)
  })

  test('single processes cannot be addressed', () => {
    expect(() => processOf(opts, 'regionserver', 1)).toThrow(/only in a cluster/)
  })

  test('a backup master needs a cluster', () => {
    expect(() => resolveOptions({ stateDir: STATE }, { BEACON_HBASE_MASTERS: '2' })).toThrow(/needs a cluster/)
  })
})

describe('cluster (BEACON_HBASE_REGIONSERVERS > 1)', () => {
  const env = { BEACON_HBASE_REGIONSERVERS: '3', BEACON_HBASE_MASTERS: '2' }
  const opts = resolveOptions({ stateDir: STATE }, env)

  test('ZooKeeper, then the masters, then the RegionServers, ports offset from the base ports', () => {
    const procs = processesOf(opts)
    expect(procs.map((p) => `${p.name}:${p.port}:${p.infoPort}`)).toEqual([
      'zk:2181:-1', 'master-1:16000:16010', 'master-2:16001:16011', 'rs-1:16020:16030', 'rs-2:16021:16031', 'rs-3:16022:16032'
    ])
    expect(procs.find((p) => p.name === 'master-2').args).toContain('--backup')
    expect(procs.find((p) => p.name === 'master-1').args).not.toContain('--backup')
    expect(processOf(opts, 'regionserver', 2).args).toEqual(expect.arrayContaining(['-Dhbase.regionserver.port=16021', 'start']))
    expect(new Set(procs.map((p) => p.pidFile)).size).toBe(procs.length)
    expect(new Set(procs.map((p) => p.logFile)).size).toBe(procs.length)
    expect(bootstrapServers(opts)).toEqual(['127.0.0.1:16000', '127.0.0.1:16001', '127.0.0.1:16020', '127.0.0.1:16021', '127.0.0.1:16022'])
  })

  test('heaps: 512m per RegionServer unless BEACON_HBASE_HEAP says otherwise', () => {
    expect(processOf(opts, 'regionserver', 1).heap).toBe('512m')
    expect(processOf(opts, 'master', 1).heap).toBe('384m')
    expect(processOf(resolveOptions({ stateDir: STATE }, { ...env, BEACON_HBASE_HEAP: '768m' }), 'regionserver', 3).heap).toBe('768m')
  })

  test('an index out of range names how many there are', () => {
    expect(() => processOf(opts, 'regionserver', 4)).toThrow(/no regionserver 4 \(this cluster has 3/)
    expect(() => processOf(opts, 'master', 0)).toThrow(/no master 0/)
  })

  test('overlapping port ranges are refused, naming both', () => {
    expect(() => resolveOptions({ stateDir: STATE }, { ...env, BEACON_HBASE_RS_PORT: '16001' })).toThrow(
      /rsPort\+0 and masterPort\+1 are both 16001/
    )
    expect(() => resolveOptions({ stateDir: STATE }, { BEACON_HBASE_REGIONSERVERS: '9', BEACON_HBASE_RS_INFO_PORT: '16025' })).toThrow(
      /are both 16025/
    )
  })

  test('distributed mode with a short ZooKeeper session, every server awaited, ZooKeeper without its admin server', () => {
    const props = siteProperties(opts)
    expect(props).toMatchObject({
      'hbase.cluster.distributed': true,
      'zookeeper.session.timeout': 10000,
      'hbase.master.wait.on.regionservers.mintostart': 3,
      'hbase.master.wait.on.regionservers.maxtostart': 3,
      'hbase.unsafe.stream.capability.enforce': false
    })
    const cfg = zooCfg(opts)
    expect(cfg).toMatch(/^tickTime=1000$/m)
    expect(cfg).toMatch(/^maxSessionTimeout=20000$/m)
    expect(cfg).toMatch(/^clientPort=2181$/m)
    expect(cfg).toMatch(/^admin.enableServer=false$/m)
  })

  test('the session timeout must fit ZooKeeper\'s 2..20 ticks', () => {
    expect(() => resolveOptions({ stateDir: STATE }, { ...env, BEACON_HBASE_ZK_SESSION_TIMEOUT_MS: '90000' })).toThrow(
      /out of range 2000..20000/
    )
  })
})

test('the config table is cut by the id\'s first digit, one region per RegionServer', () => {
  expect(configSplitKeys(1)).toEqual([])
  expect(configSplitKeys(3)).toEqual(['4', '7'])
  expect(() => configSplitKeys(10)).toThrow(RangeError)
})

describe('JVM profile (BEACON_HBASE_JVM)', () => {
  const { javaFlags, serverJavaFlags, shortLivedJavaFlags } = require('../jvm')

  test('server by default: the JDK\'s own JIT and collector; light: C1 only and the serial collector', () => {
    expect(resolveOptions({ stateDir: STATE }, {}).jvm).toBe('server')
    expect(serverJavaFlags('server')).toEqual(javaFlags())
    const light = resolveOptions({ stateDir: STATE }, { BEACON_HBASE_JVM: 'light' })
    expect(serverJavaFlags(light.jvm)).toEqual([...javaFlags(), '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'])
    expect(shortLivedJavaFlags()).toEqual(serverJavaFlags('light'))
  })

  test('anything else is refused, naming the variable and what it takes', () => {
    expect(() => resolveOptions({ stateDir: STATE }, { BEACON_HBASE_JVM: 'fast' })).toThrow(/BEACON_HBASE_JVM="fast".*server or light/)
  })
})
