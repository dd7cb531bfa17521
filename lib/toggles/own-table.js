'use strict'

/**
 * A small table of beacon's own (the audit trail, the config history) that no setup script
 * provisions: created by the first write that finds it missing, with one family and a TTL.
 * Several processes may race to create it; the losers' "exists" is success.
 *
 * @param {object} options
 * @param {import('@beacon/hbase-client').HBaseClient} options.client
 * @param {string} options.table
 * @param {string} options.family
 * @param {number|null} options.ttlSeconds how long HBase keeps a cell (null: forever)
 * @param {number} options.timeoutMs one call's deadline (the creation gets four)
 * @param {string} options.kind what its calls count under in the client's traffic
 * @returns {{ put: (row: string, qualifier: string, value: string) => Promise<void>,
 *   putMany: (rows: Array<{ row: string, qualifier: string, value: string }>) => Promise<void> }}
 */
function createOwnTable ({ client, table, family, ttlSeconds, timeoutMs, kind }) {
  /** @type {Promise<void>|null} */
  let creating = null

  function ensure () {
    creating ??= client.admin.createTable(table, { families: [family], ttl: ttlSeconds, timeout: timeoutMs * 4 })
      .catch((/** @type {any} */ err) => { if (err.code !== 'HBASE_TABLE_EXISTS') throw err })
      .finally(() => { creating = null })
    return creating
  }

  return {
    /** Many rows in one multi-put; throws the first error left after the table exists. */
    async putMany (rows) {
      const puts = rows.map(({ row, qualifier, value }) => ({ row, cells: { [family]: { [qualifier]: value } } }))
      let results = await client.multiPut(table, puts, { timeout: timeoutMs, kind })
      if (results.some((r) => /** @type {any} */ (r)?.code === 'HBASE_TABLE_NOT_FOUND')) {
        await ensure()
        results = await client.multiPut(table, puts, { timeout: timeoutMs, kind })
      }
      const failed = results.find((r) => r !== null)
      if (failed) throw failed
    },

    async put (row, qualifier, value) {
      const cells = { [family]: { [qualifier]: value } }
      try {
        await client.put(table, row, cells, { timeout: timeoutMs, kind })
      } catch (err) {
        if (/** @type {any} */ (err).code !== 'HBASE_TABLE_NOT_FOUND') throw err
        await ensure()
        await client.put(table, row, cells, { timeout: timeoutMs, kind })
      }
    }
  }
}

module.exports = { createOwnTable }
