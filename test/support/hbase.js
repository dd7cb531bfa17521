'use strict'

// The shared test HBase, as the HBase client's own tests reach it (BEACON_HBASE_BOOTSTRAP, which
// global-setup sets once it has started or found it): one helper for both.
module.exports = require('@beacon/hbase-client/test/support/hbase')
