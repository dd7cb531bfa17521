'use strict'

const { ConnectionPool } = require('./pool')
const { RegionLocator } = require('./locator')
const { RetryPolicy } = require('./retry')
const { regionOp, listRegions } = require('./region-op')
const { runBatch } = require('./batch')
const { scanRows, scanBatches, countRows } = require('./scan')
const { DEFAULTS, parseBootstrap } = require('./options')
const { badArgument } = require('./errors')
const { toBytes, resultToRow, buildGet, buildPut, buildDelete } = require('./cells')
const { createAdmin } = require('./admin')
const { cellCondition } = require('./filters')
const { OperationGate } = require('./lifecycle')
const { UNTAGGED, META_KIND } = require('./traffic')

/**
 * A native HBase 2.x client: one multiplexed connection per server and service, region
 * location cache with relocation, retries with backoff inside a total deadline.
 *
 * Lifecycle as undici's: an operation that started before `close()` runs to completion under
 * its own deadline; `destroy()` aborts everything at once (see both, and lifecycle.js).
 *
 * Every operation takes `kind` among its options: an opaque tag its RPCs are counted under in
 * trafficStats() (default: the view's, see withKind(), else "other").
 *
 * The multi operations (multiGet, multiPut, multiDelete) also take `coalesce: true`, for work no
 * one waits on: their RPCs may then wait for the event loop's check phase (setImmediate), so the
 * frames sent to a server in one loop iteration leave in one socket write. Otherwise an RPC
 * leaves when the current tick ends (with the other calls of that tick, and any coalescing ones
 * waiting on the same connection): no later than it always did.
 */
class HBaseClient {
  /**
   * @param {import('./options').ClientConfig} options
   */
  constructor (options) {
    const given = options || /** @type {import('./options').ClientConfig} */ ({})
    const unknown = Object.keys(given).filter((k) => !(k in DEFAULTS) && k !== 'bootstrap' && k !== 'onRpc')
    if (unknown.length) throw badArgument(`unknown client option(s): ${unknown.join(', ')}`)
    /** @type {Readonly<import('./options').ClientOptions>} */
    this.options = Object.freeze({ ...DEFAULTS, ...given, bootstrap: parseBootstrap(given.bootstrap) })
    this._gate = new OperationGate()
    /** @type {Promise<void>|null} */
    this._closing = null
    /** What this client's operations count under when they name no kind (withKind). */
    this._kind = UNTAGGED
    const { rpcTimeout, pause, maxPause } = this.options
    const pool = new ConnectionPool({
      user: this.options.user,
      connectTimeout: this.options.connectTimeout,
      cellBlocks: this.options.cellBlocks,
      maxFrameBytes: this.options.maxFrameBytes,
      onRpc: this.options.onRpc,
      onServerLost: (address) => locator.invalidateServer(address)
    })
    /**
     * @type {(address: string, service: string, method: string, request: object, ms: number) =>
     *   ReturnType<typeof pool.invoke>}
     */
    const invoke = (address, service, method, request, ms) =>
      pool.invoke(address, service, method, request, ms, META_KIND)
    const locator = new RegionLocator({ bootstrap: this.options.bootstrap, invoke, rpcTimeout })
    const policy = new RetryPolicy({ pause, maxPause, rpcTimeout, signal: this._gate.signal })
    /** @type {import('./region-op').Core} */
    this._core = Object.freeze({ options: this.options, pool, locator, policy })
    /**
     * Master operations: createTable, deleteTable, tableExists, familyTtls, setFamilyTtl, splitRegion,
     * mergeRegions, moveRegion, setBalancer.
     */
    this.admin = createAdmin(this._core, (operation) => this._gate.run(operation))
  }

  /**
   * Reads one row. Resolves null when the row does not exist.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {{ families?: string[], columns?: string[], maxVersions?: number, timeout?: number, kind?: string }} [opts]
   * @returns {Promise<import('./cells').Row|null>}
   */
  get (table, row, opts = {}) {
    return this._gate.run(async () => {
      const key = toBytes(row, 'row')
      const get = buildGet(key, opts)
      const build = (/** @type {import('./meta').LocatedRegion} */ region) => ({ region: region.spec, get })
      const res = await regionOp(this._core, 'Get', table, key, build, opts.timeout, this._kindOf(opts))
      return resultToRow(res.result)
    })
  }

  /**
   * Reads many rows in one Multi RPC per server. Each result is a Row, null (absent) or the
   * HBaseError of that row alone; the promise itself rejects only for bad arguments or a
   * closed client.
   * @param {string} table
   * @param {Array<import('./cells').Bytesish>} rows
   * @param {{ families?: string[], columns?: string[], timeout?: number, kind?: string, coalesce?: boolean }} [opts]
   * @returns {Promise<Array<import('./cells').Row|null|Error>>}
   */
  multiGet (table, rows, opts = {}) {
    return this._gate.run(async () => {
      const actions = rows.map((row) => {
        const key = toBytes(row, 'row')
        return { row: key, get: buildGet(key, opts) }
      })
      return this._runBatch(table, actions, opts)
    })
  }

  /**
   * Writes cells of one row.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {Parameters<typeof buildPut>[1]} cells `{ family: { qualifier: value } }` or
   *   `[{ family, qualifier, value, timestamp? }]`
   * @param {{ timeout?: number, kind?: string, durability?: number }} [opts] durability: protobuf Durability
   * @returns {Promise<void>}
   */
  put (table, row, cells, opts = {}) {
    return this._gate.run(async () => {
      const key = toBytes(row, 'row')
      const mutation = buildPut(key, cells, opts)
      const build = (/** @type {import('./meta').LocatedRegion} */ region) => ({ region: region.spec, mutation })
      await regionOp(this._core, 'Mutate', table, key, build, opts.timeout, this._kindOf(opts))
    })
  }

  /**
   * Writes cells of one row only if the newest cell of `check.column` holds `check.value`, or,
   * with `check.value` null, only if that cell is absent: HBase's check-and-put, decided
   * atomically by the RegionServer under the row lock (first writer wins).
   *
   * A call retried after an attempt that got no answer may find its own first attempt applied
   * and resolve false; a caller that must know which value won reads the row back.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {{ column: string, value: import('./cells').Bytesish|null }} check column "family:qualifier"
   * @param {Parameters<typeof buildPut>[1]} cells as for put()
   * @param {{ timeout?: number, kind?: string, durability?: number }} [opts]
   * @returns {Promise<boolean>} true: the condition held and the cells were written
   */
  checkAndPut (table, row, check, cells, opts = {}) {
    return this._gate.run(async () => {
      const key = toBytes(row, 'row')
      const condition = cellCondition(key, check && check.column, check ? check.value : null)
      const mutation = buildPut(key, cells, opts)
      const build = (/** @type {import('./meta').LocatedRegion} */ region) => ({
        region: region.spec,
        mutation,
        condition
      })
      const res = await regionOp(this._core, 'Mutate', table, key, build, opts.timeout, this._kindOf(opts))
      return res.processed === true
    })
  }

  /**
   * Deletes a row, or some of its families/columns (with `timestamp`: only the versions written
   * at or before it).
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {{ families?: string[], columns?: string[], timestamp?: number, timeout?: number, kind?: string }} [opts]
   * @returns {Promise<void>}
   */
  delete (table, row, opts = {}) {
    return this._gate.run(async () => {
      const key = toBytes(row, 'row')
      const mutation = buildDelete(key, opts)
      const build = (/** @type {import('./meta').LocatedRegion} */ region) => ({ region: region.spec, mutation })
      await regionOp(this._core, 'Mutate', table, key, build, opts.timeout, this._kindOf(opts))
    })
  }

  /**
   * Writes many rows in one Multi RPC per server (chunked by maxBatchActions). Each result is
   * null (written) or the HBaseError of that put alone, after retries within the deadline. A put
   * that names its own `table` goes there instead: one MultiRequest carries a RegionAction per
   * region whatever its table, so rows of several tables on one server cost one RPC.
   * @param {string} table
   * @param {Array<{ row: import('./cells').Bytesish, cells: Parameters<typeof buildPut>[1], table?: string }>} puts
   * @param {{ timeout?: number, kind?: string, durability?: number, coalesce?: boolean }} [opts]
   *   durability: protobuf Durability
   * @returns {Promise<Array<null|Error>>}
   */
  multiPut (table, puts, opts = {}) {
    return this._gate.run(async () => {
      const actions = puts.map((p) => {
        const key = toBytes(p.row, 'row')
        if (p.table == null) return { row: key, mutation: buildPut(key, p.cells, opts) }
        if (typeof p.table !== 'string' || p.table === '') {
          throw badArgument('a put\'s table must be a non-empty string')
        }
        return { row: key, mutation: buildPut(key, p.cells, opts), table: p.table }
      })
      const results = await this._runBatch(table, actions, opts)
      return results.map((r) => (r instanceof Error ? r : null))
    })
  }

  /**
   * Deletes many rows (or some of their families/columns, as delete() does) in one Multi RPC
   * per server. Each result is null (deleted; deleting a row that is not there is no error) or
   * the HBaseError of that row alone.
   * @param {string} table
   * @param {Array<{ row: import('./cells').Bytesish, families?: string[], columns?: string[],
   *   timestamp?: number }>} deletes
   * @param {{ timeout?: number, kind?: string, coalesce?: boolean }} [opts]
   * @returns {Promise<Array<null|Error>>}
   */
  multiDelete (table, deletes, opts = {}) {
    return this._gate.run(async () => {
      const actions = deletes.map((d) => {
        const key = toBytes(d.row, 'row')
        return { row: key, mutation: buildDelete(key, d) }
      })
      const results = await this._runBatch(table, actions, opts)
      return results.map((r) => (r instanceof Error ? r : null))
    })
  }

  /**
   * Scans rows in key order, paging `caching` rows per RPC, across regions (./scan.js). Breaking
   * out of the loop closes the server-side scanner. The scan is in flight from its first `next()`
   * until the loop ends, so close() waits for the loop to end.
   * @param {string} table
   * @param {import('./scan').ScanOptions} [opts]
   * @returns {AsyncGenerator<import('./cells').Row, void, void>}
   */
  scan (table, opts = {}) {
    return this._gate.iterate(scanRows(this._core, table, opts, this._kindOf(opts)))
  }

  /**
   * scan(), one array of rows per RPC answered (./scan.js scanBatches): for loops over every row.
   * @param {string} table
   * @param {import('./scan').ScanOptions} [opts]
   * @returns {AsyncGenerator<import('./cells').Row[], void, void>}
   */
  scanBatches (table, opts = {}) {
    return this._gate.iterate(scanBatches(this._core, table, opts, this._kindOf(opts)))
  }

  /**
   * Counts rows (first key of each row only, so values never travel).
   * @param {string} table
   * @param {{ startRow?: import('./cells').Bytesish, stopRow?: import('./cells').Bytesish,
   *   caching?: number, timeout?: number, kind?: string, filter?: import('./filters').Filter }} [opts]
   *   filter: count only the rows it keeps
   * @returns {Promise<number>}
   */
  count (table, opts = {}) {
    return this._gate.run(() => countRows(this._core, table, opts, this._kindOf(opts)))
  }

  /**
   * Regions of a table as meta has them now.
   * @param {string} table
   * @returns {Promise<import('./region-op').RegionInfo[]>}
   */
  regions (table) {
    return this._gate.run(() => listRegions(this._core, table))
  }

  /**
   * Cheap reachability check: asks a bootstrap server where meta is (refreshing the cached
   * location) and reads nothing else.
   * @param {{ timeout?: number }} [opts]
   * @returns {Promise<void>}
   */
  ping (opts = {}) {
    return this._gate.run(async () => {
      await this._core.locator.refreshMeta(Date.now() + (opts.timeout || this.options.rpcTimeout))
    })
  }

  /**
   * A view whose operations count under `kind` in trafficStats() unless they name their own: the
   * same connections, caches and lifecycle (closing it closes the client).
   * @param {string} kind an opaque tag
   * @returns {HBaseClient}
   */
  withKind (kind) {
    if (typeof kind !== 'string' || kind === '') throw badArgument('kind must be a non-empty string')
    return Object.create(this, {
      _kind: { value: kind },
      close: { value: () => this.close() },
      destroy: { value: () => this.destroy() }
    })
  }

  /**
   * What went to HBase and came back since the client was made, per kind and per server and
   * service (traffic.js): a copy of counters kept as plain additions on every RPC.
   * @returns {import('./traffic').TrafficStats}
   */
  trafficStats () {
    return this._core.pool.traffic.snapshot()
  }

  /**
   * One batch of row actions (gets, puts, deletes): one Multi RPC per server.
   * @param {string} table
   * @param {Parameters<typeof runBatch>[2]} actions
   * @param {{ timeout?: number, kind?: string, coalesce?: boolean }} opts
   * @returns {ReturnType<typeof runBatch>}
   */
  _runBatch (table, actions, opts) {
    return runBatch(this._core, table, actions, opts.timeout, this._kindOf(opts), opts.coalesce === true)
  }

  /** @param {{ kind?: string }} opts @returns {string} the kind an operation counts under */
  _kindOf (opts) {
    return opts.kind || this._kind
  }

  /**
   * Forgets cached locations of a table (after it was dropped or recreated).
   * @param {string} table
   * @returns {void}
   */
  forgetTable (table) {
    this._core.locator.invalidateTable(table)
  }

  /**
   * True once close() or destroy() was called: new operations are refused.
   * @returns {boolean}
   */
  get closed () {
    return this._gate.closed
  }

  /**
   * Closes gracefully; idempotent (every call returns the same promise), never rejects.
   * New operations are refused at once (HBASE_CLIENT_CLOSED). Operations already in flight
   * run to completion, success or failure, under their own deadlines: retries and backoff
   * included, bounded by their `timeout`/operationTimeout (a scan: until its loop ends). Then
   * the connections close once their last answers arrived. A destroy() meanwhile makes the
   * promise resolve promptly.
   * @returns {Promise<void>}
   */
  close () {
    if (!this._closing) this._closing = this._gate.drain().then(() => this._core.pool.close())
    return this._closing
  }

  /**
   * Aborts at once; idempotent. New operations are refused, operations in flight reject with
   * HBASE_CLIENT_CLOSED (multiGet/multiPut: their unsettled actions do), backoff waits end,
   * sockets are destroyed, and a pending close() resolves.
   * @returns {Promise<void>} already resolved: nothing is left to wait for
   */
  destroy () {
    if (!this._gate.signal.aborted) {
      this._gate.abort()
      this._core.pool.destroy()
    }
    return Promise.resolve()
  }
}

/**
 * Creates a client. Nothing connects until the first call.
 * @param {ConstructorParameters<typeof HBaseClient>[0]} options
 * @returns {HBaseClient}
 */
function createHBaseClient (options) {
  return new HBaseClient(options)
}

module.exports = { HBaseClient, createHBaseClient, parseBootstrap, DEFAULTS }
