'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const { loadSettings } = require('../../config')
const { createLogger } = require('../../logging/logger')
const { createBeacon } = require('../../api')
const { createMetrics } = require('../../api/metrics')
const { PassThrough } = require('node:stream')
const { accessLogSplitKeys } = require('../../logging/access-log-layout')
const { testClient, uniqueTable } = require('./hbase')

/**
 * Starts a real beacon on ports 0 against the real test HBase, with its own access-log table
 * and its own state dir (file logs, journal). Config is read from the shared seeded table.
 * App log lines are captured in `logLines` (parsed JSON).
 * @param {{ overrides?: object, clientOptions?: object, env?: object, now?: () => number,
 *   bootstrap?: string[] }} [options] bootstrap: another HBase instance than the shared one
 */
async function startBeacon ({ overrides = {}, clientOptions = {}, env = {}, now, bootstrap } = {}) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-test-'))
  const rpcs = []
  const metrics = createMetrics({ collectDefault: false })
  const target = bootstrap ? { bootstrap } : {}
  const client = testClient({ onRpc: (e) => { rpcs.push(e); metrics.hooks.onRpc(e) }, ...target, ...clientOptions })
  const accessLogTable = uniqueTable('alog')
  // The audit trail's and the history's tables are created by the first admin write, and dropped with the app.
  const auditTable = uniqueTable('audit')
  const historyTable = uniqueTable('hist')
  await client.admin.createTable(accessLogTable, { families: ['l'], splits: accessLogSplitKeys(16, 4) })
  const settings = loadSettings({
    // The per-client limit is off unless a test sets it: tests send from one loopback address at
    // rates no one client sends (BEACON_RATE_LIMIT '' leaves the default on).
    env: { BEACON_STATE_DIR: stateDir, BEACON_RATE_LIMIT: '0', ...env },
    overrides: {
      port: 0,
      adminPort: 0,
      host: '127.0.0.1',
      logLevel: 'warn',
      ...overrides,
      // No polling of endpoint switches / the change feed unless a test asks: its reads would
      // show up among the RPCs that tests count, and the shared table is not a test's to read.
      hbase: { bootstrap: client.options.bootstrap, controlPollMs: 0, auditTable, historyTable, ...(overrides.hbase || {}) },
      logSinks: {
        ...(overrides.logSinks || {}),
        hbase: { type: 'hbase', table: accessLogTable, flushIntervalMs: 20, ...((overrides.logSinks || {}).hbase || {}) }
      }
    }
  })
  const logLines = []
  const logStream = new PassThrough()
  logStream.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line))
  })
  const logger = createLogger({ level: 'info', destination: logStream })
  // Built through the same root factory as production; only the client (to count RPCs), the
  // metrics registry and the clock are the test's own.
  const beacon = createBeacon(settings, { client, logger, now, metrics, writerId: `t${process.pid}`, workerTag: 'w1' })
  const { port, adminPort } = await beacon.listen()
  // Whether an unknown id is read then depends on nothing but the test's own steps.
  await beacon.whenIdsScanned()
  let closed = false
  return {
    settings,
    client,
    sinks: beacon.sinks,
    beacon,
    rpcs,
    metrics,
    logLines,
    stateDir,
    accessLogTable,
    url: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    async close () {
      if (closed) return
      closed = true
      const admin = testClient(target)
      await beacon.close()
      await admin.admin.deleteTable(accessLogTable).catch(() => {})
      for (const [table, own] of [[settings.hbase.auditTable, auditTable], [settings.hbase.historyTable, historyTable]]) {
        if (table === own) await admin.admin.deleteTable(table).catch(() => {})
      }
      await admin.close()
      fs.rmSync(stateDir, { recursive: true, force: true })
    }
  }
}

/**
 * One HTTP request (over a fresh connection unless an agent is given); resolves with status,
 * headers and body text. A GET or HEAD written to a kept-alive socket that the server closed
 * as idle at that moment (its keepAliveTimeout) is reset before the server reads it; like a
 * browser, it is sent once more on another connection (`retriedAfterReset` says so).
 * @param {string} url
 * @param {{ method?: string, headers?: object, agent?: http.Agent|false }} [options]
 * @returns {Promise<{ status: number|undefined, headers: http.IncomingHttpHeaders, body: string, retriedAfterReset?: boolean }>}
 */
function request (url, { method = 'GET', headers = {}, agent = false } = {}) {
  return send(url, method, headers, agent).catch((err) => {
    if (!(err.reusedSocket && err.code === 'ECONNRESET' && (method === 'GET' || method === 'HEAD'))) throw err
    return send(url, method, headers, agent).then((res) => ({ ...res, retriedAfterReset: true }))
  })
}

/** @returns {Promise<{ status: number|undefined, headers: http.IncomingHttpHeaders, body: string }>} */
function send (url, method, headers, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })))
    req.end()
  })
}

module.exports = { startBeacon, request }
