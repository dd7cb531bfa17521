'use strict'

// The client's options: their defaults and the bootstrap list's parsing (client.js takes them).

const os = require('node:os')
const { ADDRESS } = require('./pool')
const { badArgument } = require('./errors')

/**
 * The OS login name, which HBase's own client sends by default; "hbase" where there is none.
 * @returns {string}
 */
function loginName () {
  try {
    return os.userInfo().username || 'hbase'
  } catch {
    return 'hbase'
  }
}

const DEFAULTS = Object.freeze({
  rpcTimeout: 2000,
  operationTimeout: 10000,
  connectTimeout: 2000,
  pause: 20,
  maxPause: 1000,
  maxBatchActions: 1000,
  scanCaching: 500,
  cellBlocks: false,
  maxFrameBytes: 256 * 1024 * 1024,
  user: loginName()
})

/**
 * The options a client runs with: DEFAULTS, overridden by the caller's (ClientConfig).
 * @typedef {object} ClientOptions
 * @property {string[]} bootstrap master/RegionServer addresses, "host:port"
 * @property {number} rpcTimeout ms per RPC
 * @property {number} operationTimeout ms per operation, retries included
 * @property {number} connectTimeout ms
 * @property {number} pause base retry pause, ms
 * @property {number} maxPause longest retry pause, ms
 * @property {number} maxBatchActions actions per Multi RPC
 * @property {number} scanCaching rows per scan RPC
 * @property {boolean} cellBlocks cells travel in KeyValueCodec cell blocks, as HBase's Java client
 *   sends them, instead of inline in the protobuf (see cell-block.js)
 * @property {number} maxFrameBytes the largest response frame a connection takes: a frame whose
 *   4-byte length says more fails the connection (HBASE_PROTOCOL) before a byte of it is buffered
 * @property {string} user effective user sent in each connection header (SIMPLE auth); default
 *   the OS login name
 * @property {(event: import('./pool').RpcEvent) => void} [onRpc] observer, called once per RPC
 *   (for metrics)
 */

/**
 * What a caller passes: `bootstrap` (array or comma-separated string) and any other option.
 * @typedef {{ bootstrap: string|string[] } & Partial<Omit<ClientOptions, 'bootstrap'>>} ClientConfig
 */

/**
 * @param {string|string[]} bootstrap "host:port" list (masters or RegionServers), an array or
 *   a comma-separated string
 * @returns {string[]}
 */
function parseBootstrap (bootstrap) {
  const list = (Array.isArray(bootstrap) ? bootstrap : String(bootstrap || '').split(','))
    .map((s) => s.trim()).filter(Boolean)
  if (list.length === 0) throw badArgument('bootstrap needs at least one "host:port"')
  for (const address of list) {
    if (!ADDRESS.test(address)) throw badArgument(`bootstrap address "${address}" must be "host:port"`)
  }
  return list
}

module.exports = { DEFAULTS, parseBootstrap }
