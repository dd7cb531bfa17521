'use strict'

const crypto = require('node:crypto')
const { createOwnTable } = require('../../lib/toggles/own-table')

const FAMILY = 'a'
const QUALIFIER = 'json'
/** Rows are `<at, 13 digits of epoch ms>-<6 random hex>`: in time order, two writers apart. */
const AT_DIGITS = 13
const MAX_SCAN = 10000

/**
 * The audit trail: one HBase row per admin write (config set/delete/rollback/import, rollout
 * changes, endpoint switches, retention, erase), with its time, actor (the name of the admin
 * credential: api/admin/credentials.js), action, target and what changed. An erase records the
 * id and range it erased and how many rows, never the erased data.
 *
 * Each record is also one app-log line (the `audit: true` line of before), written first: when the
 * table cannot be written, the line is the record, and the failure is logged beside it. The table
 * is created on first use (a handful of rows a day needs no provisioning), with a TTL.
 *
 * @typedef {{ at: number, actor: string, action: string, target: string, change?: Record<string, unknown>,
 *   ip?: string }} AuditRecord
 *
 * @param {object} options
 * @param {import('@beacon/hbase-client').HBaseClient} options.client
 * @param {string} options.table
 * @param {number|null} options.ttlSeconds how long HBase keeps a record (null: forever)
 * @param {number} options.timeoutMs
 * @param {{ info: Function, error: Function }} options.logger
 * @param {() => number} [options.now]
 */
function createAuditTrail ({ client, table, ttlSeconds, timeoutMs, logger, now = Date.now }) {
  const own = createOwnTable({ client, table, family: FAMILY, ttlSeconds, timeoutMs, kind: 'audit' })

  return {
    /**
     * Records one admin write: the app-log line, then the row. Never throws: the change it
     * records is already made.
     * @param {Omit<AuditRecord, 'at'>} record
     * @returns {Promise<AuditRecord>}
     */
    async record (record) {
      const full = { at: now(), ...record }
      logger.info({ audit: true, ...full }, `admin ${full.action}`)
      const row = String(full.at).padStart(AT_DIGITS, '0') + '-' + crypto.randomBytes(3).toString('hex')
      try {
        await own.put(row, QUALIFIER, JSON.stringify(full))
      } catch (err) {
        logger.error({ code: /** @type {any} */ (err).code, message: /** @type {Error} */ (err).message, row },
          'audit record not stored in HBase; the line above is the record')
      }
      return full
    },

    /**
     * Records of a time range, oldest first, filtered by actor and target.
     * @param {{ from: number, to: number, actor?: string|null, target?: string|null, limit?: number }} query
     * @returns {Promise<{ records: AuditRecord[], truncated: boolean }>} truncated: `limit` cut it
     */
    async query ({ from, to, actor = null, target = null, limit = 1000 }) {
      const records = []
      const scan = client.scan(table, {
        startRow: String(from).padStart(AT_DIGITS, '0'),
        stopRow: String(to).padStart(AT_DIGITS, '0'),
        caching: 1000,
        limit: MAX_SCAN,
        kind: 'audit'
      })
      try {
        for await (const row of scan) {
          const record = JSON.parse(row.cells[0].value.toString('utf8'))
          if ((actor === null || record.actor === actor) && (target === null || record.target === target)) records.push(record)
          if (records.length > limit) break
        }
      } catch (err) {
        if (/** @type {any} */ (err).code === 'HBASE_TABLE_NOT_FOUND') return { records: [], truncated: false }
        throw err
      }
      return { records: records.slice(0, limit), truncated: records.length > limit }
    }
  }
}

module.exports = { createAuditTrail }
