'use strict'

const { parseDuration, formatDuration } = require('../config/duration')
const { ACCESS_LOG_FAMILY } = require('./access-log-layout')
const { ROLLUP_FAMILY } = require('./rollup/layout')

/**
 * How long HBase keeps an access log's rows and its rollups: the TTL of the log table's family and
 * of the rollup table's. The tables hold the truth (every host shares them); the settings
 * (`retention`, `rollupRetention`) are what a new table gets and what `beacon log retention`
 * compares with. HBase counts a TTL from each cell's timestamp, the time the RegionServer took the
 * write: a row is kept at least `retention` after its entry's time (a journal replay writes later,
 * so keeps longer), hidden from reads once expired, and removed at the next major compaction.
 *
 * @param {object} options
 * @param {{ admin: { familyTtls: Function, setFamilyTtl: Function } }} options.client
 * @param {string} options.logTable
 * @param {string|null} options.rollupTable null: the log keeps no rollups
 * @param {{ retention: string, rollupRetention: string }} options.configured the sink's settings
 * @param {() => number} [options.now]
 * @param {number} [options.maxAgeMs] how long a read TTL is trusted before it is read again
 * @param {number} [options.timeout] ms per master call
 */
function createRetention ({ client, logTable, rollupTable, configured, now = Date.now, maxAgeMs = 60000, timeout }) {
  /** @type {{ at: number, ttl: Ttls }|null} */
  let cached = null
  /** @type {Promise<Ttls>|null} */
  let reading = null

  /** @returns {Promise<Ttls>} */
  async function readTtls () {
    const [log, rollups] = await Promise.all([
      client.admin.familyTtls(logTable, { timeout }),
      rollupTable ? client.admin.familyTtls(rollupTable, { timeout }) : null
    ])
    const ttl = { log: log[ACCESS_LOG_FAMILY] ?? null, rollups: rollups ? rollups[ROLLUP_FAMILY] ?? null : undefined }
    cached = { at: now(), ttl }
    return ttl
  }

  /** @returns {Promise<Ttls>} read now (one read at a time) */
  function read () {
    if (!reading) reading = readTtls().finally(() => { reading = null })
    return reading
  }

  return {
    logTable,
    rollupTable,

    /**
     * The tables' TTLs as last read, read again when older than maxAgeMs. A read that fails
     * gives the last known TTLs when there are any (the master may be failing over while the
     * RegionServers serve the query), else rejects.
     * @returns {Promise<Ttls>}
     */
    async current () {
      if (cached && now() - cached.at < maxAgeMs) return cached.ttl
      try {
        return await read()
      } catch (err) {
        if (cached) return cached.ttl
        throw err
      }
    },

    /**
     * The retention as the admin API and `beacon status` show it: per table, its TTL and what
     * the settings say.
     * @param {{ fresh?: boolean }} [how] fresh: read the tables now
     * @returns {Promise<RetentionView>}
     */
    async describe ({ fresh = false } = {}) {
      const ttl = fresh ? await read() : await this.current()
      return {
        log: {
          table: logTable,
          retention: formatDuration(ttl.log),
          seconds: ttl.log,
          configured: configured.retention
        },
        rollups: rollupTable
          ? {
              table: rollupTable,
              retention: formatDuration(ttl.rollups ?? null),
              seconds: ttl.rollups ?? null,
              configured: configured.rollupRetention
            }
          : null
      }
    },

    /**
     * Sets the tables' TTLs (each table's regions reopen with it), then reads them back.
     * @param {{ retention?: string, rollupRetention?: string }} change durations (config/duration.js)
     * @returns {Promise<RetentionView>}
     */
    async apply ({ retention, rollupRetention }) {
      if (retention !== undefined) await client.admin.setFamilyTtl(logTable, ACCESS_LOG_FAMILY, seconds(retention))
      if (rollupRetention !== undefined && rollupTable) {
        await client.admin.setFamilyTtl(rollupTable, ROLLUP_FAMILY, seconds(rollupRetention))
      }
      return this.describe({ fresh: true })
    },

    /** Drops the TTLs last read: another process of this host changed them (api/propagation.js). */
    forget () {
      cached = null
    }
  }
}

/**
 * @param {string} duration
 * @returns {number|null}
 */
function seconds (duration) {
  const value = parseDuration(duration)
  if (value === undefined) throw new RangeError('not a retention duration')
  return value
}

/**
 * Where a count's answer may miss rows: the oldest time each store surely still holds, now
 * less its TTL (a cell lives TTL from its write, which is at or after its entry's time).
 * @param {Ttls} ttl
 * @param {number} now
 * @returns {{ rows: number|null, rollups: number|null }} epoch ms; null: kept forever
 */
function horizons (ttl, now) {
  return {
    rows: ttl.log === null ? null : now - ttl.log * 1000,
    rollups: ttl.rollups == null ? null : now - ttl.rollups * 1000
  }
}

/**
 * @typedef {{ log: number|null, rollups: number|null|undefined }} Ttls seconds; null: forever;
 *   rollups undefined: no rollup table
 * @typedef {{ log: { table: string, retention: string, seconds: number|null, configured: string },
 *   rollups: { table: string, retention: string, seconds: number|null, configured: string }|null }} RetentionView
 */

module.exports = { createRetention, horizons }
