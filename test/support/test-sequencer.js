'use strict'

// Jest's own order (a file that failed last time first, then the longest first), except that a
// file which ends by stopping what the other files of its run share goes after them:
// `hbase-cluster` ends with `hbase:down`, and a cluster file after it would find the shared fault
// cluster stopped and start all six JVMs again.

const path = require('node:path')
const Sequencer = require('@jest/test-sequencer').default

const LAST = new Set(['hbase-cluster.test.js'])

class TestSequencer extends Sequencer {
  /**
   * @param {Array<{ path: string }>} tests
   * @returns {any}
   */
  sort (tests) {
    const sorted = /** @type {Array<{ path: string }>} */ (super.sort(/** @type {any} */ (tests)))
    const last = (/** @type {{ path: string }} */ t) => LAST.has(path.basename(t.path))
    return [...sorted.filter((t) => !last(t)), ...sorted.filter(last)]
  }
}

module.exports = TestSequencer
