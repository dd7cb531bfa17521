'use strict'

const { HBaseError } = require('./errors')
const { toNumber } = require('./cells')
const { callTimeout } = require('./retry')
const { REGION_NAME, INFO, tableNameString, parseMetaRow, regionContains, overlaps } = require('./meta')

const META_LOOKUP_SUFFIX = Buffer.from(',99999999999999')

/** @typedef {import('./meta').Region} Region */
/** @typedef {import('./meta').LocatedRegion} LocatedRegion */

/**
 * Finds the RegionServer for a (table, row): asks a bootstrap server where hbase:meta is
 * (ClientMetaService.GetMetaRegionLocations — no ZooKeeper), looks regions up in meta with a
 * reversed one-call scan, and caches them per table until an error says they moved.
 */
class RegionLocator {
  /**
   * @param {object} options
   * @param {string[]} options.bootstrap "host:port" of the servers to ask where meta is
   * @param {(address: string, service: string, method: string, request: object,
   *   timeoutMs: number) => Promise<any>} options.invoke sends one RPC (the pool's invoke)
   * @param {number} options.rpcTimeout ms per RPC
   */
  constructor ({ bootstrap, invoke, rpcTimeout }) {
    this._bootstrap = bootstrap
    this._nextBootstrap = 0
    this._invoke = invoke
    this._rpcTimeout = rpcTimeout
    this._meta = null
    this._metaLookup = null
    /** @type {Map<string, LocatedRegion[]>} sorted by startKey */
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
   * Concurrent callers share one lookup.
   * @param {number} deadline epoch ms
   * @returns {Promise<{ name: Buffer, spec: object, server: string }>}
   */
  async refreshMeta (deadline) {
    if (!this._metaLookup) {
      this._metaLookup = this._findMeta(deadline).finally(() => { this._metaLookup = null })
      return this._metaLookup
    }
    // Joined a lookup that another caller started, with its own (maybe later) deadline.
    return byDeadline(this._metaLookup, deadline)
  }

  /**
   * @param {number} deadline epoch ms
   * @returns {Promise<{ name: Buffer, spec: object, server: string }>}
   */
  async _findMeta (deadline) {
    /** @type {Error|undefined} */
    let lastError
    // Ask each bootstrap server once, starting where the last success was.
    for (let i = 0; i < this._bootstrap.length; i++) {
      const address = this._bootstrap[(this._nextBootstrap + i) % this._bootstrap.length]
      try {
        const res = await this._invoke(
          address,
          'ClientMetaService',
          'GetMetaRegionLocations',
          {},
          this._timeout(deadline)
        )
        const loc = (res.metaLocations || []).find(
          (/** @type {{ regionInfo: { replicaId?: number|null }, serverName?: object|null }} */ l) =>
            (l.regionInfo.replicaId || 0) === 0 && l.serverName
        )
        if (!loc) {
          throw new HBaseError('HBASE_META_UNAVAILABLE', `${address} knows no location for hbase:meta yet`, {
            retryable: true
          })
        }
        this._nextBootstrap = (this._nextBootstrap + i) % this._bootstrap.length
        const name = Buffer.from(`${tableNameString(loc.regionInfo.tableName)},,${toNumber(loc.regionInfo.regionId)}`)
        this._meta = {
          name,
          spec: { type: REGION_NAME, value: name },
          server: `${loc.serverName.hostName}:${loc.serverName.port}`
        }
        return this._meta
      } catch (err) {
        lastError = /** @type {Error} */ (err)
      }
    }
    throw new HBaseError(
      'HBASE_META_UNAVAILABLE',
      `no bootstrap server (${this._bootstrap.join(', ')}) could locate hbase:meta: ${lastError && lastError.message}`,
      { retryable: true, cause: lastError }
    )
  }

  /**
   * The cached region holding `row`, if any (synchronous: the hot path).
   * @param {string} table
   * @param {Buffer} row
   * @returns {LocatedRegion|undefined}
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
   * @returns {Promise<LocatedRegion>}
   */
  async locate (table, row, deadline) {
    for (;;) {
      const hit = this.cached(table, row)
      if (hit) return hit
      // One meta lookup per table at a time; others wait for it and re-check the cache.
      const inflight = this._lookups.get(table)
      if (inflight) {
        // Another caller's lookup, bounded by its deadline: wait for it no longer than ours.
        await byDeadline(inflight.catch(() => {}), deadline)
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

  /**
   * Reads the region holding `row` from meta (a reversed scan from that row) and caches it.
   * @param {string} table
   * @param {Buffer} row
   * @param {number} deadline epoch ms
   * @returns {Promise<LocatedRegion>}
   */
  async _lookup (table, row, deadline) {
    const tableBytes = Buffer.from(table)
    const startRow = Buffer.concat([tableBytes, Buffer.from(','), row, META_LOOKUP_SUFFIX])
    // `<table>,,` with the stop row included: `<table>,` alone matches nothing, given how meta rows compare.
    const stopRow = Buffer.concat([tableBytes, Buffer.from(',,')])
    const regions = await this._scanMeta(
      { startRow, stopRow, includeStopRow: true, reversed: true, caching: 5 },
      deadline
    )
    for (const region of regions) {
      if (!region) continue
      if (region.table !== table) break
      if (region.split || region.offline) continue // split parents stay in meta until cleaned
      if (!regionContains(region, row)) {
        throw new HBaseError(
          'HBASE_REGION_UNAVAILABLE',
          `no region of ${table} holds this row yet (meta is being updated)`,
          { retryable: true }
        )
      }
      if (!region.server) {
        throw new HBaseError(
          'HBASE_REGION_UNAVAILABLE',
          `region ${region.name.toString()} is not assigned to a server yet`,
          { retryable: true }
        )
      }
      // region.server was checked just above.
      const located = /** @type {LocatedRegion} */ (region)
      this._insert(located)
      return located
    }
    throw new HBaseError('HBASE_TABLE_NOT_FOUND', `table ${table} does not exist`)
  }

  /**
   * All regions of a table, read fresh from meta (admin/test use).
   * @param {string} table
   * @param {number} deadline epoch ms
   * @returns {Promise<Region[]>}
   */
  async listRegions (table, deadline) {
    const tableBytes = Buffer.from(table)
    const scan = {
      startRow: Buffer.concat([tableBytes, Buffer.from(',,')]),
      stopRow: Buffer.concat([tableBytes, Buffer.from(' ,,')]),
      caching: 10000
    }
    const regions = await this._scanMeta(scan, deadline)
    return regions.filter(
      /** @param {Region|null} r @returns {r is Region} */ (r) =>
        r !== null && r.table === table && !r.split && !r.offline
    )
  }

  /**
   * One scan RPC of meta's info family (closed at once); a failure that suggests meta moved
   * drops its cached location.
   * @param {{ startRow: Buffer, stopRow: Buffer, caching: number, includeStopRow?: boolean, reversed?: boolean }} scan
   * @param {number} deadline epoch ms
   * @returns {Promise<Array<Region|null>>} the rows parsed, null for rows without region info
   */
  async _scanMeta (scan, deadline) {
    const meta = await this.meta(deadline)
    const request = {
      region: meta.spec,
      scan: { ...scan, column: [{ family: INFO, qualifier: [] }] },
      numberOfRows: scan.caching,
      closeScanner: true
    }
    try {
      const res = await this._invoke(meta.server, 'ClientService', 'Scan', request, this._timeout(deadline))
      return (res.results || []).map(parseMetaRow)
    } catch (caught) {
      const err = /** @type {{ relocate?: boolean, code?: string }} */ (caught)
      if (err.relocate || err.code === 'HBASE_CONNECTION' || err.code === 'HBASE_CALL_TIMEOUT') this._meta = null
      throw err
    }
  }

  /** @param {LocatedRegion} region */
  _insert (region) {
    // Drop cached regions that overlap the new one: they are stale after a split or merge.
    const list = (this._regions.get(region.table) || []).filter((r) => !overlaps(r, region))
    list.push(region)
    list.sort((a, b) => Buffer.compare(a.startKey, b.startKey))
    this._regions.set(region.table, list)
  }

  /**
   * Forgets one region (it moved, split or closed).
   * @param {Region} region
   * @returns {void}
   */
  invalidate (region) {
    const list = this._regions.get(region.table)
    if (!list) return
    const next = list.filter((r) => r !== region && !r.name.equals(region.name))
    if (next.length) this._regions.set(region.table, next)
    else this._regions.delete(region.table)
  }

  /**
   * Forgets every region on a server (connection lost), and meta's location if it was there.
   * @param {string} address "host:port"
   * @returns {void}
   */
  invalidateServer (address) {
    if (this._meta && this._meta.server === address) this._meta = null
    for (const [table, list] of this._regions) {
      const next = list.filter((r) => r.server !== address)
      if (next.length) this._regions.set(table, next)
      else this._regions.delete(table)
    }
  }

  /**
   * Forgets the cached regions of a table (dropped or recreated).
   * @param {string} table
   * @returns {void}
   */
  invalidateTable (table) {
    this._regions.delete(table)
  }

  /**
   * @param {number} deadline epoch ms
   * @returns {number} ms for the next RPC
   */
  _timeout (deadline) {
    return callTimeout(this._rpcTimeout, deadline)
  }
}

/**
 * Settles like `promise`, or rejects (retryable) once `deadline` has passed first: a caller that
 * joins work another caller started must not wait past its own deadline.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} deadline epoch ms
 * @returns {Promise<T>}
 */
function byDeadline (promise, deadline) {
  const left = deadline - Date.now()
  const late = () =>
    new HBaseError(
      'HBASE_CALL_TIMEOUT',
      "a shared hbase:meta lookup did not finish within this call's deadline",
      { retryable: true }
    )
  if (left <= 0) return Promise.reject(late())
  /** @type {NodeJS.Timeout|undefined} */
  let timer
  const expired = new Promise((resolve, reject) => { timer = setTimeout(() => reject(late()), left) })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

module.exports = { RegionLocator }
