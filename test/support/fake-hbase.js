'use strict'

// A stand-in for the HBase client's multiPut, for unit tests of the access-log sink's own
// logic (journal, replay, accounting) with no JVM. It keeps the rows it took; `up = false`
// makes every put fail the way an unreachable HBase does (retryable); `applyThenTimeout` stores
// the rows and then fails them as an RPC whose answer never came (the outcome a client cannot
// know). The same paths run against the real HBase in test/logging/hbase-sink.test.js and the
// fault tests (test/faults/host-disk.test.js meets the second one for real).

/**
 * @returns {{ rows: Map<string, string>, up: boolean, applyThenTimeout: boolean, calls: number,
 *   client: { multiPut: (table: string, puts: Array<{ row: string, cells: any }>) => Promise<Array<Error|null>> } }}
 */
function createFakeHBase () {
  const fake = {
    rows: new Map(),
    up: true,
    applyThenTimeout: false,
    calls: 0,
    client: {
      async multiPut (table, puts) {
        fake.calls++
        await new Promise((resolve) => setImmediate(resolve))
        if (!fake.up) {
          const err = Object.assign(new Error('connection refused'), { code: 'HBASE_CONNECTION', retryable: true, unsent: true })
          return puts.map(() => err)
        }
        for (const put of puts) fake.rows.set(put.row, put.cells.l.e)
        if (fake.applyThenTimeout) {
          const err = Object.assign(new Error('no answer within rpcTimeout'), { code: 'HBASE_CALL_TIMEOUT', retryable: true })
          return puts.map(() => err)
        }
        return puts.map(() => null)
      }
    }
  }
  return fake
}

module.exports = { createFakeHBase }
