'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { loadSettings, describeEndpoints, DEFAULTS } = require('../../config')
const { OFREP_DEFAULTS } = require('../../config/defaults')
const { loadError } = require('../support/settings')

const CONFIG_DIR = path.join(__dirname, '..', '..', 'config')
const SAMPLE1 = JSON.parse(fs.readFileSync(path.join(CONFIG_DIR, 'fixed', 'sample1.json'), 'utf8'))
const LRU = {
  type: 'lru', max: 100000, ttlMs: 30000, staleWhileRevalidateMs: 300000, maxStaleMs: 3600000, negativeTtlMs: 5000, maxNegative: 10000
}
const LOG_POLICY = { clientErrors: 'log', unknownIds: 'log' }
const OFF = { type: 'off' }

let tmp
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-config-')) })
afterAll(() => { fs.rmSync(tmp, { recursive: true, force: true }) })

let fileCount = 0
function writeJson (value) {
  const file = path.join(tmp, `settings-${++fileCount}.json`)
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value))
  return file
}

function expectDeepFrozen (value, where = 'settings') {
  if (value === null || typeof value !== 'object') return
  if (!Object.isFrozen(value)) throw new Error(`${where} is not frozen`)
  for (const [key, child] of Object.entries(value)) expectDeepFrozen(child, `${where}.${key}`)
}

describe('defaults', () => {
  const settings = loadSettings({ env: {} })

  test('server, http, limits and hbase defaults', () => {
    expect(settings).toMatchObject({
      port: 4000,
      adminPort: 4001,
      host: '0.0.0.0',
      adminHost: '127.0.0.1',
      workers: 0,
      stateDir: path.resolve(__dirname, '..', '..', '.state'),
      shutdownTimeoutMs: 10000,
      logLevel: 'info',
      adminToken: null,
      http: {
        keepAliveTimeoutMs: 5000,
        headersTimeoutMs: 10000,
        requestTimeoutMs: 10000,
        maxHeaderSize: 8192,
        maxUrlLength: 2048,
        maxConnections: 0
      },
      limits: { maxIdLength: 64, maxCallbackLength: 128 },
      hbase: {
        bootstrap: [],
        rpcTimeoutMs: 1000,
        operationTimeoutMs: 3000,
        configTable: 'beacon_config',
        configFamily: 'c',
        configQualifier: 'json'
      }
    })
  })

  test('the two access-log sinks, with paths resolved against stateDir', () => {
    expect(settings.logSinks).toEqual({
      file: {
        type: 'file',
        path: path.join(settings.stateDir, 'logs', 'access.log'),
        rotateSize: '100m',
        rotateFrequency: 'daily',
        keepFiles: 14,
        maxPendingLines: 50000,
        durability: 'process',
        privacy: { ip: 'full', userAgent: 'full', honorOptOut: false }
      },
      hbase: {
        type: 'hbase',
        table: 'beacon_access_log',
        buckets: 16,
        batchSize: 500,
        flushIntervalMs: 100,
        maxQueue: 50000,
        journalMaxBuffered: 50000,
        journalMaxSize: '2g',
        journalDir: path.join(settings.stateDir, 'journal'),
        overload: 'spill',
        durability: 'process',
        retryMaxMs: 30000,
        rollups: true,
        rollupTable: 'beacon_access_rollup',
        retention: '90d',
        rollupRetention: '400d',
        privacy: { ip: 'full', userAgent: 'full', honorOptOut: false }
      }
    })
  })

  test('exactly the five seed endpoints', () => {
    const hbase = (cache, accessLog, cacheControl) => ({
      source: 'hbase',
      defaultConfig: { features: {} },
      cache,
      accessLog,
      cacheControl,
      enabled: true,
      logPolicy: LOG_POLICY
    })
    expect(settings.endpoints).toEqual({
      sample1: {
        source: 'fixed',
        valueFile: path.join(CONFIG_DIR, 'fixed', 'sample1.json'),
        value: SAMPLE1,
        defaultConfig: {},
        cache: OFF,
        accessLog: [],
        cacheControl: 'public, max-age=60',
        enabled: true,
        logPolicy: LOG_POLICY
      },
      sample2: hbase(OFF, [], 'public, max-age=30'),
      // OpenFeature on two samples, so that `npm start` shows it (test/config/ofrep-settings.unit.test.js)
      sample3: { ...hbase(LRU, [], 'public, max-age=30'), ofrep: OFREP_DEFAULTS },
      sample4: hbase(LRU, ['file'], 'no-cache'),
      sample5: { ...hbase(LRU, ['hbase'], 'no-cache'), ofrep: OFREP_DEFAULTS }
    })
  })

  test('sample1.json is a realistic toggles object', () => {
    expect(SAMPLE1).toMatchObject({ variant: expect.any(String), features: expect.any(Object) })
  })

  test('the result is deeply frozen', () => {
    expectDeepFrozen(settings)
    expect(() => { settings.endpoints.sample3.cache.ttlMs = 1 }).toThrow(TypeError)
  })

  test('describeEndpoints gives one row per endpoint', () => {
    expect(describeEndpoints(settings)).toEqual([
      { name: 'sample1', path: '/api/sample1.js', source: 'fixed', cache: 'off', accessLog: [], enabled: true },
      { name: 'sample2', path: '/api/sample2.js', source: 'hbase', cache: 'off', accessLog: [], enabled: true },
      { name: 'sample3', path: '/api/sample3.js', source: 'hbase', cache: 'lru', accessLog: [], enabled: true },
      { name: 'sample4', path: '/api/sample4.js', source: 'hbase', cache: 'lru', accessLog: ['file'], enabled: true },
      { name: 'sample5', path: '/api/sample5.js', source: 'hbase', cache: 'lru', accessLog: ['hbase'], enabled: true }
    ])
  })

  test('loading never changes the defaults module', () => {
    const before = JSON.stringify(DEFAULTS)
    loadSettings({ env: {}, overrides: { port: 1, endpoints: { sample3: { cache: { ttlMs: 1 } }, sample2: null } } })
    expect(JSON.stringify(DEFAULTS)).toBe(before)
    expectDeepFrozen(DEFAULTS, 'DEFAULTS')
  })
})

describe('settings file', () => {
  const sample6 = { source: 'hbase', cache: 'lru', accessLog: ['file', 'hbase'], defaultConfig: { features: { x: false } } }

  test('adds an endpoint (from `file` or BEACON_CONFIG_FILE), filling its defaults', () => {
    const file = writeJson({ endpoints: { sample6 } })
    for (const settings of [loadSettings({ env: {}, file }), loadSettings({ env: { BEACON_CONFIG_FILE: file } })]) {
      expect(settings.endpoints.sample6).toEqual({
        source: 'hbase',
        defaultConfig: { features: { x: false } },
        cache: LRU,
        accessLog: ['file', 'hbase'],
        cacheControl: 'no-cache',
        enabled: true,
        logPolicy: LOG_POLICY
      })
      expect(Object.keys(settings.endpoints)).toEqual(['sample1', 'sample2', 'sample3', 'sample4', 'sample5', 'sample6'])
      expectDeepFrozen(settings)
    }
  })

  test('objects merge, arrays and scalars replace, null removes an endpoint or sink', () => {
    const file = writeJson({
      port: 5000,
      http: { maxUrlLength: 4096 },
      hbase: { bootstrap: ['h1:16020', 'h2:16020'] },
      endpoints: { sample2: null, sample3: { cache: { ttlMs: 1000 }, enabled: false }, sample4: { accessLog: 'none' } },
      logSinks: { hbase: null }
    })
    const settings = loadSettings({ env: {}, file, overrides: { endpoints: { sample5: null } } })
    expect(settings.port).toBe(5000)
    expect(settings.http).toMatchObject({ maxUrlLength: 4096, maxHeaderSize: 8192 })
    expect(settings.hbase.bootstrap).toEqual(['h1:16020', 'h2:16020'])
    expect(Object.keys(settings.endpoints)).toEqual(['sample1', 'sample3', 'sample4'])
    expect(settings.endpoints.sample3).toMatchObject({ cache: { ...LRU, ttlMs: 1000 }, enabled: false, cacheControl: 'public, max-age=30' })
    expect(settings.endpoints.sample4.accessLog).toEqual([])
    expect(Object.keys(settings.logSinks)).toEqual(['file'])
  })

  test('cache shorthands normalize to the object form; changing a kind replaces the object', () => {
    const settings = loadSettings({
      env: {},
      overrides: { endpoints: { sample1: { cache: 'lru' }, sample3: { cache: 'off' }, sample2: { source: 'fixed', value: { a: 1 } } } }
    })
    expect(settings.endpoints.sample1.cache).toEqual(LRU)
    expect(settings.endpoints.sample3.cache).toEqual(OFF)
    // a new source redeclares the endpoint: sample2's hbase-only settings do not carry over
    expect(settings.endpoints.sample2).toEqual({
      source: 'fixed',
      value: { a: 1 },
      defaultConfig: {},
      cache: OFF,
      accessLog: [],
      cacheControl: 'no-cache',
      enabled: true,
      logPolicy: LOG_POLICY
    })
  })

  test('value replaces valueFile (and the reverse); value is data, replaced whole', () => {
    const elsewhere = writeJson({ from: 'file' })
    const settings = loadSettings({
      env: {},
      overrides: { endpoints: { sample1: { value: { only: true } }, sampleF: { source: 'fixed', valueFile: elsewhere } } }
    })
    expect(settings.endpoints.sample1.value).toEqual({ only: true })
    expect(settings.endpoints.sample1.valueFile).toBeUndefined()
    expect(settings.endpoints.sampleF.value).toEqual({ from: 'file' })
    expect(settings.endpoints.sampleF.valueFile).toBe(elsewhere)
  })

  test('relative sink paths resolve against stateDir; absolute ones are kept; new hbase sinks get their own journal', () => {
    const stateDir = path.join(tmp, 'state')
    const settings = loadSettings({
      env: { BEACON_STATE_DIR: stateDir },
      overrides: {
        logSinks: {
          file: { path: 'elsewhere/a.log' },
          audit: { type: 'file', path: path.join(tmp, 'abs', 'audit.log') },
          archive: { type: 'hbase', table: 'ns:archive' }
        }
      }
    })
    expect(settings.stateDir).toBe(stateDir)
    expect(settings.logSinks.file.path).toBe(path.join(stateDir, 'elsewhere', 'a.log'))
    expect(settings.logSinks.audit).toEqual({
      type: 'file',
      path: path.join(tmp, 'abs', 'audit.log'),
      rotateSize: '100m',
      rotateFrequency: 'daily',
      keepFiles: 14,
      maxPendingLines: 50000,
      durability: 'process',
      privacy: { ip: 'full', userAgent: 'full', honorOptOut: false }
    })
    expect(settings.logSinks.hbase.journalDir).toBe(path.join(stateDir, 'journal'))
    expect(settings.logSinks.archive.journalDir).toBe(path.join(stateDir, 'journal', 'archive'))
  })

  test('a relative stateDir resolves to an absolute path', () => {
    expect(loadSettings({ env: { BEACON_STATE_DIR: 'some/state' } }).stateDir).toBe(path.resolve('some/state'))
  })
})

describe('environment', () => {
  test('env vars override defaults and the file; overrides beat env', () => {
    const file = writeJson({ port: 5000, adminPort: 5001, workers: 2 })
    const settings = loadSettings({
      file,
      env: {
        PORT: '8080',
        ADMIN_PORT: '8081',
        HOST: '127.0.0.1',
        ADMIN_HOST: '::1',
        BEACON_WORKERS: '3',
        BEACON_ACCEPT_CONNECTIONS: 'workers',
        BEACON_HBASE_BOOTSTRAP: 'rs1:16020, rs2:16020,',
        BEACON_LOG_LEVEL: 'debug',
        BEACON_ADMIN_TOKEN: 's3cret-token-0123456789abcdefghij',
        BEACON_CONFIG_TABLE: 'ns:config',
        BEACON_ACCESS_LOG_TABLE: 'alog_test'
      },
      overrides: { workers: 4 }
    })
    expect(settings).toMatchObject({
      port: 8080,
      adminPort: 8081,
      host: '127.0.0.1',
      adminHost: '::1',
      workers: 4,
      acceptConnections: 'workers',
      logLevel: 'debug',
      adminToken: 's3cret-token-0123456789abcdefghij',
      hbase: { bootstrap: ['rs1:16020', 'rs2:16020'], configTable: 'ns:config' },
      logSinks: { hbase: { table: 'alog_test' } }
    })
  })

  test('empty env vars count as unset', () => {
    const settings = loadSettings({ env: { PORT: '', BEACON_HBASE_BOOTSTRAP: '', BEACON_CONFIG_FILE: '' } })
    expect(settings.port).toBe(4000)
    expect(settings.acceptConnections).toBe('primary')
    expect(settings.hbase.bootstrap).toEqual([])
  })

  test('BEACON_ACCESS_LOG_DURABILITY sets the hbase sink\'s durability; BEACON_ACCESS_LOG_DURABLE, the older flag, too', () => {
    for (const mode of ['memory', 'process', 'host']) {
      expect(loadSettings({ env: { BEACON_ACCESS_LOG_DURABILITY: mode } }).logSinks.hbase.durability).toBe(mode)
    }
    for (const [raw, mode] of [['1', 'process'], ['true', 'process'], ['YES', 'process'], ['0', 'memory'], ['false', 'memory'],
      ['no', 'memory']]) {
      const sink = loadSettings({ env: { BEACON_ACCESS_LOG_DURABLE: raw } }).logSinks.hbase
      expect(sink.durability).toBe(mode)
      expect(sink).not.toHaveProperty('durable')
    }
    // The flag in a settings layer too; a higher layer's flag wins over a lower layer's durability.
    const layered = loadSettings({
      env: { BEACON_ACCESS_LOG_DURABILITY: 'host' },
      overrides: { logSinks: { hbase: { durable: false } } }
    })
    expect(layered.logSinks.hbase.durability).toBe('memory')
  })

  test('BEACON_ACCESS_LOG_TABLE is skipped when the hbase sink was removed', () => {
    const settings = loadSettings({
      env: { BEACON_ACCESS_LOG_TABLE: 'x' },
      overrides: { logSinks: { hbase: null }, endpoints: { sample5: null } }
    })
    expect(settings.logSinks.hbase).toBeUndefined()
  })
})

describe('invalid settings throw CONFIG_INVALID naming the key and its source', () => {
  const cases = [
    ['unknown top-level key', { file: { prot: 4000 } }, /prot is not a known key \(in .*settings-\d+\.json\)/],
    [
      'unknown key in an endpoint',
      { overrides: { endpoints: { sample3: { ttl: 5 } } } },
      /endpoints\.sample3\.ttl is not a known key \(in overrides\)/
    ],
    [
      'unknown key in a cache',
      { overrides: { endpoints: { sample3: { cache: { ttl: 5 } } } } },
      /endpoints\.sample3\.cache\.ttl is not a known key/
    ],
    [
      'unknown key in a sink (file sink with table)',
      { overrides: { logSinks: { file: { table: 'x' } } } },
      /logSinks\.file\.table is not a known key/
    ],
    ['a boolean env var spelled otherwise', { env: { BEACON_ACCESS_ROLLUPS: 'off' } },
      /logSinks\.hbase\.rollups must be 1, 0, true, false, yes or no \(from env BEACON_ACCESS_ROLLUPS\)/],
    ['unknown sink type', { overrides: { logSinks: { k: { type: 'kafka' } } } }, /logSinks\.k\.type must be one of: "file", "hbase"/],
    ['sink without type', { overrides: { logSinks: { k: { path: 'x' } } } }, /logSinks\.k\.type is required/],
    [
      'negative ttl',
      { file: { endpoints: { sample6: { source: 'hbase', cache: { type: 'lru', ttlMs: -1 } } } } },
      /endpoints\.sample6\.cache\.ttlMs must be >= 0 \(in .*\.json\)/
    ],
    [
      'unknown cache type',
      { overrides: { endpoints: { sample3: { cache: 'redis' } } } },
      /endpoints\.sample3\.cache must be "off", "lru" or an object/
    ],
    [
      'unknown sink name',
      { overrides: { endpoints: { sample6: { source: 'hbase', accessLog: ['file', 'kafka'] } } } },
      /endpoints\.sample6\.accessLog names unknown sink "kafka" \(declared sinks: file, hbase\)/
    ],
    [
      'fixed without value',
      { overrides: { endpoints: { sample7: { source: 'fixed' } } } },
      /endpoints\.sample7\.value is required for a fixed endpoint/
    ],
    [
      'value on an hbase endpoint',
      { overrides: { endpoints: { sample2: { value: {} } } } },
      /endpoints\.sample2\.value applies only to fixed endpoints/
    ],
    [
      'value and valueFile together',
      { overrides: { endpoints: { s: { source: 'fixed', value: {}, valueFile: 'fixed/sample1.json' } } } },
      /endpoints\.s: set value or valueFile, not both/
    ],
    [
      'missing valueFile',
      { overrides: { endpoints: { sample1: { valueFile: 'fixed/nope.json' } } } },
      /cannot read endpoints\.sample1\.valueFile .*nope\.json: ENOENT/
    ],
    [
      'adminToken in the file',
      { file: { adminToken: 'abc' } },
      /adminToken must not be set in the settings file .*: secrets come from the environment \(BEACON_ADMIN_TOKEN\)/
    ],
    [
      'a 31-character admin token',
      { env: { BEACON_ADMIN_TOKEN: 'x'.repeat(31) } },
      /^invalid settings: adminToken must NOT have fewer than 32 characters \(from env BEACON_ADMIN_TOKEN\)$/
    ],
    [
      'a short metrics token',
      { env: { BEACON_METRICS_TOKEN: 'metrics' } },
      /metricsToken must NOT have fewer than 32 characters \(from env BEACON_METRICS_TOKEN\)/
    ],
    ['metricsToken in the file', { file: { metricsToken: 'm'.repeat(40) } }, /metricsToken must not be set in the settings file/],
    ['bad PORT env', { env: { PORT: 'eighty' } }, /^invalid settings: port must be integer \(from env PORT\)$/],
    ['PORT out of range', { env: { PORT: '70000' } }, /port must be <= 65535 \(from env PORT\)/],
    ['negative BEACON_WORKERS', { env: { BEACON_WORKERS: '-1' } }, /workers must be >= 0 \(from env BEACON_WORKERS\)/],
    [
      'unknown BEACON_ACCEPT_CONNECTIONS',
      { env: { BEACON_ACCEPT_CONNECTIONS: 'kernel' } },
      /acceptConnections must be .*(primary|workers).* \(from env BEACON_ACCEPT_CONNECTIONS\)/
    ],
    [
      'bad bootstrap address',
      { env: { BEACON_HBASE_BOOTSTRAP: 'localhost' } },
      /hbase\.bootstrap\[0\] must be a "host:port" address \(from env BEACON_HBASE_BOOTSTRAP\)/
    ],
    [
      'bad durability',
      { env: { BEACON_ACCESS_LOG_DURABILITY: 'disk' } },
      /logSinks\.hbase\.durability must be one of: "memory", "process", "host" \(from env BEACON_ACCESS_LOG_DURABILITY\)/
    ],
    [
      'bad durable flag',
      { env: { BEACON_ACCESS_LOG_DURABLE: 'maybe' } },
      /logSinks\.hbase\.durable must be 1, 0, true, false, yes or no \(from env BEACON_ACCESS_LOG_DURABLE\)/
    ],
    [
      'bad log level',
      { env: { BEACON_LOG_LEVEL: 'verbose' } },
      /logLevel must be one of: "fatal", .*"silent" \(from env BEACON_LOG_LEVEL\)/
    ],
    ['bad endpoint name', { overrides: { endpoints: { 'sam ple': { source: 'hbase' } } } }, /endpoints\.sam ple is not a valid name/],
    [
      'header injection in cacheControl',
      { overrides: { endpoints: { sample2: { cacheControl: 'no-cache\r\nSet-Cookie: a=b' } } } },
      /endpoints\.sample2\.cacheControl must be printable ASCII/
    ],
    [
      'bad rotateFrequency',
      { overrides: { logSinks: { file: { rotateFrequency: 'weekly' } } } },
      /logSinks\.file\.rotateFrequency must be "hourly", "daily" or an interval in ms/
    ],
    [
      'headers timeout above request timeout',
      { overrides: { http: { headersTimeoutMs: 20000 } } },
      /http\.headersTimeoutMs must be <= http\.requestTimeoutMs/
    ],
    ['port equals adminPort', { env: { PORT: '5000', ADMIN_PORT: '5000' } }, /adminPort must differ from port/],
    [
      'two sinks on one file',
      { overrides: { logSinks: { other: { type: 'file', path: 'logs/access.log' } } } },
      /logSinks\.other\.path is also used by logSinks\.file/
    ],
    ['__proto__ key', { file: '{"__proto__": {"polluted": true}}' }, /__proto__ is not an allowed key/],
    ['settings file that is not JSON', { file: '{ port: 1 }' }, /settings file .* is not valid JSON/],
    ['settings file that is not an object', { file: '[1]' }, /settings file .* must hold a JSON object/],
    ['overrides that are not an object', { overrides: 5 }, /overrides must be an object/]
  ]

  test.each(cases)('%s', (name, { file, ...options }, message) => {
    const err = loadError({ ...options, ...(file !== undefined ? { file: writeJson(file) } : {}) })
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('CONFIG_INVALID')
    expect(err.message).toMatch(message)
    expect(Array.isArray(err.issues)).toBe(true)
  })

  test('a missing settings file names the path', () => {
    const file = path.join(tmp, 'missing.json')
    expect(loadError({ file }).message).toBe(`invalid settings: cannot read settings file ${file}: ENOENT`)
  })

  test('every problem is reported at once, each with its own source', () => {
    const file = writeJson({ port: -1, endpoints: { sample3: { cache: { ttlMs: -5 } } } })
    const err = loadError({ file, env: { BEACON_WORKERS: 'many' }, overrides: { limits: { maxIdLength: 0 } } })
    expect(err.issues).toEqual([
      `port must be >= 0 (in ${file})`,
      'workers must be integer (from env BEACON_WORKERS)',
      'limits.maxIdLength must be >= 1 (in overrides)',
      `endpoints.sample3.cache.ttlMs must be >= 0 (in ${file})`
    ])
  })

  test('a rejected __proto__ key pollutes nothing', () => {
    loadError({ file: writeJson('{"endpoints": {"__proto__": {"polluted": true}}}') })
    expect({}.polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
  })
})
