'use strict'

const { setTimeout: sleep } = require('node:timers/promises')
const { Connection } = require('./connection')
const { METHODS } = require('./protocol')
const { RegionLocator } = require('./locator')
const { HBaseError, badArgument, remoteError } = require('./errors')
const { EMPTY, toBytes, resultToRow, columnSelectors, buildGet, buildPut, buildDelete } = require('./cells')
const { createAdmin } = require('./admin')

const DEFAULTS = Object.freeze({
  rpcTimeout: 2000,
  operationTimeout: 10000,
  connectTimeout: 2000,
  pause: 20,
  maxPause: 1000,
  maxBatchActions: 1000,
  scanCaching: 500,
  user: 'beacon'
})

// HBase's own retry schedule (HConstants.RETRY_BACKOFF), as multiples of `pause`.
const BACKOFF = [1, 2, 3, 5, 10, 20, 40, 100]
const FIRST_KEY_ONLY = { name: 'org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter', serializedFilter: EMPTY }

/**
 * @param {string|string[]} bootstrap "host:port" list (masters or RegionServers)
 * @returns {string[]}
 */
function parseBootstrap (bootstrap) {
  const list = (Array.isArray(bootstrap) ? bootstrap : String(bootstrap || '').split(','))
    .map((s) => s.trim()).filter(Boolean)
  if (list.length === 0) throw badArgument('bootstrap needs at least one "host:port"')
  for (const address of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(address)) throw badArgument(`bootstrap address "${address}" must be "host:port"`)
  }
  return list
}

function splitAddress (address) {
  const at = address.lastIndexOf(':')
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) }
}

/**
 * A native HBase 2.x client: one multiplexed connection per server and service, region
 * location cache with relocation, retries with backoff inside a total deadline.
 */
class HBaseClient {
  /**
   * @param {object} options
   * @param {string|string[]} options.bootstrap master/RegionServer addresses
   * @param {number} [options.rpcTimeout] ms per RPC
   * @param {number} [options.operationTimeout] ms per operation, retries included
   * @param {number} [options.connectTimeout]
   * @param {number} [options.pause] base retry pause, ms
   * @param {number} [options.maxPause]
   * @param {number} [options.maxBatchActions] actions per Multi RPC
   * @param {number} [options.scanCaching] rows per scan RPC
   * @param {string} [options.user]
   * @param {(event: { method: string, server: string, ms: number, error?: HBaseError }) => void} [options.onRpc]
   *   observer for metrics, called once per RPC
   */
  constructor (options = {}) {
    const unknown = Object.keys(options).filter((k) => !(k in DEFAULTS) && k !== 'bootstrap' && k !== 'onRpc')
    if (unknown.length) throw badArgument(`unknown client option(s): ${unknown.join(', ')}`)
    this.options = Object.freeze({ ...DEFAULTS, ...options, bootstrap: parseBootstrap(options.bootstrap) })
    this.closed = false
    this._onRpc = options.onRpc || null
    this._connections = new Map()
    this._closing = null
    this._locator = new RegionLocator({
      bootstrap: this.options.bootstrap,
      invoke: (address, service, method, request, timeout) => this._invoke(address, service, method, request, timeout),
      rpcTimeout: this.options.rpcTimeout
    })
    this.admin = createAdmin(this)
  }

  /**
   * Reads one row. Resolves null when the row does not exist.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {{ families?: string[], columns?: string[], maxVersions?: number, timeout?: number }} [opts]
   * @returns {Promise<import('./cells').Row|null>}
   */
  async get (table, row, opts = {}) {
    const key = toBytes(row, 'row')
    const get = buildGet(key, opts)
    const res = await this._regionOp('Get', table, key, (region) => ({ region: region.spec, get }), opts.timeout)
    return resultToRow(res.result)
  }

  /**
   * Reads many rows in one Multi RPC per server. Each result is a Row, null (absent) or the
   * HBaseError of that row alone; the promise itself rejects only for bad arguments.
   * @param {string} table
   * @param {Array<import('./cells').Bytesish>} rows
   * @param {{ families?: string[], columns?: string[], timeout?: number }} [opts]
   * @returns {Promise<Array<import('./cells').Row|null|HBaseError>>}
   */
  async multiGet (table, rows, opts = {}) {
    const actions = rows.map((row) => {
      const key = toBytes(row, 'row')
      return { row: key, get: buildGet(key, opts) }
    })
    return this._batch(table, actions, opts.timeout)
  }

  /**
   * Writes cells of one row.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {object} cells `{ family: { qualifier: value } }` or `[{ family, qualifier, value, timestamp? }]`
   * @param {{ timeout?: number }} [opts]
   * @returns {Promise<void>}
   */
  async put (table, row, cells, opts = {}) {
    const key = toBytes(row, 'row')
    const mutation = buildPut(key, cells, opts)
    await this._regionOp('Mutate', table, key, (region) => ({ region: region.spec, mutation }), opts.timeout)
  }

  /**
   * Deletes a row, or some of its families/columns.
   * @param {string} table
   * @param {import('./cells').Bytesish} row
   * @param {{ families?: string[], columns?: string[], timeout?: number }} [opts]
   * @returns {Promise<void>}
   */
  async delete (table, row, opts = {}) {
    const key = toBytes(row, 'row')
    const mutation = buildDelete(key, opts)
    await this._regionOp('Mutate', table, key, (region) => ({ region: region.spec, mutation }), opts.timeout)
  }

  /**
   * Writes many rows in one Multi RPC per server (chunked by maxBatchActions). Each result is
   * null (written) or the HBaseError of that put alone, after retries within the deadline.
   * @param {string} table
   * @param {Array<{ row: import('./cells').Bytesish, cells: object }>} puts
   * @param {{ timeout?: number }} [opts]
   * @returns {Promise<Array<null|HBaseError>>}
   */
  async multiPut (table, puts, opts = {}) {
    const actions = puts.map((p) => {
      const key = toBytes(p.row, 'row')
      return { row: key, mutation: buildPut(key, p.cells, opts) }
    })
    const results = await this._batch(table, actions, opts.timeout)
    return results.map((r) => (r instanceof Error ? r : null))
  }

  /**
   * Scans rows in key order, paging `caching` rows per RPC, across regions. Breaking out of the
   * loop closes the server-side scanner. A scanner lost to a region move or server restart is
   * reopened after the last row returned.
   * @param {string} table
   * @param {{ startRow?: any, stopRow?: any, families?: string[], columns?: string[], limit?: number,
   *   caching?: number, keysOnly?: boolean, timeout?: number }} [opts]
   * @returns {AsyncGenerator<import('./cells').Row>}
   */
  async * scan (table, opts = {}) {
    const stopRow = opts.stopRow != null ? toBytes(opts.stopRow, 'stopRow') : EMPTY
    let startRow = opts.startRow != null ? toBytes(opts.startRow, 'startRow') : EMPTY
    let includeStart = true
    let remaining = opts.limit > 0 ? opts.limit : Infinity
    const caching = opts.caching || this.options.scanCaching
    const column = columnSelectors(opts)
    const timeout = opts.timeout || this.options.operationTimeout
    let scanner = null // { region, id }
    try {
      for (;;) {
        const rows = Math.min(caching, remaining)
        let res
        if (!scanner) {
          const scan = { startRow, stopRow, includeStartRow: includeStart, caching: rows }
          if (column) scan.column = column
          if (opts.keysOnly) scan.filter = FIRST_KEY_ONLY
          let region
          res = await this._regionOp('Scan', table, startRow, (r) => {
            region = r
            return { region: r.spec, scan, numberOfRows: rows }
          }, timeout)
          scanner = { region, id: res.scannerId }
        } else {
          try {
            res = await this._call(scanner.region.server, 'ClientService', 'Scan', { scannerId: scanner.id, numberOfRows: rows }, this.options.rpcTimeout)
          } catch (err) {
            if (!err.retryable) throw err
            // Reopen after the last row we returned; the old scanner is gone or unusable.
            if (err.relocate) this._locator.invalidate(scanner.region)
            scanner = null
            continue
          }
        }
        for (const result of res.results || []) {
          const row = resultToRow(result)
          if (!row) continue
          startRow = row.row
          includeStart = false
          yield row
          if (--remaining <= 0) return
        }
        if (res.moreResults === false) { scanner = null; return }
        if (res.moreResultsInRegion === false) {
          const end = scanner.region.endKey
          scanner = null
          if (end.length === 0 || (stopRow.length && Buffer.compare(stopRow, end) <= 0)) return
          startRow = end
          includeStart = true
        }
      }
    } finally {
      if (scanner && !this.closed) {
        this._call(scanner.region.server, 'ClientService', 'Scan', { scannerId: scanner.id, numberOfRows: 0, closeScanner: true }, this.options.rpcTimeout).catch(() => {})
      }
    }
  }

  /**
   * Counts rows (first key of each row only, so values never travel).
   * @param {string} table
   * @param {{ startRow?: any, stopRow?: any, timeout?: number }} [opts]
   * @returns {Promise<number>}
   */
  async count (table, opts = {}) {
    let n = 0
    for await (const row of this.scan(table, { ...opts, keysOnly: true, caching: opts.caching || 5000 })) n += row ? 1 : 0
    return n
  }

  /**
   * Regions of a table as meta has them now.
   * @param {string} table
   * @returns {Promise<Array<{ name: string, startKey: Buffer, endKey: Buffer, server: string|null }>>}
   */
  async regions (table) {
    const regions = await this._retry('regions', Date.now() + this.options.operationTimeout, () =>
      this._locator.listRegions(table, Date.now() + this.options.rpcTimeout))
    return regions.map((r) => ({ name: r.name.toString(), startKey: r.startKey, endKey: r.endKey, server: r.server, info: r.info }))
  }

  /**
   * Cheap reachability check: asks a bootstrap server where meta is (refreshing the cached
   * location) and reads nothing else.
   * @param {{ timeout?: number }} [opts]
   * @returns {Promise<void>}
   */
  async ping (opts = {}) {
    const deadline = Date.now() + (opts.timeout || this.options.rpcTimeout)
    await this._locator.refreshMeta(deadline)
  }

  /**
   * Forgets cached locations of a table (after it was dropped or recreated).
   * @param {string} table
   */
  forgetTable (table) {
    this._locator.invalidateTable(table)
  }

  /**
   * Closes every connection; pending calls fail. Idempotent.
   * @returns {Promise<void>}
   */
  close () {
    if (this._closing) return this._closing
    this.closed = true
    for (const conn of this._connections.values()) conn.close()
    this._connections.clear()
    this._closing = Promise.resolve()
    return this._closing
  }

  // --- internals ---------------------------------------------------------------------------

  _connection (address, service) {
    const key = service + '@' + address
    let conn = this._connections.get(key)
    if (conn && !conn.closed) return conn
    const { host, port } = splitAddress(address)
    conn = new Connection({ host, port, service, user: this.options.user, connectTimeout: this.options.connectTimeout })
    conn.once('close', () => {
      if (this._connections.get(key) === conn) this._connections.delete(key)
    })
    this._connections.set(key, conn)
    return conn
  }

  /** One RPC, no retries; reports to the observer. */
  _call (address, service, method, request, timeoutMs) {
    if (this.closed) return Promise.reject(new HBaseError('HBASE_CLIENT_CLOSED', 'the HBase client is closed'))
    const m = METHODS[service][method]
    const promise = this._connection(address, service).call(m, request, timeoutMs)
    if (!this._onRpc) return promise
    const started = performance.now()
    return promise.then((res) => {
      this._onRpc({ method, server: address, ms: performance.now() - started })
      return res
    }, (err) => {
      this._onRpc({ method, server: address, ms: performance.now() - started, error: err })
      throw err
    })
  }

  _invoke (address, service, method, request, timeoutMs) {
    return this._call(address, service, method, request, timeoutMs).catch((err) => {
      if (err.code === 'HBASE_CONNECTION') this._locator.invalidateServer(address)
      throw err
    })
  }

  _rpcTimeout (deadline) {
    return Math.max(1, Math.min(this.options.rpcTimeout, deadline - Date.now()))
  }

  _pause (attempt, err) {
    const base = this.options.pause * BACKOFF[Math.min(attempt, BACKOFF.length - 1)] * (err && err.serverOverloaded ? 3 : 1)
    const jittered = base + Math.random() * base * 0.25
    return Math.min(this.options.maxPause, jittered)
  }

  /** Runs `attempt` until it succeeds, fails for good, or the deadline passes. */
  async _retry (what, deadline, attempt) {
    for (let n = 0; ; n++) {
      try {
        return await attempt()
      } catch (err) {
        if (this.closed) throw new HBaseError('HBASE_CLIENT_CLOSED', 'the HBase client is closed', { cause: err })
        if (!(err instanceof HBaseError) || !err.retryable) throw err
        const wait = this._pause(n, err)
        if (Date.now() + wait >= deadline) {
          throw new HBaseError('HBASE_TIMEOUT', `${what} did not succeed within its deadline after ${n + 1} attempt(s); last error: ${err.message}`, { retryable: true, cause: err })
        }
        await sleep(wait)
      }
    }
  }

  /** A single-row RPC against the region holding `key`, relocating and retrying as needed. */
  _regionOp (method, table, key, buildRequest, timeout) {
    const deadline = Date.now() + (timeout || this.options.operationTimeout)
    return this._retry(`${method} on ${table}`, deadline, async () => {
      const region = this._locator.cached(table, key) || await this._locator.locate(table, key, deadline)
      try {
        return await this._invoke(region.server, 'ClientService', method, buildRequest(region), this._rpcTimeout(deadline))
      } catch (err) {
        if (err.relocate) this._locator.invalidate(region)
        throw err
      }
    })
  }

  /**
   * Runs Get/Mutation actions grouped into one Multi per server, retrying only the actions that
   * failed retryably, until all settle or the deadline passes.
   */
  async _batch (table, actions, timeout) {
    const deadline = Date.now() + (timeout || this.options.operationTimeout)
    const results = new Array(actions.length).fill(null)
    let pending = actions.map((_, i) => i)
    const lastError = new Map()
    for (let attempt = 0; pending.length; attempt++) {
      const retry = []
      const byServer = new Map() // server → Map(region → indexes); regions are cached objects
      const group = (region, i) => {
        let regions = byServer.get(region.server)
        if (!regions) byServer.set(region.server, (regions = new Map()))
        const indexes = regions.get(region)
        if (indexes) indexes.push(i)
        else regions.set(region, [i])
      }
      // Cache hits are grouped synchronously; only misses pay for an async meta lookup.
      const misses = []
      for (const i of pending) {
        const region = this._locator.cached(table, actions[i].row)
        if (region) group(region, i)
        else misses.push(i)
      }
      if (misses.length) {
        await Promise.all(misses.map(async (i) => {
          try {
            group(await this._locator.locate(table, actions[i].row, deadline), i)
          } catch (err) {
            this._settle(results, retry, lastError, i, err)
          }
        }))
      }
      const calls = []
      for (const [server, regions] of byServer) {
        const groups = [...regions].map(([region, indexes]) => ({ region, indexes }))
        for (const chunk of this._chunks(groups)) calls.push(this._multi(server, chunk, actions, results, retry, lastError, deadline))
      }
      await Promise.all(calls)
      pending = retry
      if (!pending.length) break
      const wait = this._pause(attempt)
      if (this.closed || Date.now() + wait >= deadline) {
        for (const i of pending) {
          const cause = lastError.get(i)
          results[i] = this.closed
            ? new HBaseError('HBASE_CLIENT_CLOSED', 'the HBase client is closed', { cause })
            : new HBaseError('HBASE_TIMEOUT', `action did not succeed within its deadline; last error: ${cause && cause.message}`, { retryable: true, cause })
        }
        break
      }
      await sleep(wait)
    }
    return results
  }

  // Splits region groups so no Multi RPC carries more than maxBatchActions actions.
  _chunks (groups) {
    const max = this.options.maxBatchActions
    const chunks = []
    let current = []
    let size = 0
    for (const group of groups) {
      for (let from = 0; from < group.indexes.length; from += max) {
        const part = group.indexes.slice(from, from + max)
        if (size + part.length > max && current.length) {
          chunks.push(current)
          current = []
          size = 0
        }
        current.push({ region: group.region, indexes: part })
        size += part.length
      }
    }
    if (current.length) chunks.push(current)
    return chunks
  }

  async _multi (server, groups, actions, results, retry, lastError, deadline) {
    const request = {
      regionAction: groups.map(({ region, indexes }) => ({
        region: region.spec,
        action: indexes.map((i) => (actions[i].get ? { index: i, get: actions[i].get } : { index: i, mutation: actions[i].mutation }))
      }))
    }
    let res
    try {
      res = await this._invoke(server, 'ClientService', 'Multi', request, this._rpcTimeout(deadline))
    } catch (err) {
      for (const { region, indexes } of groups) {
        if (err.relocate) this._locator.invalidate(region)
        for (const i of indexes) this._settle(results, retry, lastError, i, err)
      }
      return
    }
    const regionResults = res.regionActionResult || []
    groups.forEach(({ region, indexes }, g) => {
      const rar = regionResults[g]
      if (!rar || rar.exception) {
        const err = rar
          ? remoteError(rar.exception.name, rar.exception.value && rar.exception.value.toString(), { server })
          : new HBaseError('HBASE_PROTOCOL', 'Multi response is missing a region result', { retryable: true })
        if (err.relocate) this._locator.invalidate(region)
        for (const i of indexes) this._settle(results, retry, lastError, i, err)
        return
      }
      let relocated = false
      for (const roe of rar.resultOrException) {
        const i = roe.index
        if (roe.exception) {
          const err = remoteError(roe.exception.name, roe.exception.value && roe.exception.value.toString(), { server })
          if (err.relocate && !relocated) {
            relocated = true
            this._locator.invalidate(region)
          }
          this._settle(results, retry, lastError, i, err)
        } else {
          results[i] = actions[i].get ? resultToRow(roe.result) : null
        }
      }
    })
  }

  _settle (results, retry, lastError, i, err) {
    if (err instanceof HBaseError && err.retryable && !this.closed) {
      lastError.set(i, err)
      retry.push(i)
    } else {
      results[i] = err
    }
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
