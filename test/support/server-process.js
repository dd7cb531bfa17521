'use strict'

const path = require('node:path')
const { startNode, waitForHttp } = require('../../tools/bench')
const { bootstrap } = require('./hbase')

/**
 * Starts the real `npm start` entry point (cluster primary + 2 workers) against the test HBase
 * and resolves once a JSONP endpoint answers.
 * @param {{ port: number, adminPort?: number, stateDir: string, env?: object, waitReady?: boolean,
 *   log?: (line: string) => void }} options admin port: port + 1 unless given; log: each output
 *   line; waitReady false: resolve at once, for a test that watches what the workers do as they
 *   start (their sinks claim orphan journals before they listen)
 * @returns {Promise<import('child_process').ChildProcess & { stop: (timeoutMs?: number) => Promise<number|null> }>}
 */
async function startServerProcess ({ port, adminPort = port + 1, stateDir, env = {}, waitReady = true, log = () => {} }) {
  const server = startNode(path.join(__dirname, '..', '..', 'server.js'), [], {
    name: 'beacon',
    log,
    env: {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '2',
      BEACON_HBASE_BOOTSTRAP: bootstrap().join(','),
      BEACON_STATE_DIR: stateDir,
      BEACON_LOG_LEVEL: 'warn',
      ...env
    }
  })
  if (waitReady) await waitForHttp(`http://127.0.0.1:${port}/api/sample1.js?id=1`, { child: server, timeoutMs: 60000 })
  return server
}

module.exports = { startServerProcess }
