'use strict'

// Jest globalSetup: make sure the shared HBase (default options) runs, tables and seed included.
// Environment set here reaches the test workers, which are spawned afterwards.

const hbase = require('../../infra/hbase')

module.exports = async () => {
  const { bootstrap, alreadyRunning } = await hbase.up(hbase.resolveOptions(), {
    log: (line) => process.stderr.write(`${line}\n`)
  })
  process.env.BEACON_TEST_HBASE_STARTED = alreadyRunning ? '0' : '1'
  process.env.BEACON_HBASE_BOOTSTRAP = bootstrap.join(',')
}
