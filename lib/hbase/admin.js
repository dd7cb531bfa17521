'use strict'

const { HBaseError, badArgument } = require('./errors')
const { tableNameProto, regionContains } = require('./meta')
const { toBytes, toNumber } = require('./cells')
const { listRegions } = require('./region-op')

const PROCEDURE_RUNNING = 1
const PROCEDURE_FINISHED = 2
const ADMIN_TIMEOUT = 120000

/**
 * Master operations the setup scripts and tests need: create/delete tables (with pre-split
 * regions), split and move regions. Each waits until the master's procedure has finished.
 * @param {import('./region-op').Core} core the client's pool, locator, retry policy and options
 * @param {<T>(operation: () => Promise<T>) => Promise<T>} run runs one operation under the
 *   client's lifecycle (refused once the client is closed, counted as in flight meanwhile)
 */
function createAdmin (core, run) {
  const { pool, policy, locator, options } = core
  /** @type {string|null} */
  let master = null

  /**
   * @param {number} deadline
   * @returns {Promise<string>}
   */
  async function findMaster (deadline) {
    if (master) return master
    let lastError
    for (const address of options.bootstrap) {
      try {
        const res = await pool.call(address, 'ClientMetaService', 'GetActiveMaster', {}, policy.rpcTimeout(deadline))
        if (res.serverName) {
          master = `${res.serverName.hostName}:${res.serverName.port}`
          return master
        }
      } catch (err) {
        lastError = err
      }
    }
    throw new HBaseError('HBASE_META_UNAVAILABLE', `no bootstrap server knows the active master: ${lastError ? lastError.message : 'none elected'}`, { retryable: true, cause: lastError })
  }

  /**
   * @param {string} method MasterService method
   * @param {object} request
   * @param {number} deadline
   * @returns {Promise<any>}
   */
  async function callMaster (method, request, deadline) {
    return policy.retry(`master ${method}`, deadline, async () => {
      const address = await findMaster(deadline)
      try {
        return await pool.call(address, 'MasterService', method, request, policy.rpcTimeout(deadline))
      } catch (err) {
        if (err.code === 'HBASE_CONNECTION' || err.code === 'HBASE_CALL_TIMEOUT') master = null
        throw err
      }
    })
  }

  /**
   * @param {number} procId
   * @param {string} what
   * @param {number} deadline
   * @returns {Promise<void>}
   */
  async function waitProcedure (procId, what, deadline) {
    for (let n = 0; ; n++) {
      const res = await callMaster('getProcedureResult', { procId }, deadline)
      if (res.state === PROCEDURE_FINISHED) {
        if (res.exception) {
          const ex = res.exception.genericException || {}
          const simple = String(ex.className || '').split('.').pop()
          const code = simple === 'TableExistsException' ? 'HBASE_TABLE_EXISTS' : simple === 'TableNotFoundException' ? 'HBASE_TABLE_NOT_FOUND' : 'HBASE_PROCEDURE_FAILED'
          throw new HBaseError(code, `${what} failed: ${simple}: ${ex.message || ''}`, { remoteClass: ex.className })
        }
        return
      }
      if (res.state !== PROCEDURE_RUNNING) throw new HBaseError('HBASE_PROCEDURE_FAILED', `${what}: master does not know procedure ${procId}`)
      if (Date.now() >= deadline) throw new HBaseError('HBASE_TIMEOUT', `${what} still running at its deadline`, { retryable: true })
      await policy.sleep(Math.min(500, 20 * (n + 1)))
    }
  }

  return {
    /**
     * Creates a table, optionally pre-split; resolves once its regions are open.
     * @param {string} table "name" or "namespace:name"
     * @param {{ families: string[], splits?: Array<Buffer|string>, maxVersions?: number, timeout?: number }} spec
     * @returns {Promise<void>}
     */
    createTable: (table, spec) => run(async () => {
      if (!spec || !Array.isArray(spec.families) || spec.families.length === 0) throw badArgument('createTable needs at least one column family')
      const { families, splits = [], maxVersions, timeout = ADMIN_TIMEOUT } = spec
      const deadline = Date.now() + timeout
      const attributes = maxVersions ? [{ first: Buffer.from('VERSIONS'), second: Buffer.from(String(maxVersions)) }] : []
      const res = await callMaster('CreateTable', {
        tableSchema: {
          tableName: tableNameProto(table),
          columnFamilies: families.map((f) => ({ name: Buffer.from(f), attributes }))
        },
        splitKeys: splits.map((s) => toBytes(s, 'split key'))
      }, deadline)
      await waitProcedure(toNumber(res.procId), `create table ${table}`, deadline)
      locator.invalidateTable(table)
    }),

    /**
     * Disables and deletes a table.
     * @param {string} table
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<void>}
     */
    deleteTable: (table, { timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const deadline = Date.now() + timeout
      const tableName = tableNameProto(table)
      try {
        const disabled = await callMaster('DisableTable', { tableName }, deadline)
        await waitProcedure(toNumber(disabled.procId), `disable table ${table}`, deadline)
      } catch (err) {
        if (err.remoteClass === undefined || !/TableNotEnabledException/.test(err.remoteClass)) throw err
      }
      const deleted = await callMaster('DeleteTable', { tableName }, deadline)
      await waitProcedure(toNumber(deleted.procId), `delete table ${table}`, deadline)
      locator.invalidateTable(table)
    }),

    /**
     * Whether the table exists (enabled or not).
     * @param {string} table
     * @returns {Promise<boolean>}
     */
    tableExists: (table) => run(async () => {
      const res = await callMaster('GetTableDescriptors', { tableNames: [tableNameProto(table)] }, Date.now() + options.operationTimeout)
      return (res.tableSchema || []).length > 0
    }),

    /**
     * Splits the region holding `splitRow` at that row; resolves when the daughters are open.
     * @param {string} table
     * @param {Buffer|string} splitRow
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<void>}
     */
    splitRegion: (table, splitRow, { timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const deadline = Date.now() + timeout
      const key = toBytes(splitRow, 'split row')
      const regions = await listRegions(core, table)
      const region = regions.find((r) => regionContains(r, key))
      if (!region) throw new HBaseError('HBASE_REGION_UNAVAILABLE', `no region of ${table} holds the split row`, { retryable: true })
      const res = await callMaster('SplitRegion', { regionInfo: region.info, splitRow: key }, deadline)
      await waitProcedure(toNumber(res.procId), `split ${region.name}`, deadline)
    }),

    /**
     * Asks the master to move (close and reopen) a region; without a destination it picks one,
     * which on a single RegionServer reopens the region in place.
     * @param {string} regionName full region name, as in `client.regions()`
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<void>}
     */
    moveRegion: (regionName, { timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const encoded = /\.([0-9a-f]{32})\.$/.exec(regionName)
      if (!encoded) throw badArgument(`"${regionName}" is not a full region name`)
      await callMaster('MoveRegion', { region: { type: 2, value: Buffer.from(encoded[1]) } }, Date.now() + timeout)
    }),

    /**
     * Forgets the cached master address (tests restart HBase).
     * @returns {void}
     */
    forgetMaster () {
      master = null
    }
  }
}

module.exports = { createAdmin }
