'use strict'

const { settleWithin } = require('../lib/deadline')

/**
 * The contract every access-log sink keeps (file-sink.js, hbase-sink/): `write(entry)` is
 * synchronous, never throws and does no I/O on the caller's stack; `flush()` resolves once
 * everything written so far is durable in the sink; `close({ timeoutMs })` is idempotent,
 * flushes within the time given and releases; `stats()` returns its counters.
 * @typedef {object} Sink
 * @property {'file'|'hbase'} type
 * @property {(entry: import('./access-entry').AccessEntry) => void} write
 * @property {() => Promise<void>} flush
 * @property {(budget?: { timeoutMs?: number }) => Promise<SinkClosed|void>} close
 * @property {() => Record<string, unknown>} stats its counters (each sink's own shape; /metrics and /readyz read them)
 * @property {boolean} [durable] an entry is on this host's disk before write() returns (the
 *   HBase sink's write-ahead log): the endpoint logs before it answers
 * @property {number} [maxQueue] an HBase sink's queue bound
 * @property {string} [overload] an HBase sink's overload policy
 */

/**
 * @typedef {object} SinkClosed what a sink that keeps entries on this host's disk left there at close
 * @property {{ entries: number, files: Array<{ file: string, entries: number }> }} leftOnDisk
 */

/**
 * The access-log sinks of one process, by name: a Map of Sinks that closes them all within one
 * budget.
 * @extends {Map<string, Sink>}
 */
class SinkSet extends Map {
  /**
   * Closes every sink at once, each within `timeoutMs` (each flushes first); never rejects.
   * An HBase sink keeps to the time itself (it sends its journal files to HBase, and names what
   * it could not send in time, so it is awaited to the end); a file sink that has not closed by
   * then is left behind.
   * @param {{ timeoutMs?: number }} [budget]
   * @returns {Promise<{ leftOnDisk: number, files: Array<{ file: string, entries: number }> }>}
   *   access-log entries the HBase sinks left in files on this host's disk
   */
  async closeAll ({ timeoutMs = undefined } = {}) {
    const results = await Promise.all([...this.values()].map((s) => {
      const closed = s.close({ timeoutMs }).catch(() => {})
      return s.type === 'hbase' ? closed : settleWithin(closed, /** @type {number} */ (timeoutMs))
    }))
    const files = results.flatMap((r) => (r && typeof r === 'object' && r.leftOnDisk ? r.leftOnDisk.files : []))
    return { leftOnDisk: files.reduce((n, f) => n + f.entries, 0), files }
  }
}

module.exports = { SinkSet }
