'use strict'

// Closed-loop load on @beacon/hbase-client (not the HTTP server), with every call's outcome
// recorded per row, and the timeline of a fault read from those records: when the client first
// saw a failure, when the last one was, when calls succeeded again, how failures were typed, and
// whether any call ran past its deadline.

const { setTimeout: sleep } = require('node:timers/promises')
const { startLoops } = require('./load')

/**
 * @typedef {{ op: string, row: string, t0: number, t1: number, ok: boolean, code?: string, cause?: string }} CallRecord
 *   one call (multi-get / multi-put: one record per action, with the whole call's start and end);
 *   cause: the code of the last error before the deadline, and the server's exception class if any
 */

/**
 * @param {string} op
 * @param {string} row
 * @param {number} t0
 * @param {unknown} result what the call (or its action) gave: an Error or anything else
 * @returns {CallRecord}
 */
function recordOf (op, row, t0, result) {
  if (!(result instanceof Error)) return { op, row, t0, t1: Date.now(), ok: true }
  const err = /** @type {any} */ (result)
  const cause = err.cause && err.cause.code
    ? err.cause.code + (err.cause.remoteClass ? ` ${err.cause.remoteClass.split('.').pop()}` : '')
    : undefined
  return { op, row, t0, t1: Date.now(), ok: false, code: err.code || err.name, cause }
}

/**
 * Starts `gets` loops of single gets (round robin over `rows`), one loop of multi-gets of all
 * `rows`, and with `writes` one loop of multi-puts writing a fresh row beside each of `rows`
 * (`<row>-w<n>`, so in the same region), until stop() or `maxMs`.
 * @param {import('@beacon/hbase-client').HBaseClient} client
 * @param {string} table
 * @param {string[]} rows existing rows to read
 * @param {{ gets?: number, writes?: boolean, family?: string, pauseMs?: number, maxMs?: number }} [how]
 * @returns {{ records: CallRecord[], written: string[], stop: () => Promise<void> }}
 *   written: rows whose multi-put was acknowledged
 */
function startClientLoad (client, table, rows, { gets = 2, writes = false, family = 'f', pauseMs = 25, maxMs = 120000 } = {}) {
  /** @type {CallRecord[]} */
  const records = []
  /** @type {string[]} */
  const written = []
  let next = 0
  let batch = 0
  const steps = [
    ...Array.from({ length: gets }, () => async () => {
      const row = rows[next++ % rows.length]
      const t0 = Date.now()
      records.push(recordOf('get', row, t0, await client.get(table, row).catch((err) => err)))
    }),
    async () => {
      const t0 = Date.now()
      const results = await client.multiGet(table, rows).catch((err) => rows.map(() => err))
      results.forEach((result, i) => records.push(recordOf('multiGet', rows[i], t0, result)))
    },
    ...(writes
      ? [async () => {
          const fresh = rows.map((row) => `${row}-w${batch}`)
          batch++
          const t0 = Date.now()
          const results = await client
            .multiPut(
              table,
              fresh.map((row) => ({ row, cells: { [family]: { v: row } } }))
            )
            .catch((err) => fresh.map(() => err))
          results.forEach((result, i) => {
            records.push(recordOf('multiPut', fresh[i], t0, result))
            if (result === null) written.push(fresh[i])
          })
        }]
      : [])
  ]
  const load = startLoops({
    loops: steps.length,
    maxMs,
    async step (i) {
      await steps[i]()
      await sleep(pauseMs)
    }
  })
  return { records, written, stop: () => load.stop() }
}

/**
 * The timeline of a fault from the records of the calls that ended after it.
 * @param {CallRecord[]} records
 * @param {number} at epoch ms of the fault (the kill)
 * @param {(row: string) => boolean} affected whether a row is in a region the fault hit
 * @param {number} deadlineMs the operation deadline every call ran under
 * @returns {{ calls: number, failures: number, firstFailureMs: number|null, lastFailureMs: number|null,
 *   firstSuccessMs: number|null, codes: Record<string, number>, slowestMs: number, overDeadline: number, otherFailures: number }}
 *   *Ms are from `at`; firstSuccessMs: the first success on an affected row after the first
 *   failure (or after `at` if none failed); codes: "code<-cause" → count; otherFailures: failed
 *   calls on rows the fault did not hit
 */
function timeline (records, at, affected, deadlineMs) {
  const after = records.filter((r) => r.t1 >= at)
  const hit = after.filter((r) => affected(r.row))
  const failed = hit.filter((r) => !r.ok)
  const ends = failed.map((r) => r.t1)
  const firstFailure = ends.length ? Math.min(...ends) : null
  const successes = hit.filter((r) => r.ok && (firstFailure === null || r.t1 > firstFailure)).map((r) => r.t1)
  /** @type {Record<string, number>} */
  const codes = {}
  for (const r of failed) {
    const key = r.cause ? `${r.code}<-${r.cause}` : String(r.code)
    codes[key] = (codes[key] || 0) + 1
  }
  const durations = after.map((r) => r.t1 - r.t0)
  return {
    calls: hit.length,
    failures: failed.length,
    firstFailureMs: firstFailure === null ? null : firstFailure - at,
    lastFailureMs: ends.length ? Math.max(...ends) - at : null,
    firstSuccessMs: successes.length ? Math.min(...successes) - at : null,
    codes,
    slowestMs: durations.length ? Math.max(...durations) : 0,
    overDeadline: durations.filter((ms) => ms > deadlineMs).length,
    otherFailures: after.filter((r) => !r.ok && !affected(r.row)).length
  }
}

/**
 * One line for a timeline, for the test log and the report.
 * @param {string} what
 * @param {ReturnType<typeof timeline>} t
 * @returns {string}
 */
function describeTimeline (what, t) {
  const ms = (v) => (v === null ? '-' : `${(v / 1000).toFixed(1)} s`)
  return `${what}: ${t.calls} calls on the affected regions, ${t.failures} failed` +
    ` (first ${ms(t.firstFailureMs)}, last ${ms(t.lastFailureMs)} after the fault; codes ${JSON.stringify(t.codes)}),` +
    ` first success after ${ms(t.firstSuccessMs)}; slowest call ${t.slowestMs} ms, ${t.overDeadline} past the deadline;` +
    ` ${t.otherFailures} failures elsewhere`
}

module.exports = { startClientLoad, recordOf, timeline, describeTimeline }
