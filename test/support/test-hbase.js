'use strict'

// Which HBase instance a test run uses, shared by global-setup and global-teardown.
//
// The default instance of this checkout (state dir .state/hbase, default ports) when it runs or
// can start. When its ports are held by something else — typically another checkout's HBase —
// this checkout runs its own instance instead, in .state/hbase-test on ports derived from the
// checkout's path: the two never share data, and neither run stops the other's HBase. (Using
// the other checkout's instance would make this run depend on its tables and its lifetime.)

const crypto = require('node:crypto')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { withStartLock } = require('../../tools/dev-hbase')

const ROOT = path.resolve(__dirname, '..', '..')

/**
 * The HBase instances a test starts for itself (the fault tests' own, those `npm run` scripts
 * start as children) run the light JVM profile (tools/dev-hbase/jvm.js): they live minutes under paced
 * load and are killed and restarted, where C1 and the serial collector take about half the CPU of
 * C2 and G1. Set in the environment, so that children inherit it; a profile chosen by the caller's
 * environment wins. The shared test HBase is not one of them (upTestHBase). Called by
 * test/lanes.js and jest's global setup before either starts an HBase.
 */
function useTestJvmProfile () {
  process.env.BEACON_HBASE_JVM ||= 'light'
}

function portFree (host, port) {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)))
  })
}

/** Ports 20000..29999, one block of three per checkout path. */
function checkoutPorts () {
  const n = crypto.createHash('sha256').update(ROOT).digest().readUInt16BE(0) % 3000
  const base = 20000 + n * 3
  return { zkPort: base, masterPort: base + 1, rsPort: base + 2, masterInfoPort: -1, rsInfoPort: -1 }
}

/**
 * The overrides of the instance this run uses: {} for the default one.
 * @returns {Promise<Record<string, string|number>>}
 */
async function chooseTestHBase () {
  const opts = hbase.resolveOptions()
  if ((await hbase.status(opts)).running) return {}
  const ports = [opts.zkPort, opts.masterPort, opts.rsPort, opts.masterInfoPort, opts.rsInfoPort].filter((p) => p > 0)
  const free = await Promise.all(ports.map((p) => portFree(opts.host, p)))
  if (free.every(Boolean)) return {}
  return { stateDir: path.join(ROOT, '.state', 'hbase-test'), ...checkoutPorts() }
}

/**
 * Chooses the test HBase and makes sure it serves, under one lock per machine: two checkouts whose
 * test runs start at once would otherwise both find the default ports free and both start on them
 * (the second JVM then exits: "Could not start ZK at requested port of 2181").
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<{ overrides: Record<string, string|number>, bootstrap: string[], alreadyRunning: boolean }>}
 */
async function upTestHBase ({ log = () => {} } = {}) {
  const defaults = hbase.resolveOptions()
  const lockDir = path.join(os.tmpdir(), `beacon-test-hbase-${defaults.host}-${defaults.zkPort}`)
  return withStartLock({ stateDir: lockDir }, async () => {
    const overrides = await chooseTestHBase()
    // The shared instance serves the whole run's main tier, whose scans and filters are CPU-heavy
    // work for HBase: there C2 pays for itself (on C1 the regex-filter test of
    // packages/hbase-client/test/filters.test.js overran its timeout), so it runs the server profile.
    const { bootstrap, alreadyRunning } = await hbase.up(hbase.resolveOptions({ ...overrides, jvm: 'server' }), { log })
    return { overrides, bootstrap, alreadyRunning }
  }, 10 * 60 * 1000)
}

const ENV_OF = {
  stateDir: 'BEACON_HBASE_STATE_DIR',
  zkPort: 'BEACON_HBASE_ZK_PORT',
  masterPort: 'BEACON_HBASE_MASTER_PORT',
  rsPort: 'BEACON_HBASE_RS_PORT',
  masterInfoPort: 'BEACON_HBASE_MASTER_INFO_PORT',
  rsInfoPort: 'BEACON_HBASE_RS_INFO_PORT'
}

/**
 * The environment that points a child process's tools/dev-hbase (e.g. `npm run bench`) at the HBase
 * this test run uses (global-setup's choice), so that it never starts the default instance.
 * @returns {Record<string, string>}
 */
function testHBaseEnv () {
  const overrides = JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}')
  return Object.fromEntries(Object.entries(overrides).map(([key, value]) => [ENV_OF[key], String(value)]))
}

/**
 * Set by test/lanes.js for the jest runs it starts, once it has started the test HBase and set up
 * its tables: `{ overrides, bootstrap }` as upTestHBase() returned them.
 */
const READY_ENV = 'BEACON_TEST_HBASE_READY'

module.exports = { chooseTestHBase, upTestHBase, testHBaseEnv, useTestJvmProfile, READY_ENV }
