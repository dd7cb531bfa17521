'use strict'

const { createHBaseClient } = require('../../lib')

/**
 * Where the test HBase is: `HBASE_TEST_BOOTSTRAP`, else `BEACON_HBASE_BOOTSTRAP` (which the
 * repository's jest global setup sets once it has started or found the test HBase).
 * @returns {string[]}
 */
function bootstrap () {
  const list = process.env.HBASE_TEST_BOOTSTRAP || process.env.BEACON_HBASE_BOOTSTRAP
  if (!list) throw new Error('no test HBase: set HBASE_TEST_BOOTSTRAP=host:port,... (the repository\'s jest setup sets it)')
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
