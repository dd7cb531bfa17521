'use strict'

// Jest globalTeardown: discard the fault files' shared cluster if this run started it, and stop
// HBase only if this run's globalSetup started it, so a developer's running instance survives
// `npm test` (in CI nothing runs beforehand, so it is always stopped).

const hbase = require('../../tools/dev-hbase')
const { discardIfClaimed } = require('./fault-cluster')

module.exports = async () => {
  const discarded = await discardIfClaimed()
  if (discarded) process.stderr.write(`fault cluster: discarded${discarded.wasRunning ? ` in ${discarded.stopMs} ms` : ''}\n`)
  if (process.env.BEACON_TEST_HBASE_STARTED !== '1') return
  const overrides = JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}')
  const { stopMs } = await hbase.down(hbase.resolveOptions(overrides))
  process.stderr.write(`hbase: stopped in ${(stopMs / 1000).toFixed(1)} s\n`)
}
