'use strict'

const { EMPTY, toBytes, resultToRow, columnSelectors } = require('./cells')
const { clientClosed } = require('./errors')
const { regionOp } = require('./region-op')
const { allOf, firstKeyOnly, keyOnly, checkFilter } = require('./filters')

/**
 * @typedef {import('./cells').ProtoCell} ProtoCell
 * @typedef {import('./cells').Row} Row
 */

// The first cell of each row, without its value: what a count needs.
const KEYS_ONLY = [firstKeyOnly(), keyOnly()]

/**
 * @typedef {object} ScanOptions
 * @property {import('./cells').Bytesish} [startRow] first row (included); default the table's first
 * @property {import('./cells').Bytesish} [stopRow] row to stop before (excluded); default none
 * @property {string[]} [families]
 * @property {string[]} [columns] "family:qualifier"
 * @property {number} [limit] rows at most
 * @property {number} [caching] rows per scan RPC; default scanCaching
 * @property {number} [maxResultSize] bytes per scan RPC at most (the server's own limit
 *   otherwise); a row larger than that comes in parts, joined here
 * @property {boolean} [keysOnly] first cell of each row only, its value left empty
 * @property {import('./filters').Filter} [filter] a server-side filter (./filters.js): rows it
 *   drops never leave the RegionServer
 * @property {number} [timeout] ms for opening each region's scanner, retries included
 * @property {string} [kind] the tag its RPCs count under (traffic.js)
 */

/**
 * Scans rows in key order, paging `caching` rows per RPC, across regions, one array of rows per
 * RPC answered (never an empty one): what a caller that goes through every row wants, since a
 * row then costs no await of its own. Ending the loop early closes the server-side scanner. A
 * scanner lost to a region move, a server restart or an expired lease (any retryable error) is
 * reopened after the last row returned.
 *
 * The scan says it handles heartbeats and partial rows, as HBase's own client does (the server
 * sends heartbeats only to a client that takes both): a RegionServer that has found nothing to
 * return within half the RPC timeout (a filter dropping most rows) answers with what it has,
 * maybe nothing, maybe the first cells of a row, and the scan goes on instead of the call timing
 * out. The cells of a row that came in parts are joined before the row is yielded.
 * @param {import('./region-op').Core} core
 * @param {string} table
 * @param {ScanOptions} [opts]
 * @param {string} [kind] the tag its RPCs count under (default opts.kind)
 * @returns {AsyncGenerator<import('./cells').Row[], void, void>}
 */
async function * scanBatches (core, table, opts = {}, kind = opts.kind) {
  const { pool, locator, policy, options } = core
  const stopRow = opts.stopRow != null ? toBytes(opts.stopRow, 'stopRow') : EMPTY
  let startRow = opts.startRow != null ? toBytes(opts.startRow, 'startRow') : EMPTY
  let includeStart = true
  let remaining = opts.limit != null && opts.limit > 0 ? opts.limit : Infinity
  const caching = opts.caching || options.scanCaching
  const column = columnSelectors(opts)
  const filter = scanFilter(opts)
  /** @type {{ region: import('./meta').LocatedRegion, id: any }|null} */
  let scanner = null
  /** @type {ProtoCell[]|null} the cells of a row whose rest is still to come */
  let partial = null
  const flags = { clientHandlesHeartbeats: true, clientHandlesPartials: true }
  try {
    for (;;) {
      const rows = Math.min(caching, remaining)
      let res
      if (!scanner) {
        /** @type {Record<string, any>} */
        const scan = { startRow, stopRow, includeStartRow: includeStart, caching: rows }
        if (column) scan.column = column
        if (filter) scan.filter = filter
        if (opts.maxResultSize != null && opts.maxResultSize > 0) scan.maxResultSize = opts.maxResultSize
        /** @type {import('./meta').LocatedRegion|undefined} */
        let region
        res = await regionOp(core, 'Scan', table, startRow, (r) => {
          region = r
          return { region: r.spec, scan, numberOfRows: rows, ...flags }
        }, opts.timeout, kind)
        // regionOp resolved, so the build callback ran and set region.
        scanner = { region: /** @type {import('./meta').LocatedRegion} */ (region), id: res.scannerId }
      } else {
        try {
          res = await pool.call(
            scanner.region.server,
            'ClientService',
            'Scan',
            { scannerId: scanner.id, numberOfRows: rows, ...flags },
            options.rpcTimeout,
            kind
          )
        } catch (caught) {
          const err = /** @type {{ retryable?: boolean, relocate?: boolean }} */ (caught)
          if (!err.retryable) throw err
          // Reopen after the last row we returned; the old scanner is gone or unusable.
          if (err.relocate) locator.invalidate(scanner.region)
          scanner = null
          partial = null
          continue
        }
      }
      /** @type {import('./cells').Row[]} */
      let complete = []
      partial = joinPartials(
        res.results || [],
        partial,
        complete,
        res.moreResults === false || res.moreResultsInRegion === false
      )
      if (complete.length > 0) {
        if (policy.aborted) throw clientClosed()
        if (complete.length > remaining) complete = complete.slice(0, remaining)
        remaining -= complete.length
        startRow = complete[complete.length - 1].row
        includeStart = false
        yield complete
        if (remaining <= 0) return
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
    if (scanner && !pool.closed) {
      pool
        .call(
          scanner.region.server,
          'ClientService',
          'Scan',
          { scannerId: scanner.id, numberOfRows: 0, closeScanner: true },
          options.rpcTimeout,
          kind
        )
        .catch(() => {})
    }
  }
}

/**
 * The rows of scanBatches() one at a time.
 * @param {import('./region-op').Core} core
 * @param {string} table
 * @param {ScanOptions} [opts]
 * @param {string} [kind] the tag its RPCs count under (default opts.kind)
 * @returns {AsyncGenerator<import('./cells').Row, void, void>}
 */
async function * scanRows (core, table, opts = {}, kind = opts.kind) {
  for await (const rows of scanBatches(core, table, opts, kind)) yield * rows
}

/**
 * Rows of one scan response, the parts of a row that came in partial results joined. A partial
 * row followed by another row's cells, or by the end of its region, was complete after all (the
 * server stops a row partway when its size limit is hit, then a filter such as FirstKeyOnlyFilter
 * drops the rest): it is a row of its own, as HBase's own client takes it.
 * @param {Array<{ cell?: ProtoCell[], partial?: boolean }>} results
 * @param {ProtoCell[]|null} partial cells of a row still to complete, from the response before
 * @param {import('./cells').Row[]} rows where the complete rows go
 * @param {boolean} regionEnds the response is the region's last
 * @returns {ProtoCell[]|null} the cells of a row still to complete after this response
 */
function joinPartials (results, partial, rows, regionEnds) {
  for (const result of results) {
    const cells = result.cell || []
    if (partial && cells.length && !cells[0].row.equals(partial[0].row)) {
      rows.push(/** @type {Row} */ (resultToRow({ cell: partial }))) // partial[0] exists: a Row
      partial = null
    }
    if (result.partial) {
      partial = partial ? partial.concat(cells) : cells.slice()
      continue
    }
    const row = resultToRow(partial ? { cell: partial.concat(cells) } : result)
    partial = null
    if (row) rows.push(row)
  }
  if (!partial || !partial.length) return null
  if (!regionEnds) return partial
  rows.push(/** @type {Row} */ (resultToRow({ cell: partial }))) // partial not empty: a Row
  return null
}

/**
 * The filter a scan sends: the caller's, and/or the keys-only pair.
 * @param {ScanOptions} opts
 * @returns {import('./filters').Filter|null}
 */
function scanFilter (opts) {
  if (opts.filter != null) checkFilter(opts.filter)
  if (!opts.keysOnly) return opts.filter || null
  return opts.filter ? allOf(opts.filter, ...KEYS_ONLY) : allOf(...KEYS_ONLY)
}

/**
 * Counts rows (first key of each row only, so values never travel).
 * @param {import('./region-op').Core} core
 * @param {string} table
 * @param {ScanOptions} [opts]
 * @param {string} [kind] the tag its RPCs count under (default opts.kind)
 * @returns {Promise<number>}
 */
async function countRows (core, table, opts = {}, kind = opts.kind) {
  let n = 0
  for await (const row of scanRows(core, table, { ...opts, keysOnly: true, caching: opts.caching || 5000 }, kind)) {
    n += row ? 1 : 0
  }
  return n
}

module.exports = { scanRows, scanBatches, countRows, joinPartials }
