'use strict'

/**
 * haproxy.cfg for beacon's app tier: one HTTP frontend, round robin over the app hosts, each
 * health-checked on its admin port's `/readyz` (503 while HBase cannot serve it, while an
 * access-log queue is saturated, and while it shuts down), with fast checks and retries so that
 * a host that dies costs its clients nothing but the requests it was answering.
 *
 * Pure: options in, text out (tools/lb/index.js writes and runs it).
 */

/** Defaults, each the reason it is what it is. */
const DEFAULTS = Object.freeze({
  // One thread: on 2 shared cores a second thread only adds contention, and the bench measures
  // HAProxy's CPU per request.
  threads: 1,
  // null: HAProxy derives it from the file-descriptor limit (a fixed one above half that limit
  // stops it at start: "Cannot raise FD limit").
  maxconn: null,
  // Health checks: every 500 ms; 2 failures mark a host down, 2 successes bring it back. A host
  // already down is probed every 500 ms too, so a restarted one rejoins within ~1 s of ready.
  interMs: 500,
  fastinterMs: 250,
  downinterMs: 500,
  fall: 2,
  rise: 2,
  checkTimeoutMs: 1000,
  // Passive detection besides the checks: this many connection errors in a row (refused,
  // reset, empty response) mark a host down at once, before its checks would.
  errorLimit: 3,
  connectTimeoutMs: 500,
  clientTimeoutMs: 30000,
  serverTimeoutMs: 10000,
  keepAliveTimeoutMs: 5000,
  // A request refused by a dead host, or cut off with nothing answered, is sent again, to
  // another host (`option redispatch 1`: on every retry). Only these two failures: a slow
  // answer is never retried, so a slow host is never asked twice.
  retries: 2,
  retryOn: 'conn-failure empty-response',
  backendHeader: 'X-Beacon-Backend',
  // The fleet-wide per-client limit (beacon's own is per worker: docs/configuration.md#rate-limits):
  // requests a second per client address over 10 s, tracked in a stick table; past it, 429 with
  // Retry-After from HAProxy itself. 0: no table.
  clientRatePerSecond: 0
})

const NAME = /^[A-Za-z0-9_.-]{1,32}$/
const HOST = /^[A-Za-z0-9_.:-]{1,253}$/

/**
 * @typedef {{ name: string, host: string, port: number, checkPort?: number }} LbServer
 *   checkPort: where `/readyz` answers (beacon's ADMIN_PORT); default: port
 * @typedef {{ listen: { host: string, port: number }, servers: LbServer[], statsSocket: string,
 *   threads?: number, maxconn?: number|null, interMs?: number, fastinterMs?: number, downinterMs?: number,
 *   fall?: number, rise?: number, checkTimeoutMs?: number, errorLimit?: number, connectTimeoutMs?: number,
 *   clientTimeoutMs?: number, serverTimeoutMs?: number, keepAliveTimeoutMs?: number, retries?: number,
 *   retryOn?: string, backendHeader?: string|null, clientRatePerSecond?: number }} LbConfigOptions
 *   statsSocket: path of the admin socket (`show stat`); backendHeader: response header naming
 *   the host that answered (null: none)
 */

/**
 * @param {LbConfigOptions} options
 * @returns {string} haproxy.cfg text
 */
function haproxyConfig (options) {
  const o = { ...DEFAULTS, ...options }
  checkOptions(o)
  const server = (s) => `  server ${s.name} ${hostPort(s.host, s.port)} ` +
    `check${s.checkPort && s.checkPort !== s.port ? ` port ${s.checkPort}` : ''}`
  return [
    '# written by tools/lb (beacon): edit the options, not this file',
    'global',
    `  nbthread ${o.threads}`,
    ...(o.maxconn ? [`  maxconn ${o.maxconn}`] : []),
    `  stats socket ${o.statsSocket} mode 600 level admin`,
    '',
    'defaults',
    '  mode http',
    `  timeout connect ${o.connectTimeoutMs}ms`,
    `  timeout client ${o.clientTimeoutMs}ms`,
    `  timeout server ${o.serverTimeoutMs}ms`,
    `  timeout http-keep-alive ${o.keepAliveTimeoutMs}ms`,
    `  timeout check ${o.checkTimeoutMs}ms`,
    `  retries ${o.retries}`,
    `  retry-on ${o.retryOn}`,
    '  option redispatch 1',
    '',
    'frontend beacon',
    `  bind ${hostPort(o.listen.host, o.listen.port)}`,
    // The client's address, for beacon's limits and log (trusted there as rateLimit.trustedProxies).
    '  option forwardfor',
    ...clientLimit(o.clientRatePerSecond),
    '  default_backend app',
    '',
    'backend app',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  default-server inter ${o.interMs}ms fastinter ${o.fastinterMs}ms downinter ${o.downinterMs}ms fall ${o.fall} rise ${o.rise} ` +
      `observe layer4 error-limit ${o.errorLimit} on-error mark-down`,
    ...(o.backendHeader ? [`  http-response set-header ${o.backendHeader} %[srv_name]`] : []),
    ...o.servers.map(server),
    ''
  ].join('\n')
}

/**
 * A stick table of request rates by client address (IPv4 as IPv4-mapped IPv6), and the 429 past it.
 * @param {number} perSecond
 * @returns {string[]}
 */
function clientLimit (perSecond) {
  if (!perSecond) return []
  return [
    '  stick-table type ipv6 size 1m expire 30s store http_req_rate(10s)',
    '  http-request track-sc0 src',
    '  http-request return status 429 content-type application/json hdr Retry-After 10 ' +
      'string \'{"error":{"code":"RATE_LIMITED","message":"too many requests from this address"}}\' ' +
      `if { sc_http_req_rate(0) gt ${perSecond * 10} }`
  ]
}

function hostPort (host, port) {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

function checkOptions (o) {
  const bad = (what) => { throw new TypeError(`tools/lb: ${what}`) }
  for (const key of Object.keys(o)) {
    if (!Object.hasOwn(DEFAULTS, key) && !['listen', 'servers', 'statsSocket'].includes(key)) bad(`unknown option "${key}"`)
  }
  const port = (p, what) => { if (!Number.isInteger(p) || p < 1 || p > 65535) bad(`${what} must be a port number (got ${p})`) }
  if (!o.listen || !HOST.test(String(o.listen.host))) bad('listen.host must be an address')
  port(o.listen.port, 'listen.port')
  if (!Array.isArray(o.servers) || o.servers.length === 0) bad('servers must list at least one app host')
  const names = new Set()
  for (const s of o.servers) {
    if (!NAME.test(String(s.name))) bad(`server name ${JSON.stringify(s.name)} must be 1-32 of A-Z a-z 0-9 _ . -`)
    if (names.has(s.name)) bad(`server name ${s.name} is used twice`)
    names.add(s.name)
    if (!HOST.test(String(s.host))) bad(`server ${s.name}: host must be an address`)
    port(s.port, `server ${s.name}: port`)
    if (s.checkPort !== undefined) port(s.checkPort, `server ${s.name}: checkPort`)
  }
  if (typeof o.statsSocket !== 'string' || !o.statsSocket.startsWith('/') || /\s/.test(o.statsSocket)) {
    bad('statsSocket must be an absolute path without spaces')
  }
  for (const key of Object.keys(DEFAULTS)) {
    if (typeof DEFAULTS[key] !== 'number' && key !== 'maxconn') continue
    if (key === 'maxconn' && o.maxconn === null) continue
    if (key === 'clientRatePerSecond' && o.clientRatePerSecond === 0) continue
    if (!Number.isInteger(o[key]) || o[key] < (key === 'retries' ? 0 : 1)) bad(`${key} must be a positive integer (got ${o[key]})`)
  }
  if (!/^[a-z0-9 -]+$/.test(o.retryOn)) bad(`retryOn must be HAProxy retry-on keywords (got ${JSON.stringify(o.retryOn)})`)
  if (o.backendHeader !== null && !/^[A-Za-z0-9-]{1,64}$/.test(o.backendHeader)) bad('backendHeader must be a header name or null')
}

module.exports = { haproxyConfig, DEFAULTS }
