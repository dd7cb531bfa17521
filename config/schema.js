'use strict'

/**
 * JSON Schema (draft-07, for ajv) of the settings after defaults are filled in and shorthands
 * normalized (config/load.js). Every object is closed with `additionalProperties: false`, so a
 * misspelt key is an error rather than a silently ignored setting. Rules that span several keys
 * (a fixed endpoint needs a value, sink names must exist) are checked in load.js, where the
 * error can say exactly what is wrong.
 */

const { safeNamePattern } = require('../lib/names')
const { DURATION_PATTERN, DURATION_HELP } = require('./duration')
const { SIZE_PATTERN } = require('./size')
const { DURABILITIES } = require('./defaults')

const NAME_PATTERN = safeNamePattern(64) // endpoint and sink names
const TABLE_PATTERN = '^([A-Za-z0-9_-]+:)?[A-Za-z0-9_][A-Za-z0-9_.-]*$'

/** @param {number} minimum @param {number} [maximum] */
const int = (minimum, maximum) => (
  maximum === undefined ? { type: 'integer', minimum } : { type: 'integer', minimum, maximum }
)
const str = (extra = {}) => ({ type: 'string', minLength: 1, ...extra })
const port = int(0, 65535)
/** @param {Record<string, object>} properties @param {string[]} [required] */
const closed = (properties, required = Object.keys(properties)) => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties
})

const tableName = str({
  pattern: TABLE_PATTERN,
  description: 'an HBase table name like beacon_config or ns:beacon_config'
})
const duration = str({ pattern: DURATION_PATTERN, description: DURATION_HELP })
// A bearer secret: long enough that guessing it is hopeless (`npm start` makes 256-bit ones).
const MIN_TOKEN_CHARS = 32
const token = {
  type: ['string', 'null'],
  minLength: MIN_TOKEN_CHARS,
  description: `at least ${MIN_TOKEN_CHARS} characters (openssl rand -base64 32 makes one)`
}
const hostName = str({ pattern: '^[A-Za-z0-9_.:-]+$', description: 'a host name or IP address' })

// What a sink stores of the client (logging/privacy.js); load.js fills in the defaults.
const privacy = closed({
  ip: { enum: ['full', 'truncate', 'hash', 'none'] },
  userAgent: { enum: ['full', 'none'] },
  honorOptOut: { type: 'boolean', description: 'true or false' }
})

const fileSink = closed({
  type: { const: 'file' },
  path: str(),
  rotateSize: str({ pattern: '^[1-9][0-9]*[kmg]?$', description: 'a size like 100m (k, m or g)' }),
  rotateFrequency: {
    oneOf: [{ enum: ['hourly', 'daily'] }, int(1000)],
    description: '"hourly", "daily" or an interval in ms (>= 1000)'
  },
  keepFiles: int(1, 10000),
  maxPendingLines: int(1),
  durability: { enum: [...DURABILITIES] },
  privacy
})

const hbaseSinkKeys = {
  type: { const: 'hbase' },
  table: tableName,
  rollups: { type: 'boolean', description: 'true or false' },
  rollupTable: tableName,
  retention: duration,
  rollupRetention: duration,
  buckets: int(1, 256),
  batchSize: int(1, 100000),
  flushIntervalMs: int(1),
  maxQueue: int(1),
  journalMaxBuffered: int(1),
  journalMaxSize: str({ pattern: SIZE_PATTERN, description: 'a size like 2g (k, m or g), or 0 for none' }),
  journalDir: str(),
  overload: { enum: ['spill', 'shed'] },
  durability: { enum: [...DURABILITIES] },
  // the older spelling of durability (true: process, false: memory); load.js turns it into that
  durable: { type: 'boolean', description: 'true or false' },
  retryMaxMs: int(0),
  privacy
}
const hbaseSink = closed(hbaseSinkKeys, Object.keys(hbaseSinkKeys).filter((key) => key !== 'durable'))

const cache = {
  description: '"off", "lru" or an object with a type',
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: [
    closed({ type: { const: 'off' } }),
    closed({
      type: { const: 'lru' },
      max: int(1),
      ttlMs: int(0),
      staleWhileRevalidateMs: int(0),
      maxStaleMs: int(0),
      negativeTtlMs: int(0),
      maxNegative: int(1)
    })
  ]
}

// An origin exactly as a browser sends it in `Origin` (scheme://host[:port], lower case, no
// path or trailing slash), or "*" (any page; load.js checks that it stands alone).
const ORIGIN_PATTERN = '^(\\*|https?://([a-z0-9-]+(\\.[a-z0-9-]+)*|\\[[0-9a-f:.]+\\])(:[0-9]{1,5})?)$'
/** @param {number} maxItems */
const nameList = (maxItems) => ({
  type: 'array',
  minItems: 1,
  maxItems,
  uniqueItems: true,
  items: str({ pattern: NAME_PATTERN })
})

// fetch() from other origins: exact origins, never credentials.
const cors = closed({
  origins: {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    uniqueItems: true,
    items: str({
      pattern: ORIGIN_PATTERN,
      description: 'an origin like https://shop.example (scheme://host[:port], lower case, no path), or "*"'
    })
  },
  maxAgeSeconds: int(0, 86400)
})

// Exposure and other events the pages of this endpoint send (api/public/events.js).
const events = closed({
  names: nameList(100),
  sinks: nameList(16),
  maxEvents: int(1, 1000),
  maxBodyBytes: int(64, 65536),
  gif: { type: 'boolean' }
})

// OpenFeature evaluation (api/public/ofrep/); load.js turns `true` into `{}` and drops `false`, then
// fills the defaults, so what is checked here is always the object. The keys themselves are
// never in the settings: `apiKeysEnv` names the environment variable that holds them.
const ofrep = {
  ...closed({
    apiKeysEnv: str({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the name of an environment variable' }),
    maxBodyBytes: int(64, 65536),
    maxKeyLength: int(1, 1024),
    maxDepth: int(1, 32),
    maxFlags: int(1, 100000),
    maxStreams: int(0, 1000000),
    maxStreamsPerClient: int(0, 1000000),
    heartbeatMs: int(100, 600000),
    maxStreamAgeSec: int(0, 604800),
    inactivityDelaySec: int(1, 86400)
  }, ['maxBodyBytes', 'maxKeyLength', 'maxDepth', 'maxFlags', 'maxStreams', 'maxStreamsPerClient', 'heartbeatMs',
    'maxStreamAgeSec', 'inactivityDelaySec']),
  description: 'true, false or an object like { "apiKeysEnv": "BEACON_OFREP_KEYS" }'
}

const endpoint = closed({
  source: { enum: ['fixed', 'hbase'] },
  value: { type: 'object' },
  valueFile: str(),
  defaultConfig: { type: 'object' },
  // A percentage rollout for ids without a row (lib/toggles/rollout.js checks it in full at start).
  rollout: { type: 'object', description: 'an object like { "salt": "…", "variants": [{ "name", "weight", "config" }] }' },
  cache,
  accessLog: { type: 'array', items: str({ pattern: NAME_PATTERN }), uniqueItems: true },
  // Printable ASCII only: it becomes a response header, so no CR/LF can sneak in.
  cacheControl: str({ pattern: '^[\\x20-\\x7E]+$', description: 'printable ASCII' }),
  enabled: { type: 'boolean' },
  // Optional allowlist of callback names: exact paths, or prefixes ending in * (jQuery*).
  callbacks: {
    type: 'array',
    maxItems: 100,
    items: str({
      pattern: '^[A-Za-z_$][A-Za-z0-9_$.]{0,127}\\*?$',
      description: 'a callback name or a prefix ending in *'
    })
  },
  cors,
  events,
  ofrep,
  rateLimit: closed({ perSecond: int(0, 1000000), burst: int(0, 10000000) }, []),
  logPolicy: closed({ clientErrors: { enum: ['log', 'count'] }, unknownIds: { enum: ['log', 'count'] } }, [])
}, ['source', 'defaultConfig', 'cache', 'accessLog', 'cacheControl', 'enabled'])

/** The settings schema. */
const schema = closed({
  port,
  adminPort: port,
  host: hostName,
  adminHost: hostName,
  workers: int(0, 1024),
  workerSemiSpaceMiB: int(0, 1024),
  acceptConnections: { enum: ['primary', 'workers'] },
  stateDir: str(),
  shutdownTimeoutMs: int(0),
  rollupJob: closed({ maxOldSpaceMiB: int(16, 65536), maxGroups: int(1000, 10000000), maxAttempts: int(1, 1000) }),
  rateLimit: closed({
    perSecond: int(0, 1000000),
    burst: int(0, 10000000),
    maxClients: int(100, 10000000),
    trustedProxies: {
      type: 'array',
      items: str({
        pattern: '^([0-9A-Fa-f:.]{2,45}(/[0-9]{1,3})?|loopback|private)$',
        description: 'an IPv4 or IPv6 address, a CIDR block, loopback or private'
      }),
      uniqueItems: true
    }
  }),
  logLevel: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
  adminToken: token,
  metricsToken: token,
  admin: closed({
    allowedHosts: {
      type: 'array',
      items: str({
        pattern: '^([A-Za-z0-9_.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$',
        description: 'a host name or address, optionally with :port'
      }),
      uniqueItems: true
    }
  }),
  adminTokens: { type: ['string', 'null'], minLength: 1 },
  history: closed({ maxVersions: int(1, 100000), retention: duration }),
  http: closed({
    keepAliveTimeoutMs: int(0),
    headersTimeoutMs: int(0),
    requestTimeoutMs: int(0),
    maxHeaderSize: int(1024),
    maxUrlLength: int(64),
    maxConnections: int(0),
    maxConnectionsPerClient: int(0),
    maxRequestsPerSocket: int(0)
  }),
  limits: closed({
    maxIdLength: int(1, 1024),
    maxCallbackLength: int(1, 1024)
  }),
  hbase: closed({
    bootstrap: {
      type: 'array',
      items: str({ pattern: '^[^\\s:,]+:[0-9]{1,5}$', description: 'a "host:port" address' }),
      uniqueItems: true
    },
    rpcTimeoutMs: int(1),
    operationTimeoutMs: int(1),
    configTable: tableName,
    auditTable: tableName,
    historyTable: tableName,
    configFamily: str({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]*$', description: 'an HBase column family name' }),
    configQualifier: str(),
    controlPollMs: int(0),
    configReadsInFlight: int(1, 64),
    configReadLingerMs: int(0, 100),
    knownIdScanMs: int(0)
  }),
  logSinks: {
    type: 'object',
    propertyNames: { pattern: NAME_PATTERN },
    additionalProperties: {
      type: 'object',
      required: ['type'],
      discriminator: { propertyName: 'type' },
      oneOf: [fileSink, hbaseSink]
    }
  },
  endpoints: {
    type: 'object',
    propertyNames: { pattern: NAME_PATTERN },
    additionalProperties: endpoint
  }
})

module.exports = { schema, NAME_PATTERN, MIN_TOKEN_CHARS }
