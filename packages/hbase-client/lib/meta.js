'use strict'

// The hbase:meta row format and region key ranges: pure functions, no I/O.

const { types } = require('./protocol')
const { EMPTY } = require('./cells')

/** RegionSpecifier type: the region is named by its full name. */
const REGION_NAME = 1
const PB_MAGIC = Buffer.from('PBUF')
/** The family of meta's region columns. */
const INFO = Buffer.from('info')

/**
 * @typedef {{ name: Buffer, spec: object, table: string, startKey: Buffer, endKey: Buffer,
 *   server: string|null, info: object, offline: boolean, split: boolean }} Region
 * @typedef {Region & { server: string }} LocatedRegion a region assigned to a server, as the locator hands them out
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
 * @param {{ cell: Array<{ row: Buffer, family: Buffer, qualifier: Buffer, value: Buffer }> }} result
 *   protobuf Result of a meta row, raw
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
  // info came from a cell, so rowKey was set from one too.
  const name = /** @type {Buffer} */ (rowKey)
  return {
    name,
    spec: { type: REGION_NAME, value: name },
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
 * Whether `row` falls in the region's key range [startKey, endKey) (empty endKey = unbounded).
 * @param {{ startKey: Buffer, endKey: Buffer }} region
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

module.exports = { REGION_NAME, INFO, tableNameProto, tableNameString, parseMetaRow, regionContains, overlaps }
