'use strict'

const { HBaseError, badArgument } = require('./errors')
const { tableNameProto, regionContains } = require('./meta')
const { toBytes, toNumber } = require('./cells')
const { listRegions } = require('./region-op')
const { ADDRESS } = require('./pool')
const { ADMIN_KIND } = require('./traffic')

/** A column family's TTL attribute, and the value that means none (Integer.MAX_VALUE seconds: HConstants.FOREVER). */
const TTL = 'TTL'
const FOREVER_SECONDS = 2147483647

const PROCEDURE_RUNNING = 1
const PROCEDURE_FINISHED = 2
const ADMIN_TIMEOUT = 120000

/**
 * @typedef {{ first: Buffer, second: Buffer }} BytesBytesPair
 * @typedef {{ name: Buffer, attributes?: BytesBytesPair[] }} ColumnFamilySchema the fields of one read here
 * @typedef {{ columnFamilies?: ColumnFamilySchema[] }} TableSchema the fields of one read here
 */

/** RegionSpecifier type: the region is named by its encoded name (the hash at the end of its full name). */
const ENCODED_REGION_NAME = 2

/**
 * The encoded name of a region, from its full name ("table,start,id.<encoded>.").
 * @param {string} regionName
 * @returns {Buffer}
 */
function encodedName (regionName) {
  const encoded = /\.([0-9a-f]{32})\.$/.exec(String(regionName))
  if (!encoded) throw badArgument(`"${regionName}" is not a full region name`)
  return Buffer.from(encoded[1])
}

/**
 * Whether an error of a MasterService call says the address asked is not (or no longer) the
 * active master: gone, silent, or a backup / restarted master ("ServerNotRunningYet"), so the
 * bootstrap servers must be asked again. A PleaseHoldException is the right master still
 * initializing: it is kept.
 * @param {Error & { code?: string, relocate?: boolean }} err
 * @returns {boolean}
 */
function notTheActiveMaster (err) {
  return err.code === 'HBASE_CONNECTION' || err.code === 'HBASE_CALL_TIMEOUT' || err.relocate === true
}

/**
 * Master operations the setup scripts and tests need: create/delete tables (with pre-split
 * regions), read and set column families' TTLs, split, merge and move regions, switch the
 * balancer. Each waits until the master's procedure has finished. The active master is found
 * through the bootstrap servers (ClientMetaService.GetActiveMaster) and found again when it
 * fails over.
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
    /** @type {Error|undefined} */
    let lastError
    for (const address of options.bootstrap) {
      try {
        const res = await pool.call(address, 'ClientMetaService', 'GetActiveMaster', {},
          policy.rpcTimeout(deadline), ADMIN_KIND)
        if (res.serverName) {
          master = `${res.serverName.hostName}:${res.serverName.port}`
          return master
        }
      } catch (err) {
        lastError = /** @type {Error} */ (err)
      }
    }
    throw new HBaseError(
      'HBASE_META_UNAVAILABLE',
      `no bootstrap server knows the active master: ${lastError ? lastError.message : 'none elected'}`,
      { retryable: true, cause: lastError }
    )
  }

  /**
   * @param {string} method MasterService method
   * @param {object} request
   * @param {number} deadline
   * @param {{ blocking?: boolean }} [how] blocking: the master answers only when the work is
   *   done (MoveRegion, a synchronous balancer switch), so the call may take until the deadline
   *   instead of rpcTimeout; sending it again because it was slow would start the work twice
   * @returns {Promise<any>}
   */
  async function callMaster (method, request, deadline, { blocking = false } = {}) {
    return policy.retry(`master ${method}`, deadline, async () => {
      const address = await findMaster(deadline)
      const timeout = blocking ? Math.max(1, deadline - Date.now()) : policy.rpcTimeout(deadline)
      try {
        return await pool.call(address, 'MasterService', method, request, timeout, ADMIN_KIND)
      } catch (err) {
        const failure = /** @type {Parameters<typeof notTheActiveMaster>[0]} */ (err)
        if (notTheActiveMaster(failure) && master === address) master = null
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
          const code =
            simple === 'TableExistsException'
              ? 'HBASE_TABLE_EXISTS'
              : simple === 'TableNotFoundException'
                ? 'HBASE_TABLE_NOT_FOUND'
                : 'HBASE_PROCEDURE_FAILED'
          throw new HBaseError(code, `${what} failed: ${simple}: ${ex.message || ''}`, { remoteClass: ex.className })
        }
        return
      }
      if (res.state !== PROCEDURE_RUNNING) {
        throw new HBaseError('HBASE_PROCEDURE_FAILED', `${what}: master does not know procedure ${procId}`)
      }
      if (Date.now() >= deadline) {
        throw new HBaseError('HBASE_TIMEOUT', `${what} still running at its deadline`, { retryable: true })
      }
      await policy.sleep(Math.min(500, 20 * (n + 1)))
    }
  }

  /**
   * The full server name (host, port, start code) of a RegionServer, asked of the server itself.
   * @param {string} address "host:port"
   * @param {number} deadline
   * @returns {Promise<object>} protobuf ServerName
   */
  async function serverName (address, deadline) {
    if (!ADDRESS.test(String(address))) throw badArgument(`destination "${address}" must be a RegionServer "host:port"`)
    const res = await policy.retry(`GetServerInfo of ${address}`, deadline, () =>
      pool.call(address, 'AdminService', 'GetServerInfo', {}, policy.rpcTimeout(deadline), ADMIN_KIND))
    return res.serverInfo.serverName
  }

  /**
   * The schema of one table as the master has it.
   * @param {string} table
   * @param {number} deadline
   * @returns {Promise<TableSchema>} protobuf TableSchema
   */
  async function tableSchema (table, deadline) {
    const res = await callMaster('GetTableDescriptors', { tableNames: [tableNameProto(table)] }, deadline)
    const schema = (res.tableSchema || [])[0]
    if (!schema) throw new HBaseError('HBASE_TABLE_NOT_FOUND', `table ${table} does not exist`)
    return schema
  }

  return {
    /**
     * Creates a table, optionally pre-split; resolves once its regions are open.
     * @param {string} table "name" or "namespace:name"
     * @param {{ families: string[], splits?: Array<Buffer|string>, maxVersions?: number, ttl?: number|null,
     *   attributes?: Record<string, string>, timeout?: number }} spec ttl: seconds HBase keeps every
     *   family's cells (from their timestamps); null or absent: forever. attributes: more family
     *   attributes as HBase names them (DATA_BLOCK_ENCODING, COMPRESSION, BLOCKSIZE…), for every family
     * @returns {Promise<void>}
     */
    createTable: (table, spec) => run(async () => {
      if (!spec || !Array.isArray(spec.families) || spec.families.length === 0) {
        throw badArgument('createTable needs at least one column family')
      }
      const { families, splits = [], maxVersions, ttl = null, timeout = ADMIN_TIMEOUT } = spec
      const deadline = Date.now() + timeout
      /** @type {Array<{ first: Buffer, second: Buffer }>} */
      const attributes = maxVersions
        ? [{ first: Buffer.from('VERSIONS'), second: Buffer.from(String(maxVersions)) }]
        : []
      if (ttl !== null) attributes.push(ttlAttribute(ttl))
      attributes.push(...familyAttributes(spec.attributes))
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
      } catch (caught) {
        const err = /** @type {{ remoteClass?: string }} */ (caught)
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
      const res = await callMaster('GetTableDescriptors', { tableNames: [tableNameProto(table)] },
        Date.now() + options.operationTimeout)
      return (res.tableSchema || []).length > 0
    }),

    /**
     * The TTL of each column family of a table: seconds HBase keeps a cell after its timestamp
     * (expired cells are hidden from reads at once, removed at the next compaction); null: forever.
     * @param {string} table
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<Record<string, number|null>>} family → seconds
     */
    familyTtls: (table, { timeout = options.operationTimeout } = {}) => run(async () => {
      const schema = await tableSchema(table, Date.now() + timeout)
      return Object.fromEntries((schema.columnFamilies || []).map((f) => [f.name.toString('utf8'), ttlOf(f)]))
    }),

    /**
     * Sets the TTL of one column family of an existing table (the master's ModifyColumn: the
     * family's other attributes are kept as they are); resolves when the table's regions have
     * reopened with it. Cells older than the new TTL vanish from reads at once.
     * @param {string} table
     * @param {string} family
     * @param {number|null} ttl seconds, or null: forever
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<void>}
     */
    setFamilyTtl: (table, family, ttl, { timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const deadline = Date.now() + timeout
      const schema = await tableSchema(table, deadline)
      const current = (schema.columnFamilies || []).find((f) => f.name.toString('utf8') === family)
      if (!current) throw badArgument(`table ${table} has no column family "${family}"`)
      const attributes = (current.attributes || []).filter((a) => a.first.toString('utf8') !== TTL)
      if (ttl !== null) attributes.push(ttlAttribute(ttl))
      const res = await callMaster('ModifyColumn', {
        tableName: tableNameProto(table),
        columnFamilies: { ...current, attributes }
      }, deadline)
      await waitProcedure(toNumber(res.procId), `set the TTL of ${table}:${family}`, deadline)
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
      if (!region) {
        throw new HBaseError('HBASE_REGION_UNAVAILABLE', `no region of ${table} holds the split row`, {
          retryable: true
        })
      }
      const res = await callMaster('SplitRegion', { regionInfo: region.info, splitRow: key }, deadline)
      await waitProcedure(toNumber(res.procId), `split ${region.name}`, deadline)
    }),

    /**
     * Asks the master to move (close and reopen) a region and waits until it is open again.
     * Without `to` the master picks another server (on a single RegionServer it leaves the region
     * where it is); with `to`, the RegionServer "host:port" is asked its full server name (start
     * code included) and the region goes there.
     * @param {string} regionName full region name, as in `client.regions()`
     * @param {{ to?: string, timeout?: number }} [opts]
     * @returns {Promise<void>}
     */
    moveRegion: (regionName, { to, timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const region = { type: ENCODED_REGION_NAME, value: encodedName(regionName) }
      const deadline = Date.now() + timeout
      const destServerName = to ? await serverName(to, deadline) : undefined
      await callMaster('MoveRegion', { region, destServerName }, deadline, { blocking: true })
    }),

    /**
     * Merges adjacent regions of one table into one; resolves when the merged region is open.
     * @param {string[]} regionNames two or more full region names, as in `client.regions()`
     * @param {{ forcible?: boolean, timeout?: number }} [opts] forcible: merge regions that are
     *   not adjacent (HBase's own warning applies: it can make overlapping regions)
     * @returns {Promise<void>}
     */
    mergeRegions: (regionNames, { forcible = false, timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      if (!Array.isArray(regionNames) || regionNames.length < 2) {
        throw badArgument('mergeRegions needs at least two region names')
      }
      const deadline = Date.now() + timeout
      const region = regionNames.map((name) => ({ type: ENCODED_REGION_NAME, value: encodedName(name) }))
      const res = await callMaster('MergeTableRegions', { region, forcible }, deadline)
      await waitProcedure(toNumber(res.procId), `merge ${regionNames.join(' + ')}`, deadline)
    }),

    /**
     * Switches the master's balancer on or off (it stays so across master failover); waits for a
     * balancing round in progress to end.
     * @param {boolean} on
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<boolean>} whether it was on before
     */
    setBalancer: (on, { timeout = ADMIN_TIMEOUT } = {}) => run(async () => {
      const res = await callMaster('SetBalancerRunning', { on: on === true, synchronous: true },
        Date.now() + timeout, { blocking: true })
      return res.prevBalanceValue === true
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

/**
 * @param {number} seconds
 * @returns {{ first: Buffer, second: Buffer }} the TTL attribute as HBase stores it (decimal text)
 */
function ttlAttribute (seconds) {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds >= FOREVER_SECONDS) {
    throw badArgument(`a TTL must be whole seconds from 1 to ${FOREVER_SECONDS - 1}, or null (forever)`)
  }
  return { first: Buffer.from(TTL), second: Buffer.from(String(seconds)) }
}

/**
 * @param {Record<string, string>|undefined} attributes family attribute → value (HBase's names)
 * @returns {Array<{ first: Buffer, second: Buffer }>}
 */
function familyAttributes (attributes) {
  if (attributes === undefined) return []
  if (attributes === null || typeof attributes !== 'object') {
    throw badArgument('attributes must be an object of strings')
  }
  return Object.entries(attributes).map(([name, value]) => {
    // TTL and VERSIONS have options of their own, checked there.
    if (!/^[A-Z][A-Z0-9_]*$/.test(name) || name === TTL || name === 'VERSIONS') {
      throw badArgument(`"${name}" is not a family attribute createTable takes (upper-case, not TTL or VERSIONS)`)
    }
    if (typeof value !== 'string' || value === '') {
      throw badArgument(`family attribute ${name} needs a non-empty string value`)
    }
    return { first: Buffer.from(name), second: Buffer.from(value) }
  })
}

/**
 * @param {{ attributes?: BytesBytesPair[] }} family protobuf ColumnFamilySchema
 * @returns {number|null} its TTL in seconds; null: forever (no attribute, or HBase's FOREVER)
 */
function ttlOf (family) {
  const attribute = (family.attributes || []).find((a) => a.first.toString('utf8') === TTL)
  const seconds = attribute ? Number(attribute.second.toString('utf8')) : FOREVER_SECONDS
  return Number.isInteger(seconds) && seconds > 0 && seconds < FOREVER_SECONDS ? seconds : null
}

module.exports = { createAdmin }
