'use strict'

// The global Buffer is a getter in Node: a local binding keeps it off the hot path.
const { Buffer } = require('node:buffer')
const { TYPE, cellSizeOf, writeCellOf, copyBytes } = require('./cell-block')

/**
 * A hand-written encoder for the Multi requests batch.js sends most: puts (and plain gets)
 * grouped by region. It writes the bytes protobufjs writes for the same plain object (fields in
 * number order; an optional field when it is not null or undefined; a repeated one per element)
 * straight into the call frame, so a batch of puts costs no Writer ops, forks or per-message
 * copies. On a connection with cell blocks it writes each put's cells into the block as it goes,
 * in the order moveCellsToBlock (cell-block.js) would, and the put carries
 * associated_cell_count instead: no per-cell objects either.
 *
 * Two passes over the request: planMulti checks that every message is one it covers and sizes
 * them (a length-delimited message needs its length before its bytes), keeping the sizes in the
 * order the write pass needs them; write then writes. Anything not covered — other mutation
 * types, filters, time ranges, nonces, Longs, numbers protobufjs would encode as negative or
 * truncate, strings or non-Buffer arrays as bytes — makes planMulti return null, and protocol.js
 * encodes that request with protobufjs as before (errors included). The sizing functions say
 * "not covered" with NaN, which every sum they feed carries up to planMulti.
 *
 * Messages are plain objects as cells.js and batch.js build them: protobufjs also requires a
 * field to be an own property, which this encoder does not check.
 */

const MUTATE_PUT = 2
// An absent repeated field, once checked to be absent or an array, loops as this.
const NONE = /** @type {readonly never[]} */ (Object.freeze([]))

// Field keys, field number << 3 | wire type (0 varint, 2 length-delimited), all one byte.
const MULTI = { regionAction: 10 }
const RA = { region: 10, atomic: 16, action: 26 }
const REGION = { type: 8, value: 18 }
const ACTION = { index: 8, mutation: 18, get: 26 }
const MUT = { row: 10, mutateType: 16, columnValue: 26, timestamp: 32, durability: 48, associatedCellCount: 64 }
const CV = { family: 10, qualifierValue: 18 }
const QV = { qualifier: 10, value: 18, timestamp: 24 }
const GET = { row: 10, column: 18, maxVersions: 48, cacheBlocks: 56, existenceOnly: 80 }
const COLUMN = { family: 10, qualifier: 18 }

/** @param {any} n a uint32 field protobufjs writes as is */
const isUint32 = (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff
/** @param {any} n an int32 or enum field: a negative one takes 10 bytes, not covered */
const isInt32 = (n) => Number.isInteger(n) && n >= 0 && n <= 0x7fffffff
/** @param {any} n a uint64 field given as a number */
const isUint64 = (n) => Number.isSafeInteger(n) && n >= 0
/** @param {any} b a bytes field */
const isBytes = (b) => Buffer.isBuffer(b)

/**
 * Bytes of the varint of a non-negative safe integer.
 * @param {number} n
 * @returns {number}
 */
function varintSize (n) {
  if (n < 0x80) return 1
  if (n < 0x4000) return 2
  if (n < 0x200000) return 3
  if (n < 0x10000000) return 4
  if (n < 0x800000000) return 5
  if (n < 0x40000000000) return 6
  return n < 0x2000000000000 ? 7 : 8
}

/** @param {number} n content bytes @returns {number} bytes of a length-delimited field: key, length, content */
const delimited = (n) => 1 + varintSize(n) + n
/** @param {number} n @returns {number} bytes of a varint field: key and value */
const varintField = (n) => 1 + varintSize(n)
/** @param {any} b @returns {number} bytes of an optional bytes field (0: absent) */
const bytesField = (b) => (b == null ? 0 : isBytes(b) ? delimited(b.length) : NaN)
/** @param {any} n @param {(n: any) => boolean} ok @returns {number} bytes of an optional varint field */
const numberField = (n, ok) => (n == null ? 0 : ok(n) ? varintField(n) : NaN)
/** @param {any} b @returns {number} bytes of an optional bool field */
const boolField = (b) => (b == null ? 0 : 2)

/**
 * @typedef {{ sizes: number[], cellBlocks: boolean, blockSize: number }} Sizing sizes: of the
 *   RegionActions, Actions, MutationProtos (each followed by how many of its cells went to the
 *   block), ColumnValues and Gets, in the order write() meets them
 */

/**
 * Bytes of a repeated message field: each element's key, length and content.
 * @param {any} items the field's value (null/undefined: absent)
 * @param {(item: any, s: Sizing) => number} sizeOf an element's bytes
 * @param {Sizing} s
 * @returns {number}
 */
function sizeRepeated (items, sizeOf, s) {
  if (items == null) return 0
  if (!Array.isArray(items)) return NaN
  let size = 0
  for (let i = 0; i < items.length; i++) size += delimited(sizeOf(items[i], s))
  return size
}

/** @param {any} qv a put's QualifierValue @returns {number} its bytes inline */
function qualifierValueSize (qv) {
  if (qv == null || qv.deleteType != null) return NaN
  return bytesField(qv.qualifier) + bytesField(qv.value) + numberField(qv.timestamp, isUint64)
}

/** @param {any} cv @param {Sizing} s @returns {number} bytes of the ColumnValue */
function sizeColumnValue (cv, s) {
  if (cv == null || !isBytes(cv.family)) return NaN
  const size = delimited(cv.family.length) + sizeRepeated(cv.qualifierValue, qualifierValueSize, s)
  s.sizes.push(size)
  return size
}

/**
 * Sizes a put's cells as cell-block cells (adding to s.blockSize), as moveCellsToBlock moves them.
 * @param {any[]} cvs the put's ColumnValues
 * @param {Buffer} row
 * @param {Sizing} s
 * @returns {number} how many cells
 */
function sizeBlockCells (cvs, row, s) {
  let count = 0
  for (let i = 0; i < cvs.length; i++) {
    const cv = cvs[i]
    if (cv == null || !isBytes(cv.family) || (cv.qualifierValue != null &&
        !Array.isArray(cv.qualifierValue))) return NaN
    const qvs = cv.qualifierValue || NONE
    for (let j = 0; j < qvs.length; j++) {
      const qv = qvs[j]
      if (Number.isNaN(qualifierValueSize(qv))) return NaN
      s.blockSize += cellSizeOf(row, cv.family, qv.qualifier, qv.value)
      count++
    }
  }
  return count
}

/** @param {any} m @param {Sizing} s @returns {number} bytes of the MutationProto (NaN: not a put) */
function sizePut (m, s) {
  if (m.mutateType !== MUTATE_PUT || m.associatedCellCount != null || !isBytes(m.row)) return NaN
  const k = s.sizes.push(0, 0) - 2
  const cvs = m.columnValue
  if (cvs != null && !Array.isArray(cvs)) return NaN
  // A put without cells stays inline even on a cell-block connection (as moveCellsToBlock does).
  const moved = s.cellBlocks && cvs != null ? sizeBlockCells(cvs, m.row, s) : 0
  const cells = moved !== 0 ? varintField(moved) : sizeRepeated(cvs, sizeColumnValue, s)
  const size = delimited(m.row.length) + 2 + cells + // row, mutate_type PUT, cells
    numberField(m.timestamp, isUint64) + numberField(m.durability, isInt32)
  s.sizes[k] = size
  s.sizes[k + 1] = moved
  return size
}

/** @param {any} c a Column selector @returns {number} its bytes */
function columnSize (c) {
  if (c == null || !isBytes(c.family)) return NaN
  let size = delimited(c.family.length)
  if (c.qualifier != null && !Array.isArray(c.qualifier)) return NaN
  const qualifiers = c.qualifier || NONE
  for (let i = 0; i < qualifiers.length; i++) size += isBytes(qualifiers[i]) ? delimited(qualifiers[i].length) : NaN
  return size
}

/** @param {any} g @param {Sizing} s @returns {number} bytes of the Get (NaN: filter or time range) */
function sizeGet (g, s) {
  if (!isBytes(g.row) || g.filter != null || g.timeRange != null) return NaN
  const size = delimited(g.row.length) + sizeRepeated(g.column, columnSize, s) +
    numberField(g.maxVersions, isUint32) + boolField(g.cacheBlocks) + boolField(g.existenceOnly)
  s.sizes.push(size)
  return size
}

/** @param {any} a @param {Sizing} s @returns {number} bytes of the Action */
function sizeAction (a, s) {
  if (a == null) return NaN
  const k = s.sizes.push(0) - 1
  let size = numberField(a.index, isUint32)
  if (a.mutation != null) size += delimited(sizePut(a.mutation, s))
  if (a.get != null) size += delimited(sizeGet(a.get, s))
  s.sizes[k] = size
  return size
}

/** @param {{ type: number, value: Buffer }} region a RegionSpecifier @returns {number} its bytes */
const regionSize = (region) => varintField(region.type) + delimited(region.value.length)

/** @param {any} ra @param {Sizing} s @returns {number} bytes of the RegionAction */
function sizeRegionAction (ra, s) {
  const region = ra == null ? null : ra.region
  if (region == null || !isInt32(region.type) || !isBytes(region.value)) return NaN
  const k = s.sizes.push(0) - 1
  const size = delimited(regionSize(region)) + boolField(ra.atomic) + sizeRepeated(ra.action, sizeAction, s)
  s.sizes[k] = size
  return size
}

/** Writes what a plan sized: the protobuf at `at`, the cells at `block` (after the protobuf). */
class Cursor {
  /** @param {Buffer} buf @param {number} at @param {number} block @param {number[]} sizes */
  constructor (buf, at, block, sizes) {
    this.buf = buf
    this.at = at
    this.block = block
    this.sizes = sizes
    this.k = 0
  }

  /** @returns {number} the next size the plan kept */
  next () {
    return this.sizes[this.k++]
  }

  /** @param {number} n a non-negative safe integer */
  varint (n) {
    const buf = this.buf
    let at = this.at
    while (n > 0x7f) {
      buf[at++] = (n & 0x7f) | 0x80 // & keeps the low 7 bits of any safe integer
      n = Math.floor(n / 128)
    }
    buf[at++] = n
    this.at = at
  }

  /** A varint field. @param {number} key @param {number} n */
  field (key, n) {
    this.buf[this.at++] = key
    this.varint(n)
  }

  /** A bytes field. @param {number} key @param {Buffer} bytes */
  bytes (key, bytes) {
    this.field(key, bytes.length)
    this.at = copyBytes(this.buf, this.at, bytes)
  }
}

/** @param {any} m @param {Cursor} w */
function writePut (m, w) {
  w.field(ACTION.mutation, w.next())
  const moved = w.next()
  w.bytes(MUT.row, m.row)
  w.field(MUT.mutateType, MUTATE_PUT)
  const cvs = m.columnValue || NONE
  if (!moved) writeColumnValues(cvs, w)
  if (m.timestamp != null) w.field(MUT.timestamp, m.timestamp)
  if (m.durability != null) w.field(MUT.durability, m.durability)
  if (!moved) return
  w.field(MUT.associatedCellCount, moved)
  for (let i = 0; i < cvs.length; i++) {
    const { family, qualifierValue } = cvs[i]
    const qvs = qualifierValue || NONE
    for (let j = 0; j < qvs.length; j++) {
      const qv = qvs[j]
      w.block = writeCellOf(
        w.buf,
        w.block,
        m.row,
        family,
        qv.qualifier,
        qv.value,
        qv.timestamp ?? m.timestamp,
        TYPE.PUT
      )
    }
  }
}

/** A put's cells inline. @param {any[]} cvs @param {Cursor} w */
function writeColumnValues (cvs, w) {
  for (let i = 0; i < cvs.length; i++) {
    const cv = cvs[i]
    w.field(MUT.columnValue, w.next())
    w.bytes(CV.family, cv.family)
    const qvs = cv.qualifierValue || NONE
    for (let j = 0; j < qvs.length; j++) {
      const qv = qvs[j]
      w.field(CV.qualifierValue, qualifierValueSize(qv))
      if (qv.qualifier != null) w.bytes(QV.qualifier, qv.qualifier)
      if (qv.value != null) w.bytes(QV.value, qv.value)
      if (qv.timestamp != null) w.field(QV.timestamp, qv.timestamp)
    }
  }
}

/** @param {any} g @param {Cursor} w */
function writeGet (g, w) {
  w.field(ACTION.get, w.next())
  w.bytes(GET.row, g.row)
  const columns = g.column || NONE
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]
    w.field(GET.column, columnSize(c))
    w.bytes(COLUMN.family, c.family)
    const qualifiers = c.qualifier || NONE
    for (let j = 0; j < qualifiers.length; j++) w.bytes(COLUMN.qualifier, qualifiers[j])
  }
  if (g.maxVersions != null) w.field(GET.maxVersions, g.maxVersions)
  if (g.cacheBlocks != null) w.field(GET.cacheBlocks, g.cacheBlocks ? 1 : 0)
  if (g.existenceOnly != null) w.field(GET.existenceOnly, g.existenceOnly ? 1 : 0)
}

/** @param {any} ra @param {Cursor} w */
function writeRegionAction (ra, w) {
  w.field(MULTI.regionAction, w.next())
  const region = ra.region
  w.field(RA.region, regionSize(region))
  w.field(REGION.type, region.type)
  w.bytes(REGION.value, region.value)
  if (ra.atomic != null) w.field(RA.atomic, ra.atomic ? 1 : 0)
  const actions = ra.action || NONE
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]
    w.field(RA.action, w.next())
    if (a.index != null) w.field(ACTION.index, a.index)
    if (a.mutation != null) writePut(a.mutation, w)
    if (a.get != null) writeGet(a.get, w)
  }
}

/**
 * @typedef {object} MultiPlan a Multi request this encoder covers, sized
 * @property {number} blockSize bytes of its cell block (0: none)
 * @property {number} length bytes write() writes: the delimited request, then the cell block
 * @property {(buf: Buffer, at: number) => number} write writes them at `at`; returns the end
 */

/**
 * Sizes a MultiRequest for the hand-written encoder.
 * @param {any} request plain object of MultiRequest
 * @param {boolean} [cellBlocks] the connection named a codec: puts' cells go in a cell block
 * @returns {MultiPlan|null} null: not covered, encode with protobufjs
 */
function planMulti (request, cellBlocks = false) {
  if (request == null || request.nonceGroup != null) return null
  const ras = request.regionAction || NONE
  /** @type {Sizing} */
  const s = { sizes: [], cellBlocks, blockSize: 0 }
  const size = sizeRepeated(ras, sizeRegionAction, s)
  if (Number.isNaN(size)) return null
  const { sizes, blockSize } = s
  const head = varintSize(size)
  return {
    blockSize,
    length: head + size + blockSize,
    write (buf, at) {
      const w = new Cursor(buf, at, at + head + size, sizes)
      w.varint(size)
      for (let i = 0; i < ras.length; i++) writeRegionAction(ras[i], w)
      return w.block
    }
  }
}

module.exports = { planMulti }
