'use strict'

const { createHBaseClient } = require('@beacon/hbase-client')

/**
 * The HBase client a beacon process uses, from its settings: the one place where settings.hbase
 * becomes client options (the workers, the rollup process, `beacon journal replay`).
 * @param {import('./load').Settings} settings validated settings
 * @param {object} [extra]
 * @param {string[]} [extra.bootstrap] instead of settings.hbase.bootstrap (the embedded HBase's)
 * @param {boolean} [extra.cellBlocks] cells in KeyValueCodec cell blocks (the rollup job's scans)
 * @param {import('@beacon/hbase-client').ClientConfig['onRpc']} [extra.onRpc] per-RPC hook (metrics)
 * @returns {import('@beacon/hbase-client').HBaseClient}
 */
function createHBaseClientFrom (settings, { bootstrap = settings.hbase.bootstrap, cellBlocks, onRpc } = {}) {
  return createHBaseClient({
    bootstrap,
    rpcTimeout: settings.hbase.rpcTimeoutMs,
    operationTimeout: settings.hbase.operationTimeoutMs,
    ...(cellBlocks === undefined ? {} : { cellBlocks }),
    ...(onRpc ? { onRpc } : {})
  })
}

module.exports = { createHBaseClientFrom }
