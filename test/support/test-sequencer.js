'use strict'

// Jest's own order (a file that failed last time first, then the longest first), with two
// exceptions:
// - test/lanes.js names the order of the files it runs in a lane (BEACON_TEST_ORDER: file names
//   without `.test.js`, comma-separated), so that a lane's files that mostly wait meet the other
//   lane's busy ones; the named files run first, in that order;
// - a file that ends by stopping what the other files of its run share goes after them:
//   `hbase-cluster` ends with `hbase:down`, and a cluster file after it would find the shared
//   fault cluster stopped and start all six JVMs again.

const path = require('node:path')
const Sequencer = require('@jest/test-sequencer').default

const ORDER_ENV = 'BEACON_TEST_ORDER'
const LAST = new Set(['hbase-cluster'])

/** @typedef {{ path: string }} TestFile */

class TestSequencer extends Sequencer {
  /**
   * @param {TestFile[]} tests
   * @returns {any}
   */
  sort (tests) {
    const sorted = /** @type {TestFile[]} */ (super.sort(/** @type {any} */ (tests)))
    const name = (/** @type {TestFile} */ t) => path.basename(t.path, '.test.js')
    const order = (process.env[ORDER_ENV] || '').split(',').filter(Boolean)
    const named = order.flatMap((n) => sorted.filter((t) => name(t) === n))
    const rest = sorted.filter((t) => !order.includes(name(t)))
    return [...named, ...rest.filter((t) => !LAST.has(name(t))), ...rest.filter((t) => LAST.has(name(t)))]
  }
}

module.exports = TestSequencer
module.exports.ORDER_ENV = ORDER_ENV
