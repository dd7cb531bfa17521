'use strict'

// Jest globalSetup (main and faults projects): make sure the test HBase runs, tables and seed
// included. Environment set here reaches the test workers, which are spawned afterwards.

const { upTestHBase, useTestJvmProfile } = require('./test-hbase')

module.exports = async () => {
  useTestJvmProfile()
  const { overrides, bootstrap, alreadyRunning } = await upTestHBase({ log: (line) => process.stderr.write(`${line}\n`) })
  process.env.BEACON_TEST_HBASE_STARTED = alreadyRunning ? '0' : '1'
  process.env.BEACON_TEST_HBASE_OPTIONS = JSON.stringify(overrides)
  process.env.BEACON_HBASE_BOOTSTRAP = bootstrap.join(',')
}
