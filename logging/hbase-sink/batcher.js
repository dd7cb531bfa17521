'use strict'

const { ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } = require('../access-log-layout')
const { mayHaveApplied } = require('@beacon/hbase-client')
const { rowOf, valueOf, ownBytes } = require('./journal/record-bytes')

/**
 * @typedef {object} Item one accepted entry on its way to HBase
 * @property {string} key row key, fixed at accept time
 * @property {Buffer} line its record, encoded at accept time (journal/record-bytes.js): the put sends
 *   views of these bytes
 * @property {number} at accepted (clock ms)
 * @property {number|null} firstTry
 * @property {number} attempts
 * @property {number} retryAt
 * @property {number} gen settle-barrier generation
 * @property {boolean} spilled handed to the journal (settled)
 * @property {boolean} [unconfirmed] a write of it failed in a way that may have applied it
 * @property {import('./journal/wal').Segment|null} wal its write-ahead-log segment, or null
 */

/** @typedef {Error & { code?: string, retryable?: boolean }} PutFailure why a put did not go through (an HBaseError) */

/**
 * The live path to HBase: a queue sent in batches of up to `batchSize` in one multiPut, when a
 * batch is full or `flushIntervalMs` after its oldest entry, up to `maxInFlight` at a time.
 * Per-entry failures that may pass (a region moving) are retried with backoff for up to
 * `retryMaxMs`, then spilled; failures that will not pass (no such table) are spilled at once
 * and counted in `failed`. A batch that fails as a whole with a retryable error means HBase is
 * down: with `overload: 'spill'` the batcher goes 'down' and everything held goes to the
 * journal until a replay write succeeds (health.js markUp); in shed mode entries stay queued and retry.
 */
class Batcher {
  /**
   * @param {object} deps
   * @param {Readonly<import('./options').SinkOptions>} deps.opts
   * @param {import('./ledger').Ledger} deps.ledger
   * @param {(item: Item) => void} deps.spill journals one item (and settles it)
   * @param {(item: Item) => void} deps.delivered the item is in HBase
   * @param {import('./health').Health} deps.health whether HBase answers (it reports here too)
   * @param {() => void} deps.healthy a live write went through
   */
  constructor ({ opts, ledger, spill, delivered, health, healthy }) {
    this.opts = opts
    this.ledger = ledger
    this.hooks = { spill, delivered, healthy }
    this.health = health
    health.listen({
      // Everything held in memory goes to the journal too: it would only wait for the same HBase.
      down: () => { for (const item of this.takeQueued()) this.hooks.spill(item) },
      up: () => this.pump()
    })
    /** @type {Item[]} waiting to be sent, oldest first */
    this.queue = []
    /** @type {Item[]} waiting for their retry time */
    this.retrying = []
    /** @type {Set<Item[]>} batches in flight */
    this.inFlight = new Set()
    this.inFlightEntries = 0
    this.forcing = 0 // > 0 while a flush or close wants partial batches sent now (forceWhile)
    /** @type {{ flush: NodeJS.Timeout|null, retry: NodeJS.Timeout|null, pumpScheduled: boolean }} */
    this.timers = { flush: null, retry: null, pumpScheduled: false }
    /** Whether a batch is already queued to go (within a flush interval): marks can wait to ride in it. */
    this.writeAhead = () => !this.health.down && this.queue.length > 0
  }

  /** Entries held in memory and not yet sent. */
  get queueDepth () {
    return this.queue.length + this.retrying.length
  }

  /** Entries accepted and not yet written or journaled (the maxQueue bound). */
  get pending () {
    return this.queueDepth + this.inFlightEntries
  }

  /** @param {Item} item */
  push (item) {
    this.queue.push(item)
    if (this.queue.length >= this.opts.batchSize) this.schedulePump()
    else if (!this.timers.flush) this.timers.flush = setTimeout(() => this.onFlushTimer(), this.opts.flushIntervalMs)
  }

  schedulePump () {
    if (this.timers.pumpScheduled) return
    this.timers.pumpScheduled = true
    setImmediate(() => {
      this.timers.pumpScheduled = false
      this.pump()
    })
  }

  onFlushTimer () {
    this.timers.flush = null
    this.pump()
  }

  /** Sends every batch that is due, up to maxInFlight; re-arms the interval timer. */
  pump () {
    if (this.health.down) return
    const { opts, queue } = this
    const now = opts.clock.now()
    while (queue.length && this.inFlight.size < opts.maxInFlight) {
      const due = queue.length >= opts.batchSize || this.forcing > 0 || now - queue[0].at >= opts.flushIntervalMs
      if (!due) break
      this.send(queue.splice(0, opts.batchSize))
    }
    if (queue.length && !this.timers.flush && this.inFlight.size < opts.maxInFlight) {
      const wait = Math.max(1, Math.min(opts.flushIntervalMs, queue[0].at + opts.flushIntervalMs - now))
      this.timers.flush = setTimeout(() => this.onFlushTimer(), wait)
    }
  }

  /**
   * Sends partial batches and due-later retries now, and keeps doing so until `settled` ends
   * (a flush or a close waiting for everything held to be written).
   * @template T
   * @param {Promise<T>} settled
   * @returns {Promise<T>}
   */
  async forceWhile (settled) {
    this.forcing++
    try {
      this.sendNow()
      return await settled
    } finally {
      this.forcing--
    }
  }

  /** @param {Item[]} items */
  async send (items) {
    const { opts, ledger } = this
    const now = opts.clock.now()
    for (const item of items) {
      if (item.firstTry === null) item.firstTry = now
      item.attempts++
    }
    this.inFlight.add(items)
    this.inFlightEntries += items.length
    ledger.batchSent()
    const results = await putRecords(opts, items, this.writeAhead)
    this.inFlight.delete(items)
    let ok = 0
    let down = true
    /** @type {Array<[Item, PutFailure]>} */
    const failures = []
    for (let i = 0; i < items.length; i++) {
      const item = items[i]
      if (item.spilled) continue // close() journaled it while in flight
      this.inFlightEntries--
      const err = results[i]
      if (!err) {
        ok++
        this.hooks.delivered(item)
      } else {
        if (mayHaveApplied(err)) item.unconfirmed = true
        failures.push([item, err])
        if (!err.retryable) down = false
      }
    }
    if (ok > 0) this.hooks.healthy()
    if (failures.length) {
      ledger.error(failures[0][1].code)
      if (ok === 0 && down && opts.overload === 'spill') {
        this.health.markDown(failures[0][1])
        for (const [item] of failures) this.hooks.spill(item)
      } else {
        for (const [item, err] of failures) this.onFailure(item, err)
      }
    }
    this.pump()
  }

  /** @param {Item} item @param {PutFailure} err */
  onFailure (item, err) {
    const { opts } = this
    if (!err.retryable) {
      this.ledger.refused()
      this.hooks.spill(item)
      return
    }
    const now = opts.clock.now()
    // Down (another batch found out): retrying would only wait for the same HBase.
    if (this.health.down || now - /** @type {number} */ (item.firstTry) >= opts.retryMaxMs) {
      this.hooks.spill(item)
      return
    }
    item.line = ownBytes(item.line) // it may wait for long: its slab need not
    const backoff = Math.min(opts.retryMaxBackoffMs, opts.retryBaseMs * 2 ** (item.attempts - 1))
    item.retryAt = now + backoff * (0.75 + Math.random() * 0.5)
    this.retrying.push(item)
    this.armRetryTimer()
  }

  armRetryTimer () {
    if (this.timers.retry || this.retrying.length === 0) return
    let next = Infinity
    for (const item of this.retrying) if (item.retryAt < next) next = item.retryAt
    this.timers.retry = setTimeout(() => this.onRetryTimer(), Math.max(1, next - this.opts.clock.now()))
  }

  onRetryTimer () {
    this.timers.retry = null
    const now = this.opts.clock.now()
    /** @type {Item[]} */
    const due = []
    /** @type {Item[]} */
    const later = []
    for (const item of this.retrying) (this.forcing > 0 || item.retryAt <= now ? due : later).push(item)
    this.retrying = later
    if (due.length) this.queue = due.concat(this.queue) // (a spread could exceed the argument limit)
    this.armRetryTimer()
    this.pump()
  }

  /** Sends partial batches and due-later retries now (flush and close). */
  sendNow () {
    if (this.retrying.length) {
      if (this.timers.retry) clearTimeout(this.timers.retry)
      this.onRetryTimer()
    }
    this.pump()
  }

  /** @returns {Item[]} the queued and retrying items, removed from memory */
  takeQueued () {
    const held = this.queue.splice(0, this.queue.length).concat(this.retrying)
    this.retrying = []
    return held
  }

  /**
   * Everything not yet written, in flight included (close(): if an in-flight write lands after
   * all, the replay rewrites the same row), and stops the timers.
   * @returns {Item[]}
   */
  takeAll () {
    const left = this.takeQueued()
    for (const batch of this.inFlight) {
      for (const item of batch) {
        if (!item.spilled) {
          this.inFlightEntries--
          item.unconfirmed = true // its write may still land
          left.push(item)
        }
      }
    }
    if (this.timers.flush) clearTimeout(this.timers.flush)
    if (this.timers.retry) clearTimeout(this.timers.retry)
    this.timers.flush = this.timers.retry = null
    return left
  }

  /** @returns {number} accept time of the oldest entry not yet written, or Infinity */
  oldestAt () {
    let oldest = this.queue.length ? this.queue[0].at : Infinity
    for (const item of this.retrying) if (item.at < oldest) oldest = item.at
    for (const batch of this.inFlight) if (batch.length && batch[0].at < oldest) oldest = batch[0].at
    return oldest
  }
}

/**
 * A record's put: a live entry's (line: views of its encoded bytes) or a replayed one's (value:
 * its JSON, as read back from the journal).
 * @param {{ key: string, line?: Buffer, value?: string }} item
 * @returns {{ row: string|Buffer, cells: Record<string, Record<string, string|Buffer|undefined>> }}
 */
function toPut (item) {
  const { key, line } = item
  if (line) {
    return { row: rowOf(key, line), cells: { [ACCESS_LOG_FAMILY]: { [ACCESS_LOG_QUALIFIER]: valueOf(key, line) } } }
  }
  return { row: key, cells: { [ACCESS_LOG_FAMILY]: { [ACCESS_LOG_QUALIFIER]: item.value } } }
}

/**
 * Writes records in one multiPut and, when the sink keeps rollups, hands the keys of those HBase
 * acknowledged to the marker (../rollup/marker.js), which marks their minutes on its own: a mark
 * that fails is retried there and never makes a written row count as failed. The marks of rows
 * acknowledged earlier ride along in the same multiPut (marker.ride(): puts into the rollup
 * table, one Multi RPC with the records' when the regions share a server); their results go
 * back to the marker alone. The marks of these records wait for the next write when `ahead()`
 * says one is queued, else they are written at once. The write may wait for the event loop's
 * check phase to share a socket write with other frames (`coalesce`): no one waits on it.
 * @param {Readonly<import('./options').SinkOptions>} opts
 * @param {Array<{ key: string, line?: Buffer, value?: string }>} records
 * @param {() => boolean} [ahead] a write of the log is queued to go (within a flush interval)
 * @returns {Promise<Array<PutFailure|null>>} per record: null (written) or why not (an HBaseError: code, retryable)
 */
async function putRecords (opts, records, ahead) {
  const timeout = opts.writeTimeoutMs || undefined
  const marker = opts.rollupMarker
  const ride = marker && marker.ride ? marker.ride() : null
  const puts = /** @type {Parameters<import('@beacon/hbase-client').HBaseClient['multiPut']>[1]} */ (records.map(toPut))
  if (ride) for (const put of ride.puts) puts.push(put)
  let results
  try {
    results = await opts.client.multiPut(opts.table, puts, { timeout, coalesce: true })
  } catch (caught) {
    const err = /** @type {PutFailure} */ (caught) // the call itself failed (client closed, bad argument)
    if (ride) ride.landed(err)
    return records.map(() => err)
  }
  if (ride) {
    let err = null
    for (let i = records.length; i < results.length && !err; i++) err = results[i]
    ride.landed(err)
    results = results.slice(0, records.length)
  }
  if (marker) {
    const acked = []
    for (let i = 0; i < records.length; i++) if (!results[i]) acked.push(records[i].key)
    marker.mark(acked, timeout, ahead ? ahead() : false)
  }
  return results
}

module.exports = { Batcher, putRecords }
