'use strict'

/**
 * The RegionServer chaos engine's entry (test/faults/hbase-chaos.test.js, ~75 s, reaches it here):
 * one chaos run,
 *
 * 1. the watcher (HBase's Java client) starts looking at the cluster every 500 ms;
 * 2. the server cluster starts on it, its caches are warmed (sample3, sample5);
 * 3. the caller's load runs on sample2, sample3 and sample5, every sample5 request marked with a
 *    unique User-Agent, while the seeded driver acts for `durationMs`;
 * 4. any JVM still down is started, the cluster settles, the load runs a little longer and stops;
 * 5. the access-log pipeline drains, the server stops, and HBase's Java client dumps the access-log
 *    table: every 2xx of sample5 must be one row, found by its mark.
 *
 * The cluster itself (tools/dev-hbase, BEACON_HBASE_REGIONSERVERS > 1, a backup master) is the
 * caller's to start and wipe.
 */

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { setTimeout: sleep } = require('node:timers/promises')
const hbase = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { settings: { loadSettings }, tables: { ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } } = require('../../index.js')
const { startWatch } = require('./watch')
const { createPlan, createRandom, KINDS: CHAOS_KINDS } = require('./plan')
const { chaosMarkdown } = require('./report')
const { createDriver } = require('./driver')
const { startApp, warmCaches, drainAccessLog } = require('./app')
const { tableCounts, isSettled, expectedAt } = require('./timeline')
const { analyzeChaos } = require('./analysis')

const LOOK_INTERVAL_MS = 500
// A region still in transition this long after the last action is stuck (HBase warns at 60 s).
const STUCK_MS = 75000

/**
 * @typedef {(target: { url: string, ids: number, nextMark: () => string, record: (r: import('./analysis').LoadRecord) => void })
 *   => { stop: () => Promise<void> }} StartLoad
 *   the caller's load on sample2, sample3 and sample5 at `url` (ids 1..ids): every sample5 request
 *   carries `user-agent: nextMark()`, every answer goes to record(); stop() ends it once in flight
 *   requests are answered
 */

/**
 * @param {object} options
 * @param {Readonly<Record<string, any>>} options.hbaseOptions tools/dev-hbase options of a running cluster
 * @param {string[]} options.bootstrap its bootstrap list (as hbase.up() returned)
 * @param {number} options.durationMs how long the driver acts
 * @param {number} options.seed
 * @param {StartLoad} options.startLoad
 * @param {{ port: number, adminPort: number }} options.ports of the server cluster
 * @param {string} options.stateDir the server's state dir (journals) and the dump file
 * @param {number} [options.ids] config ids used (1..ids, seeded in the cluster)
 * @param {number} [options.workers] server workers
 * @param {[number, number]} [options.gapMs] between two actions
 * @param {(line: string) => void} [options.log]
 */
async function runChaos (options) {
  const {
    hbaseOptions: opts,
    bootstrap,
    durationMs,
    seed,
    startLoad,
    ports,
    stateDir,
    ids = Math.min(opts.seedCount, 200),
    workers = 2,
    gapMs = [10000, 20000],
    log = () => {}
  } = options
  fs.mkdirSync(stateDir, { recursive: true })
  const settings = loadSettings({ env: { BEACON_HBASE_BOOTSTRAP: bootstrap.join(','), BEACON_STATE_DIR: stateDir } })
  // A lookup may wait for a read in flight (one operation timeout), then make its own.
  const deadlineMs = 2 * settings.hbase.operationTimeoutMs + 1000
  const markPrefix = `beacon-chaos/${seed}/${crypto.randomBytes(4).toString('hex')}/`
  let seq = 0
  const nextMark = () => markPrefix + seq++
  /** @type {import('./analysis').LoadRecord[]} */
  const records = []
  const record = (r) => records.push(r)

  const watch = await startWatch(opts, { intervalMs: LOOK_INTERVAL_MS })
  // The driver's own client (region lists, moves, splits): MoveRegion answers only once the move
  // is done, seconds under chaos, and a region list may wait for hbase:meta to be reassigned.
  const client = createHBaseClient({ bootstrap, rpcTimeout: 60000, operationTimeout: 120000 })
  let app = null
  let load = null
  try {
    const base = tableCounts(
      await watch.waitFor('a settled cluster', (l) => l.rit === 0 && !l.error && (l.servers || []).length === opts.regionServers, 120000)
    )
    // The server writes (and reads its config) where the count reads: the instance's tables.
    const tables = {
      BEACON_CONFIG_TABLE: opts.configTable,
      BEACON_ACCESS_LOG_TABLE: opts.accessLogTable,
      BEACON_ACCESS_ROLLUP_TABLE: opts.rollupTable
    }
    app = await startApp({ bootstrap, ...ports, stateDir, workers, env: tables, log })
    const warmStarted = Date.now()
    const warm = await warmCaches(app, { ids, workers, headersOf: (e) => (e === 'sample5' ? { 'user-agent': nextMark() } : {}), record })
    log(`chaos: caches of ${workers} workers warm with ${ids} ids (${warm.requests} requests, ${warm.passes} ` +
      `passes, ${Date.now() - warmStarted} ms); load and actions for ${durationMs / 1000} s, seed ${seed}`)

    load = startLoad({ url: app.url, ids, nextMark, record })
    const plan = createPlan({ seed, minGapMs: gapMs[0], maxGapMs: gapMs[1] })
    const driver = createDriver({ opts, hbase, client, watch, plan, log })
    const chaosStarted = Date.now()
    const actions = await driver.run({ durationMs })
    await driver.restore()
    await driver.unstick(STUCK_MS)
    const settled = await watch.waitFor('the cluster settled with every JVM back', (l) =>
      isSettled(l, expectedAt(base, actions, opts.accessLogTable, l.at)) &&
      l.servers.length === opts.regionServers &&
      l.backups.length === opts.masters - 1, 180000)
    // The load keeps running past the last recovery by more than a request deadline.
    await sleep(deadlineMs + 2000)
    await load.stop()
    load = null
    const loadEnded = Date.now()

    const drained = await drainAccessLog(app.adminUrl, 180000)
    const crashed = { workerDeaths: app.workerDeaths(), primaryAlive: app.alive() }
    const exitCode = await app.stop(30000)
    app = null
    const dumpFile = path.join(stateDir, 'access-log-dump.tsv')
    const dumpStarted = Date.now()
    const dump = await hbase.dumpTable(opts, {
      table: opts.accessLogTable,
      family: ACCESS_LOG_FAMILY,
      qualifier: ACCESS_LOG_QUALIFIER,
      outFile: dumpFile
    })
    const dumpMs = Date.now() - dumpStarted
    const dumpLines = fs.readFileSync(dumpFile, 'utf8').split('\n')
    await watch.stop()

    const verdict = analyzeChaos({
      actions,
      looks: watch.looks,
      records,
      dumpLines,
      markPrefix,
      deadlineMs,
      logTable: opts.accessLogTable,
      configTable: opts.configTable,
      lookIntervalMs: LOOK_INTERVAL_MS
    })
    return {
      seed,
      durationMs,
      chaosStarted,
      loadMs: loadEnded - chaosStarted,
      settledAfterMs: settled.at - chaosStarted,
      deadlineMs,
      markPrefix,
      drained,
      dump: { rows: dump.rows, ms: dumpMs },
      crashed: { ...crashed, exitCode },
      looks: watch.looks.length,
      lookErrors: watch.looks.filter((l) => l.error).length,
      ...verdict
    }
  } finally {
    if (load) await load.stop().catch(() => {})
    if (app) await app.stop(30000).catch(() => {})
    await watch.stop()
    await client.close()
  }
}

module.exports = { runChaos, chaosMarkdown, CHAOS_KINDS, createRandom, LOOK_INTERVAL_MS }
