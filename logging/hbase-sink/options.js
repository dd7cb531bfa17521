'use strict'

const { SINK_DEFAULTS, SINK_INTERNALS, DURABILITIES } = require('../../config/defaults')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { sizeBytes } = require('../../config/size')

/**
 * The HBase sink's options. What a user sets (buckets, batchSize, flushIntervalMs, maxQueue,
 * journalMaxBuffered, journalMaxSize, overload, durability, retryMaxMs) and the pipeline's internal knobs
 * default in config/defaults.js, once. `durable: true|false` stands for durability 'process'|'memory'.
 */
const DEFAULTS = Object.freeze({
  ...SINK_DEFAULTS.hbase,
  ...SINK_INTERNALS.hbase,
  journalFileBytes: SINK_INTERNALS.journal.maxFileBytes,
  journalRetryMs: SINK_INTERNALS.journal.retryMs,
  journalFs: null, // the journal's node:fs/promises; tests inject a failing disk
  walFs: /** @type {typeof import('node:fs')|null} */ (null), // the write-ahead log's node:fs, likewise
  // The process's group commit (../group-commit.js): entries of one turn are written to the
  // write-ahead log together, before the turn's answers go out. Without one, each on its own.
  groupCommit: /** @type {import('../group-commit').GroupCommit|null} */ (null),
  strictLedger: false, // throw when the accounting breaks (ledger.js): the property test
  // Claim the journal files of running pids too (`beacon journal replay --all`: a disk from
  // another host, where pids mean nothing); a live beacon's files would be taken from it.
  claimLiveFiles: false,
  // The rollups (../rollup/): marks the minutes of acknowledged rows (the job that counts them
  // runs in a process of its own: ../index.js createRollers). Its stats() join the sink's, under `rollup`.
  // ride(): the marks waiting, for the next write of the log to take along (rollup/marker.js).
  rollupMarker: /** @type {{ mark: (rowKeys: string[], timeout?: number, ride?: boolean) => Promise<Error|null>,
    ride?: () => import('../rollup/marker').Ride|null, flush: (timeout?: number) => Promise<Error|null>,
    close: () => void, stats: () => object } | null} */ (null)
})

/**
 * @typedef {typeof DEFAULTS & { journalMaxBytes: number, client: import('@beacon/hbase-client').HBaseClient,
 *   table: string, journalDir: string, writerId: string, clock: { now(): number },
 *   logger?: import('./types').Logger }} SinkOptions
 */

/**
 * Defaults filled in, every option checked; an invalid one throws INVALID_OPTION naming it.
 * @param {object} options
 * @returns {Readonly<SinkOptions>}
 */
function resolveSinkOptions (options) {
  // What the checks below hold it to; until they ran, any field may be of any type.
  const given = /** @type {{ durability?: unknown, durable?: unknown }} */ (options)
  const alias = given.durability === undefined && typeof given.durable === 'boolean'
    ? { durability: given.durable ? 'process' : 'memory' }
    : {}
  const o = /** @type {SinkOptions} */ ({ ...DEFAULTS, ...options, ...alias })
  /** @param {string} why @returns {never} */
  const bad = (why) => { throw new ERRORS.INVALID_OPTION(`hbase sink: ${why}`) }
  /** @param {string} name @param {number} min */
  const integer = (name, min) => {
    const v = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (o))[name]
    if (!Number.isInteger(v) || /** @type {number} */ (v) < min) bad(`${name} must be an integer >= ${min}`)
  }
  if (!o.client || typeof o.client.multiPut !== 'function') bad('client must be an HBase client')
  if (typeof o.table !== 'string' || o.table.length === 0) bad('table is required')
  if (!isSafeName(o.writerId, 64)) bad('writerId must match [A-Za-z0-9_-]{1,64}')
  if (typeof o.journalDir !== 'string') bad('journalDir is required')
  if (o.overload !== 'spill' && o.overload !== 'shed') bad("overload must be 'spill' or 'shed'")
  if (given.durable !== undefined && typeof given.durable !== 'boolean') bad('durable must be a boolean')
  if (!DURABILITIES.includes(o.durability)) bad(`durability must be one of ${DURABILITIES.join(', ')}`)
  if (typeof o.strictLedger !== 'boolean') bad('strictLedger must be a boolean')
  if (typeof o.claimLiveFiles !== 'boolean') bad('claimLiveFiles must be a boolean')
  if (o.durability !== 'memory' && o.writerId.length > 60) bad('writerId must be at most 60 chars in a durable mode')
  if (!Number.isInteger(o.buckets) || o.buckets < 1 || o.buckets > 256) bad('buckets must be 1..256')
  for (const name of [
    'batchSize', 'flushIntervalMs', 'maxQueue', 'maxInFlight', 'closeTimeoutMs', 'probeSize', 'claimIntervalMs',
    'journalFileBytes', 'journalMaxBuffered', 'journalRetryMs', 'maxReplayFileBytes'
  ]) {
    integer(name, 1)
  }
  integer('replayReadBytes', 4096)
  for (const name of [
    'retryMaxMs', 'writeTimeoutMs', 'retryBaseMs', 'retryMaxBackoffMs', 'replayBaseMs', 'replayMaxBackoffMs'
  ]) {
    integer(name, 0)
  }
  try {
    o.journalMaxBytes = sizeBytes(o.journalMaxSize)
  } catch (err) {
    bad(`journalMaxSize: ${/** @type {Error} */ (err).message}`)
  }
  if (o.rollupMarker !== null && typeof o.rollupMarker?.mark !== 'function') bad('rollupMarker must have mark()')
  if (!o.clock) o.clock = Date
  if (typeof o.clock.now !== 'function') bad('clock must have now()')
  return Object.freeze(o)
}

module.exports = { DEFAULTS, resolveSinkOptions }
