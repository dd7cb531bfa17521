'use strict'

// The one 3-RegionServer HBase cluster (tools/dev-hbase: ZooKeeper, an active and a backup master, 3
// RegionServers, each its own JVM) that the cluster fault tests share within a jest run:
// test/faults/hbase-cluster, hbase-cluster-client and hbase-chaos. A start costs ~40 s of this
// 2-core machine, so a run starts it once, not once per file:
// - the run's first claim (by whichever of the files jest runs first) discards what an earlier run
//   left (a run killed before its teardown) and records this run's id (BEACON_TEST_RUN_ID, set by
//   global-setup) in the cluster's state dir; the other files of the run find it theirs;
// - sharedCluster() makes sure it runs (hbase.up() restarts any JVM that is not running) with the
//   calling file's own tables: a file that counts rows or splits regions names tables no other
//   file touches, so the order jest picks changes nothing it asserts;
// - global-teardown discards it (SIGKILL, data deleted) if this run claimed it.
// Each file leaves it whole for the next: every JVM running, the balancer on, and its tables
// dropped (dropTables()), so that the next file's kills, moves and balancer runs deal with about as
// few regions as on a fresh cluster. Only the roles of the masters may have changed (a killed
// active master comes back as a backup): restoreMasterRoles().

const fs = require('node:fs')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { until } = require('./until')

/** The environment variable through which global-setup hands the run's id to the test files. */
const RUN_ID_ENV = 'BEACON_TEST_RUN_ID'
// The cluster, as the environment of `npm run hbase:up` sees it. Ports used by no other test.
const CLUSTER_ENV = Object.freeze({
  BEACON_HBASE_REGIONSERVERS: '3',
  BEACON_HBASE_MASTERS: '2',
  BEACON_HBASE_STATE_DIR: path.join(__dirname, '..', '..', '.state', 'hbase-faults-cluster'),
  BEACON_HBASE_ZK_PORT: '2371',
  BEACON_HBASE_MASTER_PORT: '17000',
  BEACON_HBASE_RS_PORT: '17020',
  BEACON_HBASE_MASTER_INFO_PORT: '-1',
  BEACON_HBASE_RS_INFO_PORT: '-1'
})
// What a file may choose for itself: its tables, and how many config rows its table is seeded with.
const OWN_KEYS = ['BEACON_CONFIG_TABLE', 'BEACON_ACCESS_LOG_TABLE', 'BEACON_ACCESS_ROLLUP_TABLE', 'BEACON_SEED_COUNT']
const ROLES_BOUND_MS = 120000
// Disabling a table flushes and closes its regions; on a busy 2-core machine that takes seconds.
const DROP_CLIENT = { rpcTimeout: 30000, operationTimeout: 120000 }
const POLL_MS = 1000

/**
 * A file's own tables on the shared cluster, as environment: `<prefix>_config`,
 * `<prefix>_access_log` and `<prefix>_access_rollup`, the config table seeded with ids 1..seedCount.
 * @param {string} prefix
 * @param {number} seedCount
 * @returns {Record<string, string>}
 */
function ownTables (prefix, seedCount) {
  return {
    BEACON_CONFIG_TABLE: `${prefix}_config`,
    BEACON_ACCESS_LOG_TABLE: `${prefix}_access_log`,
    BEACON_ACCESS_ROLLUP_TABLE: `${prefix}_access_rollup`,
    BEACON_SEED_COUNT: String(seedCount)
  }
}

/**
 * The shared cluster's environment, with a file's own tables: for the npm scripts and the server.
 * @param {Record<string, string>} [own] keys among BEACON_CONFIG_TABLE, BEACON_ACCESS_LOG_TABLE,
 *   BEACON_ACCESS_ROLLUP_TABLE and BEACON_SEED_COUNT
 * @returns {Record<string, string>}
 */
function clusterEnv (own = {}) {
  const other = Object.keys(own).filter((key) => !OWN_KEYS.includes(key))
  if (other.length) throw new TypeError(`fault cluster: ${other.join(', ')} is the shared cluster's, not a file's to choose`)
  return { ...CLUSTER_ENV, ...own }
}

/**
 * The shared cluster's tools/dev-hbase options, with a file's own tables.
 * @param {Record<string, string>} [own] as for clusterEnv()
 * @returns {Readonly<Record<string, any>>}
 */
function clusterOptions (own = {}) {
  return hbase.resolveOptions({}, { ...process.env, ...clusterEnv(own) })
}

function markerFile () {
  return path.join(CLUSTER_ENV.BEACON_HBASE_STATE_DIR, 'run-id')
}

function runId () {
  const id = process.env[RUN_ID_ENV]
  if (!id) throw new Error(`fault cluster: ${RUN_ID_ENV} is unset; run the file through jest's faults project, whose globalSetup sets it`)
  return id
}

function claimedBy () {
  try {
    return fs.readFileSync(markerFile(), 'utf8')
  } catch {
    return null
  }
}

/**
 * Claims the shared cluster for this jest run: the run's first claim discards whatever an earlier
 * run left (JVMs and data) and records the run; later claims find it claimed and change nothing.
 * @returns {Promise<boolean>} whether this was the run's first claim
 */
async function claimSharedCluster () {
  const id = runId()
  if (claimedBy() === id) return false
  await hbase.wipe(clusterOptions(), { crash: true })
  fs.mkdirSync(path.dirname(markerFile()), { recursive: true })
  fs.writeFileSync(markerFile(), id)
  return true
}

/**
 * Discards the shared cluster (SIGKILL, data deleted) and its claim.
 * @returns {Promise<{ wasRunning: boolean, stopMs: number }>}
 */
async function discardSharedCluster () {
  const { wasRunning, stopMs } = await hbase.wipe(clusterOptions(), { crash: true })
  fs.rmSync(markerFile(), { force: true })
  return { wasRunning, stopMs }
}

/**
 * The shared cluster, running and serving with the file's own tables in place: claimed (on the
 * run's first claim, started afresh), then hbase.up(), which starts any JVM not running and
 * creates missing tables. If that fails the cluster is discarded, so that the next file starts
 * it afresh rather than inherit a broken one.
 * @param {Record<string, string>} [own] as for clusterEnv()
 * @returns {Promise<{ options: Readonly<Record<string, any>>, bootstrap: string[] }>}
 */
async function sharedCluster (own = {}) {
  const options = clusterOptions(own)
  const first = await claimSharedCluster()
  try {
    const { bootstrap, alreadyRunning, startedMs, setup } = await hbase.up(options)
    const tables = setup.created.length ? `; created ${setup.created.join(', ')}` : ''
    console.log(`fault cluster: ${first ? 'first use in this run, ' : ''}${alreadyRunning ? 'was running' : 'started'}` +
      `, serving after ${(startedMs / 1000).toFixed(1)} s${tables}`)
    return { options, bootstrap }
  } catch (err) {
    await discardSharedCluster()
    throw err
  }
}

/**
 * Discards the shared cluster if this jest run claimed it (global-teardown): nothing stays running
 * after a run, and a run never discards the cluster of another run going on at the same time.
 * @returns {Promise<{ wasRunning: boolean, stopMs: number }|null>} null: not this run's
 */
async function discardIfClaimed () {
  const id = process.env[RUN_ID_ENV]
  return id && claimedBy() === id ? discardSharedCluster() : null
}

/**
 * Drops a file's tables once it is done with them: the beacon tables of its options (which
 * sharedCluster() created) and any `others` it created itself. If that fails, the cluster is
 * discarded (the next file starts it afresh) and the error is thrown.
 * @param {{ options: Readonly<Record<string, any>>, bootstrap: string[] }} cluster as sharedCluster() returned
 * @param {string[]} [others]
 * @returns {Promise<void>}
 */
async function dropTables ({ options, bootstrap }, others = []) {
  const client = createHBaseClient({ bootstrap, ...DROP_CLIENT })
  const started = Date.now()
  const dropped = []
  try {
    for (const table of [...others, options.configTable, options.accessLogTable, options.rollupTable]) {
      if (!await client.admin.tableExists(table)) continue
      await client.admin.deleteTable(table)
      dropped.push(table)
    }
    console.log(`fault cluster: dropped ${dropped.join(', ') || 'nothing'} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  } catch (err) {
    await discardSharedCluster()
    throw err
  } finally {
    await client.destroy()
  }
}

/**
 * Waits until HBase's Java client sees an active master, the others as backups and nothing in
 * transition; then, if a kill had handed the active role to a backup, makes the first master the
 * active one again, as tools/dev-hbase starts a cluster: stops the active one (SIGTERM: its ZooKeeper
 * node goes at once, and the first master takes over), starts it again as a backup, and waits
 * for that view again.
 * @param {Readonly<Record<string, any>>} options of the shared cluster
 * @returns {Promise<number|null>} how long it took, null if the roles were right already
 */
async function restoreMasterRoles (options) {
  const first = `${options.host}:${options.masterPort}`
  let view = null
  const look = (what, ok) => until(what, async () => {
    view = await hbase.inspectCluster(options).catch(() => null)
    return Boolean(view && ok(view))
  }, ROLES_BOUND_MS, POLL_MS)
  const settled = (v) => Boolean(v.active) && v.backups.length === options.masters - 1 && v.inTransition === 0
  await look('an active master, the others its backups, nothing in transition', settled)
  if (view.active === first) return null
  const started = Date.now()
  const index = Number(view.active.split(':').pop()) - options.masterPort + 1
  await hbase.restart(options, { role: 'master', index })
  await look('the first master active again', (v) => v.active === first && settled(v))
  return Date.now() - started
}

module.exports = {
  RUN_ID_ENV,
  ownTables,
  clusterEnv,
  clusterOptions,
  claimSharedCluster,
  sharedCluster,
  discardSharedCluster,
  discardIfClaimed,
  dropTables,
  restoreMasterRoles
}
