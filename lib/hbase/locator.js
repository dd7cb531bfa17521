'use strict'

const { types } = require('./protocol')
const { HBaseError } = require('./errors')
const { EMPTY, toNumber } = require('./cells')

const REGION_NAME = 1
const PB_MAGIC = Buffer.from('PBUF')
const META_LOOKUP_SUFFIX = Buffer.from(',99999999999999')
const INFO = Buffer.from('info')

/**
 * @typedef {{ name: Buffer, spec: object, table: string, startKey: Buffer, endKey: Buffer,
 *   server: string|null, info: object, offline: boolean, split: boolean }} Region
 */

/**
 * "ns:table" or "table" → protobuf TableName.
 * @param {string} table
 * @returns {{ namespace: Buffer, qualifier: Buffer }}
 */
function tableNameProto (table) {
  const at = table.indexOf(':')
  return at < 0
    ? { namespace: Buffer.from('default'), qualifier: Buffer.from(table) }
    : { namespace: Buffer.from(table.slice(0, at)), qualifier: Buffer.from(table.slice(at + 1)) }
}

/**
 * @param {{ namespace: Buffer, qualifier: Buffer }} tn
 * @returns {string}
 */
function tableNameString (tn) {
  const ns = tn.namespace.toString()
  return ns === 'default' ? tn.qualifier.toString() : `${ns}:${tn.qualifier.toString()}`
}

/**
 * Parses one hbase:meta row into a Region; null when it has no region info.
 * @param {{ row: Buffer, cells: object[] }} row protobuf Result cells, raw
 * @returns {Region|null}
 */
function parseMetaRow (result) {
  let info = null
  let server = null
  let rowKey = null
  for (const cell of result.cell) {
    rowKey = cell.row
    if (!cell.family.equals(INFO)) continue
    const q = cell.qualifier.toString()
    if (q === 'regioninfo') {
      const bytes = cell.value.subarray(0, 4).equals(PB_MAGIC) ? cell.value.subarray(4) : cell.value
      info = types.RegionInfo.decode(bytes)
    } else if (q === 'server') {
      server = cell.value.toString()
    }
  }
  if (!info) return null
  return {
    name: rowKey,
    spec: { type: REGION_NAME, value: rowKey },
    table: tableNameString(info.tableName),
    startKey: info.startKey || EMPTY,
    endKey: info.endKey || EMPTY,
    server: server || null,
    info,
    offline: info.offline === true,
    split: info.split === true
  }
}

/**
 * @param {Region} region
 * @param {Buffer} row
 * @returns {boolean}
 */
function regionContains (region, row) {
  return Buffer.compare(region.startKey, row) <= 0 &&
    (region.endKey.length === 0 || Buffer.compare(row, region.endKey) < 0)
}

/**
 * @param {Region} a
 * @param {Region} b
 * @returns {boolean} whether the key ranges [start, end) share a key (empty end = unbounded)
 */
function overlaps (a, b) {
  const aStartsBeforeBEnds = b.endKey.length === 0 || Buffer.compare(a.startKey, b.endKey) < 0
  const bStartsBeforeAEnds = a.endKey.length === 0 || Buffer.compare(b.startKey, a.endKey) < 0
  return aStartsBeforeBEnds && bStartsBeforeAEnds
}

/**
 * Finds the RegionServer for a (table, row): asks a bootstrap server where hbase:meta is
 * (ClientMetaService.GetMetaRegionLocations — no ZooKeeper), looks regions up in meta with a
 * reversed one-call scan, and caches them per table until an error says they moved.
 */
class RegionLocator {
  /**
   * @param {{ bootstrap: string[], invoke: Function, rpcTimeout: number }} options
   *   invoke(address, service, method, request, timeoutMs) → Promise<response>
   */
  constructor ({ bootstrap, invoke, rpcTimeout }) {
    this._bootstrap = bootstrap
    this._nextBootstrap = 0
    this._invoke = invoke
    this._rpcTimeout = rpcTimeout
    this._meta = null
    this._metaLookup = null
    /** @type {Map<string, Region[]>} sorted by startKey */
    this._regions = new Map()
    this._lookups = new Map()
  }

  /**
   * Where hbase:meta is served, cached.
   * @param {number} deadline epoch ms
   * @returns {Promise<{ name: Buffer, spec: object, server: string }>}
   */
  async meta (deadline) {
    return this._meta || this.refreshMeta(deadline)
  }

  /**
   * Asks the bootstrap servers again where meta is (readiness probes); cached regions stay.
   * @param {number} deadline
   */
  async refreshMeta (deadline) {
    if (!this._metaLookup) {
      this._metaLookup = this._findMeta(deadline).finally(() => { this._metaLookup = null })
    }
    return this._metaLookup
  }

  async _findMeta (deadline) {
    let lastError
    // Ask each bootstrap server once, starting where the last success was.
    for (let i = 0; i < this._bootstrap.length; i++) {
      const address = this._bootstrap[(this._nextBootstrap + i) % this._bootstrap.length]
      try {
        const res = await this._invoke(address, 'ClientMetaService', 'GetMetaRegionLocations', {}, this._timeout(deadline))
        const loc = (res.metaLocations || []).find((l) => (l.regionInfo.replicaId || 0) === 0 && l.serverName)
        if (!loc) throw new HBaseError('HBASE_META_UNAVAILABLE', `${address} knows no location for hbase:meta yet`, { retryable: true })
        this._nextBootstrap = (this._nextBootstrap + i) % this._bootstrap.length
        const name = Buffer.from(`${tableNameString(loc.regionInfo.tableName)},,${toNumber(loc.regionInfo.regionId)}`)
        this._meta = { name, spec: { type: REGION_NAME, value: name }, server: `${loc.serverName.hostName}:${loc.serverName.port}` }
        return this._meta
      } catch (err) {
        lastError = err
      }
    }
    throw new HBaseError('HBASE_META_UNAVAILABLE', `no bootstrap server (${this._bootstrap.join(', ')}) could locate hbase:meta: ${lastError && lastError.message}`, { retryable: true, cause: lastError })
  }

  /**
   * The cached region holding `row`, if any (synchronous: the hot path).
   * @param {string} table
   * @param {Buffer} row
   * @returns {Region|undefined}
   */
  cached (table, row) {
    const regions = this._regions.get(table)
    if (!regions) return undefined
    let lo = 0
    let hi = regions.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (Buffer.compare(regions[mid].startKey, row) <= 0) {
        found = mid
        lo = mid + 1
      } else {
        hi = mid - 1
      }
    }
    if (found < 0) return undefined
    const region = regions[found]
    return regionContains(region, row) ? region : undefined
  }

  /**
   * The region holding `row`, from the cache or hbase:meta.
   * @param {string} table
   * @param {Buffer} row
   * @param {number} deadline epoch ms
   * @returns {Promise<Region>}
   */
  async locate (table, row, deadline) {
    for (;;) {
      const hit = this.cached(table, row)
      if (hit) return hit
      // One meta lookup per table at a time; others wait for it and re-check the cache.
      const inflight = this._lookups.get(table)
      if (inflight) {
        await inflight.catch(() => {})
        continue
      }
      const lookup = this._lookup(table, row, deadline)
      this._lookups.set(table, lookup)
      try {
        return await lookup
      } finally {
        this._lookups.delete(table)
      }
    }
  }

  async _lookup (table, row, deadline) {
    const meta = await this.meta(deadline)
    const tableBytes = Buffer.from(table)
    const startRow = Buffer.concat([tableBytes, Buffer.from(','), row, META_LOOKUP_SUFFIX])
    // `<table>,,` with the stop row included: `<table>,` alone matches nothing, given how meta rows compare.
    const stopRow = Buffer.concat([tableBytes, Buffer.from(',,')])
    const request = {
      region: meta.spec,
      scan: { startRow, stopRow, includeStopRow: true, reversed: true, caching: 5, column: [{ family: INFO, qualifier: [] }] },
      numberOfRows: 5,
      closeScanner: true
    }
    let res
    try {
      res = await this._invoke(meta.server, 'ClientService', 'Scan', request, this._timeout(deadline))
    } catch (err) {
      if (err.relocate || err.code === 'HBASE_CONNECTION' || err.code === 'HBASE_CALL_TIMEOUT') this._meta = null
      throw err
    }
    for (const result of res.results || []) {
      const region = parseMetaRow(result)
      if (!region) continue
      if (region.table !== table) break
      if (region.split || region.offline) continue // split parents stay in meta until cleaned
      if (!regionContains(region, row)) {
        throw new HBaseError('HBASE_REGION_UNAVAILABLE', `no region of ${table} holds this row yet (meta is being updated)`, { retryable: true })
      }
      if (!region.server) {
        throw new HBaseError('HBASE_REGION_UNAVAILABLE', `region ${region.name.toString()} is not assigned to a server yet`, { retryable: true })
      }
      this._insert(region)
      return region
    }
    throw new HBaseError('HBASE_TABLE_NOT_FOUND', `table ${table} does not exist`)
  }

  /**
   * All regions of a table, read fresh from meta (admin/test use).
   * @param {string} table
   * @param {number} deadline
   * @returns {Promise<Region[]>}
   */
  async listRegions (table, deadline) {
    const meta = await this.meta(deadline)
    const tableBytes = Buffer.from(table)
    const request = {
      region: meta.spec,
      scan: { startRow: Buffer.concat([tableBytes, Buffer.from(',,')]), stopRow: Buffer.concat([tableBytes, Buffer.from(' ,,')]), caching: 10000, column: [{ family: INFO, qualifier: [] }] },
      numberOfRows: 10000,
      closeScanner: true
    }
    const res = await this._invoke(meta.server, 'ClientService', 'Scan', request, this._timeout(deadline))
    return (res.results || []).map(parseMetaRow).filter((r) => r && r.table === table && !r.split && !r.offline)
  }

  _insert (region) {
    // Drop cached regions that overlap the new one: they are stale after a split or merge.
    const list = (this._regions.get(region.table) || []).filter((r) => !overlaps(r, region))
    list.push(region)
    list.sort((a, b) => Buffer.compare(a.startKey, b.startKey))
    this._regions.set(region.table, list)
  }

  /** Forget one region (it moved, split or closed). */
  invalidate (region) {
    const list = this._regions.get(region.table)
    if (!list) return
    const next = list.filter((r) => r !== region && !r.name.equals(region.name))
    if (next.length) this._regions.set(region.table, next)
    else this._regions.delete(region.table)
  }

  /** Forget every region on a server (connection lost) and meta if it was there. */
  invalidateServer (address) {
    if (this._meta && this._meta.server === address) this._meta = null
    for (const [table, list] of this._regions) {
      const next = list.filter((r) => r.server !== address)
      if (next.length) this._regions.set(table, next)
      else this._regions.delete(table)
    }
  }

  /** Forget a table (dropped or recreated). */
  invalidateTable (table) {
    this._regions.delete(table)
  }

  /** Forget everything (meta moved). */
  invalidateMeta () {
    this._meta = null
  }

  _timeout (deadline) {
    return Math.max(1, Math.min(this._rpcTimeout, deadline - Date.now()))
  }
}

module.exports = { RegionLocator, tableNameProto, tableNameString, parseMetaRow, regionContains }
