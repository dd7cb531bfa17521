'use strict'

const path = require('node:path')
const { createFileSink } = require('./file-sink')
const { createHBaseSink } = require('./hbase-sink')
const { createRollupMarker } = require('./rollup/marker')
const { createRoller } = require('./rollup/roller')
const { ERRORS } = require('../lib/errors')
const { SINK_DEFAULTS } = require('../config/defaults')
const { SinkSet } = require('./sink-set')

/**
 * What an HBase sink's calls count under in the HBase client's traffic (packages/hbase-client/lib/traffic.js):
 * the access-log batches (and journal replays, both with the rollup marks that ride along), the
 * rollup marks written on their own (no batch was queued to take them, or they failed), and
 * the rollup job's reads and writes.
 */
const KINDS = Object.freeze({ log: 'log', mark: 'rollup-mark', rollup: 'rollup' })

/** How many of the sink's flush intervals a rollup mark waits for a queued batch to take it along, at most. */
const RIDE_INTERVALS = 2

/**
 * One sink's settings (config/schema.js, `sinks`), as createSinks() reads them.
 * @typedef {{ type: 'file', path: string, rotateSize?: string|number, rotateFrequency?: 'daily'|'hourly'|number,
 *   keepFiles?: number, maxPendingLines?: number, durability?: 'memory'|'process'|'host' }} FileSinkSettings
 * @typedef {{ type: 'hbase', table: string, journalDir?: string, rollups?: boolean, rollupTable?: string,
 *   privacy?: unknown, retention?: unknown, rollupRetention?: unknown, flushIntervalMs?: number }
 *   & Record<string, unknown>} HBaseSinkSettings the rest go to createHBaseSink() as they are
 * @typedef {FileSinkSettings|HBaseSinkSettings} SinkSettings
 */

/**
 * Builds the access-log sinks of one process from their settings (the root factory passes the
 * ones some endpoint logs to). Every sink keeps one contract (sink-set.js, Sink).
 *
 * @param {Record<string, object>} sinkSettings name → `{ type: 'file', path, rotateSize,
 *   rotateFrequency, keepFiles, maxPendingLines }` or `{ type: 'hbase', table, buckets,
 *   batchSize, flushIntervalMs, maxQueue, journalMaxBuffered, journalDir, overload, retryMaxMs }`;
 *   paths absolute (a relative one is taken against stateDir)
 * @param {object} context
 * @param {import('@beacon/hbase-client').HBaseClient} [context.client] needed by hbase sinks
 * @param {string} context.stateDir
 * @param {string} context.writerId unique per process among all writers of a table/journal
 * @param {string} [context.workerTag] cluster worker tag, part of file sink names ("w1")
 * @param {import('pino').Logger} [context.logger]
 * @param {{ now(): number }} [context.clock]
 * @param {import('./group-commit').GroupCommit} [context.groupCommit] the process's: durable sinks
 *   enlist in it (without one, each entry is written on its own)
 * @returns {SinkSet}
 */
function createSinks (sinkSettings, { client, stateDir, writerId, workerTag, logger, clock, groupCommit }) {
  const sinks = new SinkSet()
  // The caller's are validated settings (config/schema.js) typed `object` (api/public/endpoints.js).
  const specs = /** @type {Record<string, SinkSettings>} */ (sinkSettings)
  const hbaseCount = Object.values(specs).filter((s) => s && s.type === 'hbase').length
  /** @param {string} p */
  const resolve = (p) => (path.isAbsolute(p) ? p : path.resolve(stateDir || process.cwd(), p))
  try {
    for (const [name, spec] of Object.entries(specs)) {
      const sinkLogger = logger && typeof logger.child === 'function' ? logger.child({ sink: name }) : logger
      if (spec.type === 'file') {
        sinks.set(name, createFileSink({
          path: resolve(spec.path),
          rotateSize: spec.rotateSize,
          rotateFrequency: spec.rotateFrequency,
          keepFiles: spec.keepFiles,
          ...(spec.maxPendingLines ? { maxPendingLines: spec.maxPendingLines } : {}),
          ...(spec.durability ? { durability: spec.durability } : {}),
          ...(groupCommit ? { groupCommit } : {}),
          workerTag,
          logger: sinkLogger
        }))
      } else if (spec.type === 'hbase') {
        if (!client) {
          throw new ERRORS.INVALID_OPTION(`access-log sink "${name}" writes to HBase but no client was given`)
        }
        // privacy is applied before an entry reaches a sink (logging/privacy.js), not by the sink;
        // the retentions are the tables' TTLs (retention.js).
        const { type, journalDir, rollups, rollupTable, privacy, retention, rollupRetention, ...rest } = spec
        // Two HBase sinks of one process must not share row keys or journal names.
        const sinkWriterId = hbaseCount > 1 ? `${writerId}-${name}` : writerId
        // The rollups' marks (rollup/marker.js); the job that counts them is createRollers()'.
        // Marks ride with the log's next batch when one is queued (it leaves within a flush
        // interval); twice that, and they go on their own.
        const rollup = rollups === false
          ? {}
          : {
              rollupMarker: createRollupMarker({
                client: client.withKind(KINDS.mark),
                rollupTable: rollupTable || SINK_DEFAULTS.hbase.rollupTable,
                logTable: spec.table,
                writerId: sinkWriterId,
                rideMs: RIDE_INTERVALS * (spec.flushIntervalMs || SINK_DEFAULTS.hbase.flushIntervalMs),
                logger: sinkLogger
              })
            }
        sinks.set(name, createHBaseSink({
          ...rest,
          client: client.withKind(KINDS.log),
          journalDir: resolve(journalDir || path.join('journal', name)),
          writerId: sinkWriterId,
          logger: sinkLogger,
          ...(clock ? { clock } : {}),
          ...(groupCommit ? { groupCommit } : {}),
          ...rollup
        }))
      } else {
        throw new ERRORS.INVALID_OPTION(
          `access-log sink "${name}" has unknown type "${/** @type {{ type: unknown }} */ (spec).type}"`
        )
      }
    }
  } catch (err) {
    for (const sink of sinks.values()) sink.close()
    throw err
  }

  return sinks
}

/**
 * The rollup job of these sinks (rollup/roller.js): one roller per HBase sink that keeps rollups,
 * not started. It runs in one process per host, of its own (api/rollup-job.js); any number of
 * them give the same counts, only the work is repeated.
 * @param {Record<string, any>} sinkSettings name → sink settings, as createSinks() takes them
 * @param {object} context
 * @param {import('@beacon/hbase-client').HBaseClient} context.client
 * @param {import('pino').Logger} [context.logger]
 * @param {{ now(): number }} [context.clock]
 * @param {{ maxGroups?: number, maxAttempts?: number, spillDir?: string }} [context.counting] how a
 *   minute is counted (rollup/roller.js): groups in memory, attempts before it is parked, where
 *   the rest of the groups wait
 * @returns {Map<string, ReturnType<typeof createRoller>>} sink name → its roller
 */
function createRollers (sinkSettings, { client, logger, clock, counting = {} }) {
  const rollers = new Map()
  for (const [name, spec] of Object.entries(sinkSettings)) {
    if (!spec || spec.type !== 'hbase' || spec.rollups === false) continue
    rollers.set(name, createRoller({
      client: client.withKind(KINDS.rollup),
      logTable: spec.table,
      rollupTable: spec.rollupTable || SINK_DEFAULTS.hbase.rollupTable,
      buckets: spec.buckets || 16,
      logger: logger && typeof logger.child === 'function' ? logger.child({ sink: name }) : logger,
      ...counting,
      ...(clock ? { clock } : {})
    }))
  }
  return rollers
}

module.exports = { createSinks, createRollers }
