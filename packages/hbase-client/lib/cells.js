'use strict'

// The global Buffer is a getter in Node: a local binding keeps it off the hot path (every put).
const { Buffer } = require('node:buffer')
const { badArgument } = require('./errors')

const EMPTY = Buffer.alloc(0)
const PUT = 2
const DELETE = 3
const DELETE_MULTIPLE_VERSIONS = 1
const DELETE_FAMILY = 2

/**
 * @typedef {{ family: string, qualifier: string, value: Buffer, timestamp: number }} Cell
 * @typedef {{ row: Buffer, cells: Cell[] }} Row
 * @typedef {Buffer|Uint8Array|string|number} Bytesish
 * @typedef {{ row: Buffer, family: Buffer, qualifier: Buffer, value: Buffer,
 *   timestamp?: import('long')|number|null }} ProtoCell a protobuf Cell, inline or from a cell block
 * @typedef {{ cell?: ProtoCell[]|null }} ProtoResult the part of a protobuf Result read here
 * @typedef {import('./cell-block').Mutation} Mutation
 * @typedef {import('./cell-block').ColumnValue} ColumnValue
 * @typedef {import('./cell-block').QualifierValue} QualifierValue
 */

/**
 * Row keys, families, qualifiers and values: a Buffer as is, a string as UTF-8, a number as its
 * decimal string.
 * @param {Bytesish} value
 * @param {string} what name used in the error
 * @returns {Buffer}
 */
function toBytes (value, what = 'value') {
  if (Buffer.isBuffer(value)) return value
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  if (typeof value === 'number' && Number.isFinite(value)) return Buffer.from(String(value), 'utf8')
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  throw badArgument(`${what} must be a Buffer, string or number`)
}

// Families and qualifiers are a handful of short strings repeated on every put: encode each once.
const nameCache = new Map()
const NAME_CACHE_MAX = 4096

/**
 * Like toBytes, for column family and qualifier names, with a bounded cache for strings.
 * @param {Bytesish} name
 * @param {string} what
 * @returns {Buffer}
 */
function nameBytes (name, what) {
  if (typeof name !== 'string') return toBytes(name, what)
  let bytes = nameCache.get(name)
  if (bytes === undefined) {
    bytes = Buffer.from(name, 'utf8')
    if (nameCache.size < NAME_CACHE_MAX) nameCache.set(name, bytes)
  }
  return bytes
}

/**
 * @param {import('long')|number|undefined|null} value uint64 from protobufjs
 * @returns {number}
 */
function toNumber (value) {
  if (value == null) return 0
  return typeof value === 'number' ? value : value.toNumber()
}

// One-byte ASCII family and qualifier names ('l', 'e'), as strings: decoded once, not per cell.
const ASCII_NAMES = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i))

/** @param {Buffer} bytes a family or qualifier @returns {string} its UTF-8 text */
function nameText (bytes) {
  return bytes.length === 1 && bytes[0] < 128 ? ASCII_NAMES[bytes[0]] : bytes.toString('utf8')
}

/**
 * Converts a protobuf Result to a Row, or null when it holds no cells (row absent).
 * @param {ProtoResult|null|undefined} result
 * @returns {Row|null}
 */
function resultToRow (result) {
  if (!result || !result.cell || result.cell.length === 0) return null
  const cells = new Array(result.cell.length)
  for (let i = 0; i < cells.length; i++) {
    const c = result.cell[i]
    cells[i] = {
      family: nameText(c.family),
      qualifier: nameText(c.qualifier),
      value: c.value,
      timestamp: toNumber(c.timestamp)
    }
  }
  return { row: result.cell[0].row, cells }
}

/**
 * The newest cell of one column in a Row.
 * @param {Row|null} row
 * @param {string} family
 * @param {string} qualifier
 * @returns {Cell|undefined}
 */
function findCell (row, family, qualifier) {
  if (!row) return undefined
  let best
  for (const cell of row.cells) {
    if (cell.family === family &&
        cell.qualifier === qualifier && (!best || cell.timestamp > best.timestamp)) best = cell
  }
  return best
}

/**
 * Builds protobuf Column selectors from `families` (['c']) and `columns` (['c:json']).
 * @param {{ families?: string[], columns?: string[] }} opts
 * @returns {object[]|undefined}
 */
function columnSelectors ({ families, columns } = {}) {
  if (!families && !columns) return undefined
  const byFamily = new Map()
  for (const family of families || []) byFamily.set(family, [])
  for (const column of columns || []) {
    const at = column.indexOf(':')
    if (at <= 0) throw badArgument(`column "${column}" must be "family:qualifier"`)
    const family = column.slice(0, at)
    if (!byFamily.has(family)) byFamily.set(family, [])
    const qualifiers = byFamily.get(family)
    // A whole family selected explicitly wins over single qualifiers.
    if (!(families || []).includes(family)) qualifiers.push(Buffer.from(column.slice(at + 1), 'utf8'))
  }
  return [...byFamily].map(([family, qualifiers]) => ({ family: Buffer.from(family, 'utf8'), qualifier: qualifiers }))
}

/**
 * @param {Buffer} row
 * @param {{ families?: string[], columns?: string[], maxVersions?: number }} [opts]
 * @returns {{ row: Buffer, column?: object[], maxVersions?: number }} protobuf Get
 */
function buildGet (row, opts = {}) {
  /** @type {{ row: Buffer, column?: object[], maxVersions?: number }} */
  const get = { row }
  const column = columnSelectors(opts)
  if (column) get.column = column
  if (opts.maxVersions) get.maxVersions = opts.maxVersions
  return get
}

/**
 * Put cells: `{ family: { qualifier: value } }` or `[{ family, qualifier, value, timestamp? }]`.
 * @param {Buffer} row
 * @param {Record<string, Record<string, Bytesish>>|
 *   Array<{family: string, qualifier: Bytesish, value: Bytesish, timestamp?: number}>} cells
 * @param {{ durability?: number }} [opts]
 * @returns {Mutation} protobuf MutationProto
 */
function buildPut (row, cells, opts = {}) {
  const columnValue = Array.isArray(cells) ? groupCells(cells) : familyColumns(cells)
  if (columnValue.length === 0) throw badArgument('a put needs at least one cell')
  /** @type {Mutation} */
  const mutation = { row, mutateType: PUT, columnValue }
  if (opts.durability != null) mutation.durability = opts.durability
  return mutation
}

/**
 * ColumnValues of `{ family: { qualifier: value } }`: each family once already, so no grouping
 * (the access log's shape: one put per logged request, built with no map or closure).
 * @param {any} cells
 * @returns {ColumnValue[]}
 */
function familyColumns (cells) {
  /** @type {ColumnValue[]} */
  const columnValue = []
  if (!cells || typeof cells !== 'object') return columnValue
  for (const family in cells) {
    const columns = cells[family]
    if (!columns || typeof columns !== 'object') {
      throw badArgument(`cells.${family} must be an object of qualifier → value`)
    }
    const qualifierValue = []
    for (const qualifier in columns) {
      qualifierValue.push({ qualifier: nameBytes(qualifier, 'qualifier'), value: toBytes(columns[qualifier], 'value') })
    }
    if (qualifierValue.length) columnValue.push({ family: nameBytes(family, 'family'), qualifierValue })
  }
  return columnValue
}

/**
 * ColumnValues of `[{ family, qualifier, value, timestamp? }]`, cells of one family grouped in
 * the order the families first appear.
 * @param {Array<{family: string, qualifier: Bytesish, value: Bytesish, timestamp?: number}>} cells
 * @returns {ColumnValue[]}
 */
function groupCells (cells) {
  /** @type {ColumnValue[]} */
  const columnValue = []
  const familyIndex = new Map()
  for (const c of cells) {
    let i = familyIndex.get(c.family)
    if (i === undefined) {
      i = columnValue.length
      familyIndex.set(c.family, i)
      columnValue.push({ family: nameBytes(c.family, 'family'), qualifierValue: [] })
    }
    /** @type {QualifierValue} */
    const qv = { qualifier: nameBytes(c.qualifier, 'qualifier'), value: toBytes(c.value, 'value') }
    if (c.timestamp != null) qv.timestamp = c.timestamp
    columnValue[i].qualifierValue.push(qv)
  }
  return columnValue
}

/**
 * Delete a whole row, whole families, or all versions of some columns; with `timestamp`, only
 * the versions written at or before it (HBase keeps later ones).
 * @param {Buffer} row
 * @param {{ families?: string[], columns?: string[], timestamp?: number }} [opts]
 * @returns {object} protobuf MutationProto
 */
function buildDelete (row, opts = {}) {
  /** @type {Record<string, any>} */
  const mutation = { row, mutateType: DELETE, columnValue: [] }
  const stamp = opts.timestamp != null ? { timestamp: opts.timestamp } : {}
  if (opts.timestamp != null) mutation.timestamp = opts.timestamp
  for (const family of opts.families || []) {
    mutation.columnValue.push({
      family: toBytes(family, 'family'),
      qualifierValue: [{ deleteType: DELETE_FAMILY, ...stamp }]
    })
  }
  for (const column of opts.columns || []) {
    const at = column.indexOf(':')
    if (at <= 0) throw badArgument(`column "${column}" must be "family:qualifier"`)
    mutation.columnValue.push({
      family: Buffer.from(column.slice(0, at), 'utf8'),
      qualifierValue: [{
        qualifier: Buffer.from(column.slice(at + 1), 'utf8'),
        deleteType: DELETE_MULTIPLE_VERSIONS,
        ...stamp
      }]
    })
  }
  return mutation
}

module.exports = { EMPTY, toBytes, toNumber, resultToRow, findCell, columnSelectors, buildGet, buildPut, buildDelete }
