'use strict'

const { createHBaseClient } = require('../../lib/hbase')

/**
 * Where the test HBase is: set by global-setup (which starts it or finds it running).
 * @returns {string[]}
 */
function bootstrap () {
  const list = process.env.BEACON_HBASE_BOOTSTRAP
  if (!list) throw new Error('BEACON_HBASE_BOOTSTRAP is not set: run tests through jest (global-setup starts HBase)')
  return list.split(',')
}

/**
 * A table name no other test (or test run) uses.
 * @param {string} prefix
 * @returns {string}
 */
function uniqueTable (prefix) {
  return `t_${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`
}

/**
 * @param {object} [options] client options on top of the test bootstrap
 */
function testClient (options = {}) {
  return createHBaseClient({ bootstrap: bootstrap(), ...options })
}

module.exports = { bootstrap, uniqueTable, testClient }
