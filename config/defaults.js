'use strict'

const path = require('node:path')

/**
 * Every default setting, in one place. config/load.js layers the JSON file, the environment and
 * programmatic overrides on top of these, validates the result and freezes it.
 *
 * Relative paths: `stateDir` is resolved against the working directory, sink paths against
 * `stateDir`, and an endpoint's `valueFile` against this config/ folder.
 */

const CONFIG_DIR = __dirname
const REPO_ROOT = path.resolve(__dirname, '..')

/** Filled into every declared endpoint before validation. */
const ENDPOINT_DEFAULTS = {
  defaultConfig: {},
  cache: { type: 'off' },
  accessLog: [],
  cacheControl: 'no-cache',
  enabled: true,
  // What its access log gets of a 4xx answer and of a view of an id with no config: `log`, an
  // entry like any other; `count`, only a count in the metrics (docs/access-log.md, "What an
  // endpoint logs"), so a flood of bad or random ids costs no disk.
  logPolicy: { clientErrors: 'log', unknownIds: 'log' }
}

/** Filled into a `{ type: 'lru' }` cache (and the `cache: 'lru'` shorthand). */
const LRU_CACHE_DEFAULTS = {
  max: 100000,
  ttlMs: 30000,
  staleWhileRevalidateMs: 300000,
  maxStaleMs: 3600000,
  negativeTtlMs: 5000,
  // Ids with no config are cached apart, at most this many, so a flood of random ids cannot
  // evict the known ones (lib/toggles/cache.js).
  maxNegative: 10000
}

/**
 * Filled into an endpoint's `cors` (fetch() from the listed page origins): how long a browser
 * may cache a preflight's answer. Chromium caps it at 2 h, Firefox at 24 h.
 */
const CORS_DEFAULTS = { maxAgeSeconds: 600 }

/**
 * Filled into an endpoint's `events` (POST /api/<name>/events, GET /api/<name>/events.gif): a
 * batch holds at most `maxEvents` events in at most `maxBodyBytes` bytes (a few events of ~60
 * bytes each are what a page sends on pagehide); `gif` serves the 1x1 GIF form.
 */
const EVENT_DEFAULTS = { maxEvents: 20, maxBodyBytes: 8192, gif: true }

/**
 * Filled into an endpoint's `ofrep` (OpenFeature evaluation, docs/openfeature.md; `true` is
 * the object with these). A body is `{"context":{...}}`, a few hundred bytes from the JS
 * providers: 8 KiB, the events' cap, leaves room and keeps big bodies cheap to refuse. 256
 * characters is far past any real flag key and bounds what an error body echoes in `key`. A
 * config yields at most 1,000 flags, keys of at most 8 dotted segments, so a huge config costs
 * bounded work per request. No API key unless `apiKeysEnv` names the variable that holds them.
 *
 * The change stream (GET /api/<name>/changes): at most `maxStreams` open at once per worker (0:
 * no stream), what one worker was measured to hold at a small cost (docs/openfeature.md); heartbeats well
 * inside the idle timeouts of common proxies and load balancers; and OFREP's own default for
 * how long a hidden page keeps its stream open (`inactivityDelaySec`).
 */
const OFREP_DEFAULTS = {
  maxBodyBytes: 8192,
  maxKeyLength: 256,
  maxDepth: 8,
  maxFlags: 1000,
  maxStreams: 10000,
  // One client's share of them (an address, api/public/rate-limit.js): past it, 429. A tenth, so that one
  // address holding idle streams leaves nine tenths to everyone else, while a NAT's office still fits.
  maxStreamsPerClient: 1000,
  heartbeatMs: 15000,
  // Past this age a stream is ended with a reconnect hint, so a fleet rebalances after a host
  // joins or restarts (LaunchDarkly Relay's maxClientConnectionTime). 0: no maximum.
  maxStreamAgeSec: 3600,
  inactivityDelaySec: 120
}

/**
 * Filled into every access-log sink by its `type`. A file sink must name its `path` and an
 * hbase sink its `table`; an hbase sink without `journalDir` gets `journal/<sink name>`, so
 * two sinks never share a journal.
 */
const SINK_DEFAULTS = {
  // maxPendingLines / journalMaxBuffered: the memory bounds when the local disk refuses writes
  // (docs/access-log.md, "A full or failing local disk"); past them entries are shed and counted.
  file: {
    rotateSize: '100m',
    rotateFrequency: /** @type {'daily'|'hourly'|number} */ ('daily'),
    keepFiles: 14,
    maxPendingLines: 50000,
    // what a crash keeps of an answered entry (docs/access-log.md, "Durability"): memory, process, host
    durability: /** @type {'memory'|'process'|'host'} */ ('process')
  },
  // rollups: exact per-minute counts of the log, kept in rollupTable (logging/rollup/); one
  // rollup table serves every log table. retention / rollupRetention: the HBase TTL of the log's
  // and the rollups' column family, set when a table is created (docs/access-log.md#retention
  // argues the figures); an existing table keeps its own until `beacon log retention --set`.
  hbase: {
    buckets: 16,
    batchSize: 500,
    flushIntervalMs: 100,
    maxQueue: 50000,
    journalMaxBuffered: 50000,
    // The spill journal's budget on the state disk (0: none): past it entries are shed as
    // journal_full, so a flood while HBase is down cannot fill the disk the other sinks need.
    journalMaxSize: '2g',
    overload: 'spill',
    // what a crash keeps of an answered entry (docs/access-log.md, "Durability"): memory, process, host
    durability: /** @type {'memory'|'process'|'host'} */ ('process'),
    retryMaxMs: 30000,
    rollups: true,
    rollupTable: 'beacon_access_rollup',
    retention: '90d',
    rollupRetention: '400d'
  }
}

const MiB = 1024 * 1024

/**
 * The access-log sinks' internal knobs: no setting names them (nothing in a deployment calls for
 * turning them), but they are defaults all the same, kept here once so that a module, its tests
 * and production run on the same figures.
 */
const SINK_INTERNALS = {
  file: {
    batchMs: 10, // how long lines wait to be handed over together
    maxBatchLines: 1000, // hand over at once when this many wait
    closeTimeoutMs: 5000, // close() budget when the caller gives none
    retryMs: 1000 // a write the disk refused is tried again after this
  },
  hbase: {
    maxInFlight: 3, // live batches in flight at once
    writeTimeoutMs: 0, // per multiPut; 0 = the client's operationTimeout
    closeTimeoutMs: 5000, // close() budget when the caller gives none
    retryBaseMs: 100,
    retryMaxBackoffMs: 5000,
    replayBaseMs: 500, // first wait before replaying the journal after a spill
    replayMaxBackoffMs: 30000,
    probeSize: 10, // entries in the first replay write after HBase was down
    claimIntervalMs: 60000, // how often to look for orphan journals besides at start
    maxReplayFileBytes: 64 * MiB, // a bigger journal file is no file beacon wrote: quarantined unread
    replayReadBytes: MiB // the replay reads files a block of this size at a time; a longer line is corrupt
  },
  journal: {
    // A replay reads one sealed file at a time into memory (its bytes; records a batch at a
    // time), so the file size bounds what a replay adds to a worker's memory.
    maxFileBytes: 16 * MiB,
    retryMs: 1000, // a journal write that failed (a full disk) is tried again after this
    maxWriteBytes: MiB // about how much one write(2) carries
  },
  // Short-lived segments: a segment is deleted once all its entries are written, so the replay
  // after a crash rewrites about one segment age of entries, not all that were already in HBase.
  wal: { segmentLines: 20000, segmentMaxAgeMs: 1000 }
}

/**
 * Filled into every access-log sink's `privacy` (logging/privacy.js): what it stores of the
 * client. Everything, as before the setting existed: a default that stored less would change
 * what every existing deployment keeps (and break what reads it) on upgrade, and an address is
 * what abuse and fraud reviews need. Deployments that need no address should set `truncate`
 * (docs/access-log.md#privacy argues it); the default costs the request path one null check.
 */
const SINK_PRIVACY_DEFAULTS = { ip: 'full', userAgent: 'full', honorOptOut: false }

const HBASE_DEFAULT_CONFIG = { features: {} }

const DEFAULTS = {
  port: 4000,
  adminPort: 4001,
  host: '0.0.0.0',
  adminHost: '127.0.0.1',
  workers: 0, // 0 = one per CPU core
  // Who accepts a new connection: the cluster primary, handing each to the next worker (even
  // spread, one IPC hop per connection), or the workers themselves from the shared socket
  // (no hop; the kernel picks the worker). docs/configuration.md has the measurements.
  acceptConnections: 'primary',
  // V8's young generation per worker (--max-semi-space-size, MiB; 0: V8's default): an access
  // entry lives until HBase acknowledges it, long enough to survive a small one's scavenges and
  // be copied again (docs/configuration.md has the measurements).
  workerSemiSpaceMiB: 0,
  stateDir: path.join(REPO_ROOT, '.state'),
  shutdownTimeoutMs: 10000,
  // The rollup job's process (one per host, forked by the primary when a sink keeps rollups):
  // its V8 old-space cap, MiB (docs/access-log.md#rollups-exact-per-minute-counts-loggingrollup)
  // maxGroups: groups of a minute it holds in memory at once (the rest wait in files of
  // stateDir/rollup-spill); maxAttempts: attempts (over 5 minutes at least) before a minute that
  // cannot be counted is parked, so that later minutes go on
  rollupJob: { maxOldSpaceMiB: 128, maxGroups: 50000, maxAttempts: 5 },
  // Per-client limits on the public port (api/public/rate-limit.js): a token bucket per client address
  // (IPv6: its /64) and endpoint, in each worker; an endpoint's own `rateLimit` wins. perSecond 0:
  // off. burst 0: twice perSecond. trustedProxies: peers whose X-Forwarded-For names the client.
  // maxClients: the buckets a worker keeps at most. The default limits one address to a
  // fraction of a worker and fits a large office behind one NAT; a balancer on a loopback or
  // private address passes its clients' addresses on (docs/configuration.md#rate-limits says why).
  rateLimit: { perSecond: 100, burst: 0, maxClients: 100000, trustedProxies: ['loopback', 'private'] },
  logLevel: 'info',
  adminToken: null, // from the environment only: secrets never live in the config file
  // The names the admin port answers besides localhost and its own address (api/admin/host-check.js):
  // those a proxy or an operator's browser reaches it by, `name` or `name:port`.
  admin: { allowedHosts: [] },
  // How much of the config history is kept (lib/toggles/history.js): changes per id or rollout,
  // and for how long (the history table's TTL, set when it is created; `forever` for none).
  history: { maxVersions: 100, retention: '400d' },
  adminTokens: null, // named ones, `name:token,…` (api/admin/credentials.js); the environment only too
  // What a scraper sends for /metrics when the admin port is not on loopback (an admin token also
  // does); the environment only too.
  metricsToken: null,
  http: {
    keepAliveTimeoutMs: 5000,
    headersTimeoutMs: 10000,
    requestTimeoutMs: 10000,
    maxHeaderSize: 8192,
    maxUrlLength: 2048,
    maxConnections: 0, // 0 = unlimited
    // One client's open connections to a worker's public port (api/public/connection-share.js): room
    // for its whole share of change streams and as many again for requests. 0: no share.
    maxConnectionsPerClient: 2000,
    // A keep-alive connection is closed after this many requests, so a client's connections
    // move between workers and hosts as they come and go. 0: never.
    maxRequestsPerSocket: 1000
  },
  limits: {
    maxIdLength: 64,
    maxCallbackLength: 128
  },
  hbase: {
    bootstrap: [], // empty = start the embedded local HBase
    rpcTimeoutMs: 1000,
    operationTimeoutMs: 3000,
    configTable: 'beacon_config',
    // every admin write, with its actor (api/admin/audit.js); created on first use
    auditTable: 'beacon_audit',
    // every change of an id's config and of a rollout (lib/toggles/history.js); created on first use
    historyTable: 'beacon_config_history',
    configFamily: 'c',
    configQualifier: 'json',
    // how often each process re-reads the endpoint switches and the config change feed (changes
    // made on other hosts); 0 = never. A change is served everywhere within one interval plus
    // one read: 1 s keeps that under the 2 s promised, at two small reads a second per worker.
    controlPollMs: 500,
    // config reads (multi-gets) each endpoint may have out at once; ids asked for meanwhile
    // queue and go together in the next one, so batches grow with the load. HBase spends about
    // as much CPU on one RPC as on 5-7 rows of a multi-get (packages/hbase-client/bench/results/hbase-client-java-*).
    configReadsInFlight: 2,
    // how long a config read waits after its first id for more to join it (0: the next turn of
    // the event loop)
    configReadLingerMs: 0,
    // how often each process scans which ids have a row (keys only), so that a cached endpoint
    // answers any other id the default without a read (lib/toggles/known-ids.js); ids changed
    // through beacon count at once, rows written around it from the next scan. 0 = off.
    knownIdScanMs: 60000
  },
  logSinks: {
    file: { type: 'file', path: 'logs/access.log', ...SINK_DEFAULTS.file },
    hbase: { type: 'hbase', table: 'beacon_access_log', journalDir: 'journal', ...SINK_DEFAULTS.hbase }
  },
  // The five endpoints of the seed benchmark, one per combination of layers.
  endpoints: {
    sample1: {
      source: 'fixed',
      valueFile: 'fixed/sample1.json',
      cache: { type: 'off' },
      accessLog: [],
      cacheControl: 'public, max-age=60'
    },
    sample2: {
      source: 'hbase',
      defaultConfig: HBASE_DEFAULT_CONFIG,
      cache: { type: 'off' },
      accessLog: [],
      cacheControl: 'public, max-age=30'
    },
    sample3: {
      source: 'hbase',
      defaultConfig: HBASE_DEFAULT_CONFIG,
      cache: { type: 'lru' },
      accessLog: [],
      cacheControl: 'public, max-age=30',
      // OpenFeature on two samples, so `npm start` shows it: one cached and unlogged, one logged.
      ofrep: true
    },
    // no-cache so that every page view reaches the server and is logged
    sample4: {
      source: 'hbase',
      defaultConfig: HBASE_DEFAULT_CONFIG,
      cache: { type: 'lru' },
      accessLog: ['file'],
      cacheControl: 'no-cache'
    },
    sample5: {
      source: 'hbase',
      defaultConfig: HBASE_DEFAULT_CONFIG,
      cache: { type: 'lru' },
      accessLog: ['hbase'],
      cacheControl: 'no-cache',
      ofrep: true
    }
  }
}

/**
 * Environment variables, as [name, setting path, kind]. `int` values that are not plain digits
 * are passed on as strings so validation names the variable; `list` is comma-separated. An
 * empty variable counts as unset.
 */
const ENV_VARS = [
  ['PORT', 'port', 'int'],
  ['ADMIN_PORT', 'adminPort', 'int'],
  ['HOST', 'host', 'string'],
  ['ADMIN_HOST', 'adminHost', 'string'],
  ['BEACON_WORKERS', 'workers', 'int'],
  ['BEACON_WORKER_SEMI_SPACE_MIB', 'workerSemiSpaceMiB', 'int'],
  ['BEACON_ACCEPT_CONNECTIONS', 'acceptConnections', 'string'],
  ['BEACON_ROLLUP_MAX_OLD_SPACE_MIB', 'rollupJob.maxOldSpaceMiB', 'int'],
  ['BEACON_ROLLUP_MAX_GROUPS', 'rollupJob.maxGroups', 'int'],
  // <per second>[:<burst>] for every endpoint; 0 = off
  ['BEACON_RATE_LIMIT', 'rateLimit', 'rate'],
  ['BEACON_TRUSTED_PROXIES', 'rateLimit.trustedProxies', 'list'],
  ['BEACON_ADMIN_ALLOWED_HOSTS', 'admin.allowedHosts', 'list'],
  ['BEACON_STATE_DIR', 'stateDir', 'string'],
  ['BEACON_LOG_LEVEL', 'logLevel', 'string'],
  ['BEACON_ADMIN_TOKEN', 'adminToken', 'string'],
  ['BEACON_ADMIN_TOKENS', 'adminTokens', 'string'],
  ['BEACON_METRICS_TOKEN', 'metricsToken', 'string'],
  ['BEACON_HBASE_BOOTSTRAP', 'hbase.bootstrap', 'list'],
  ['BEACON_CONFIG_TABLE', 'hbase.configTable', 'string'],
  ['BEACON_AUDIT_TABLE', 'hbase.auditTable', 'string'],
  ['BEACON_HISTORY_TABLE', 'hbase.historyTable', 'string'],
  ['BEACON_KNOWN_ID_SCAN_MS', 'hbase.knownIdScanMs', 'int'],
  // applies to the sink named `hbase`, when one is declared
  ['BEACON_ACCESS_LOG_TABLE', 'logSinks.hbase.table', 'string'],
  // the rollups of the sink named `hbase`: on/off, and their table
  ['BEACON_ACCESS_ROLLUPS', 'logSinks.hbase.rollups', 'bool'],
  ['BEACON_ACCESS_ROLLUP_TABLE', 'logSinks.hbase.rollupTable', 'string'],
  // how long HBase keeps the rows and the rollups of the sink named `hbase` (a table's TTL)
  ['BEACON_ACCESS_LOG_RETENTION', 'logSinks.hbase.retention', 'string'],
  ['BEACON_ACCESS_ROLLUP_RETENTION', 'logSinks.hbase.rollupRetention', 'string'],
  // what a crash keeps of the sink named `hbase` (memory, process, host); DURABLE: true = process, false = memory
  ['BEACON_ACCESS_LOG_DURABILITY', 'logSinks.hbase.durability', 'string'],
  ['BEACON_ACCESS_LOG_DURABLE', 'logSinks.hbase.durable', 'bool']
]

/** The env var naming the JSON settings file. */
const CONFIG_FILE_ENV = 'BEACON_CONFIG_FILE'

/**
 * @template T
 * @param {T} value
 * @returns {T}
 */
function deepFreeze (value) {
  if (value && typeof value === 'object') {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze(/** @type {Record<string, unknown>} */ (value)[key])
  }
  return value
}

/** What a crash keeps of an answered entry, per sink (docs/access-log.md, "Durability"). */
const DURABILITIES = /** @type {const} */ (['memory', 'process', 'host'])

module.exports = deepFreeze({
  DEFAULTS,
  DURABILITIES,
  ENDPOINT_DEFAULTS,
  LRU_CACHE_DEFAULTS,
  CORS_DEFAULTS,
  EVENT_DEFAULTS,
  OFREP_DEFAULTS,
  SINK_DEFAULTS,
  SINK_INTERNALS,
  SINK_PRIVACY_DEFAULTS,
  ENV_VARS,
  CONFIG_FILE_ENV,
  CONFIG_DIR
})
