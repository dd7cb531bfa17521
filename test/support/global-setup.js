'use strict'

// Jest globalSetup (main and faults projects): make sure the test HBase runs, tables and seed
// included, and give the run an id (the fault files' shared cluster knows by it which run started
// it: test/support/fault-cluster.js). Environment set here reaches the test workers, which are
// spawned afterwards.

const crypto = require('node:crypto')
const { upTestHBase, useTestJvmProfile, READY_ENV } = require('./test-hbase')
const { RUN_ID_ENV } = require('./fault-cluster')

module.exports = async () => {
  useTestJvmProfile()
  process.env[RUN_ID_ENV] = `${new Date().toISOString()} pid ${process.pid} ${crypto.randomBytes(4).toString('hex')}`
  // test/lanes.js started it and checked its tables before any jest: nothing to do again here.
  const { overrides, bootstrap, alreadyRunning } = process.env[READY_ENV]
    ? { ...JSON.parse(process.env[READY_ENV]), alreadyRunning: true }
    : await upTestHBase({ log: (line) => process.stderr.write(`${line}\n`) })
  process.env.BEACON_TEST_HBASE_STARTED = alreadyRunning ? '0' : '1'
  process.env.BEACON_TEST_HBASE_OPTIONS = JSON.stringify(overrides)
  process.env.BEACON_HBASE_BOOTSTRAP = bootstrap.join(',')
  // Servers the tests start as processes send from one loopback address at rates no one client
  // sends: the per-client limit is off for them, as for the bench, unless a test sets it.
  if (process.env.BEACON_RATE_LIMIT === undefined) process.env.BEACON_RATE_LIMIT = '0'
}
