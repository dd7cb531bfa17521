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
 * @typedef {object} SinkClosed what a sink left behind at close
 * @property {{ entries: number, files: Array<{ file: string, entries: number }> }} [leftOnDisk] entries
 *   in files on this host's disk, for a later replay (an HBase sink's)
 * @property {number} lostInMemory entries it held in memory only and could write nowhere: lost
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
   * @returns {Promise<{ leftOnDisk: number, files: Array<{ file: string, entries: number }>, lostInMemory: number }>}
   *   access-log entries the HBase sinks left in files on this host's disk, and the entries every
   *   sink held in memory only and lost (a file sink that did not close in time: its pending lines)
   */
  async closeAll ({ timeoutMs = undefined } = {}) {
    const sinks = [...this.values()]
    const results = await Promise.all(sinks.map((s) => {
      const closed = s.close({ timeoutMs }).catch(() => {})
      return s.type === 'hbase' ? closed : settleWithin(closed, /** @type {number} */ (timeoutMs))
    }))
    /** @type {Array<{ file: string, entries: number }>} */
    const files = []
    let lostInMemory = 0
    results.forEach((result, i) => {
      const r = result && typeof result === 'object' ? /** @type {SinkClosed} */ (result) : null
      if (r && r.leftOnDisk) files.push(...r.leftOnDisk.files)
      lostInMemory += r ? r.lostInMemory : Number(sinks[i].stats().pending) || 0
    })
    return { leftOnDisk: files.reduce((n, f) => n + f.entries, 0), files, lostInMemory }
  }
}

module.exports = { SinkSet }
