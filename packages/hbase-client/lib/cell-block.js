'use strict'

// The global Buffer is a getter in Node: a local binding keeps it off the hot path.
const { Buffer } = require('node:buffer')
const { HBaseError, badArgument } = require('./errors')

/**
 * Cell blocks with HBase's KeyValueCodec: the cells of a call travel after its protobuf messages
 * in the same frame, as HBase's own client sends them, instead of inside the protobuf.
 *
 * The codec is named once per connection (ConnectionHeader.cell_block_codec_class). A request's
 * header then says how long its block is (RequestHeader.cell_block_meta.length) and each
 * MutationProto whose cells moved there says how many are its own (associated_cell_count), in
 * order. A response does the same (ResponseHeader.cell_block_meta; Result.associated_cell_count;
 * a scan's cells_per_result), and once the codec is named the server sends every result's cells
 * that way (a Get's only to a client that says it is version 1.3 or later: protocol.js sends a
 * version with the codec).
 *
 * One cell in the block (KeyValueCodec writes no tags over RPC; all integers big-endian):
 *   int32 length of what follows (8 + key length + value length)
 *   int32 key length, int32 value length
 *   key:   int16 row length, row, int8 family length, family, qualifier (the rest of the key
 *          before the last 9 bytes), int64 timestamp, int8 type
 *   value
 */

/** The codec class HBase loads for this connection (in hbase-common). */
const KEY_VALUE_CODEC = 'org.apache.hadoop.hbase.codec.KeyValueCodec'

/** KeyValue type bytes (the same numbers as the protobuf CellType). */
const TYPE = Object.freeze({ PUT: 4, DELETE: 8, DELETE_FAMILY_VERSION: 10, DELETE_COLUMN: 12, DELETE_FAMILY: 14 })

// MutationProto.MutationType and .DeleteType → the KeyValue type of each cell.
const MUTATE_PUT = 2
const MUTATE_DELETE = 3
const DELETE_TYPE_TO_KV = [TYPE.DELETE, TYPE.DELETE_COLUMN, TYPE.DELETE_FAMILY, TYPE.DELETE_FAMILY_VERSION]

// HConstants.LATEST_TIMESTAMP (Long.MAX_VALUE): "now", stamped by the RegionServer.
const LATEST_HI = 0x7fffffff
const LATEST_LO = 0xffffffff
const TWO_32 = 2 ** 32
const EMPTY = Buffer.alloc(0)
// Per cell, besides row, family, qualifier and value: 4 (cell length) + 8 (key and value
// lengths) + 2 (row length) + 1 (family length) + 8 (timestamp) + 1 (type).
const CELL_OVERHEAD = 24
// Below this many bytes a loop beats the native copy (copyBytes).
const SHORT_COPY = 32
// One-byte families and qualifiers (beacon's 'l:e', 'r'), decoded as one shared Buffer each
// instead of a view per cell: a scan of the access log decodes a cell per row. Never written to.
const ONE_BYTE = Array.from({ length: 256 }, (_, b) => Buffer.from([b]))

/**
 * @typedef {{ row: Buffer, family: Buffer, qualifier?: Buffer|null, value?: Buffer|null,
 *   timestamp?: number|null, type: number }} BlockCell one cell to encode; timestamp absent:
 *   LATEST (the server's clock)
 * @typedef {{ row: Buffer, family: Buffer, qualifier: Buffer, value: Buffer, timestamp: number,
 *   cellType: number }} DecodedCell shaped as a protobuf Cell, so Results read the same either way
 * @typedef {{ qualifier?: Buffer|null, value?: Buffer|null, timestamp?: number|null,
 *   deleteType?: number|null }} QualifierValue of a request's MutationProto, as cells.js builds it
 * @typedef {{ family: Buffer, qualifierValue: QualifierValue[] }} ColumnValue
 * @typedef {{ row: Buffer, mutateType: number, columnValue?: ColumnValue[], timestamp?: number|null,
 *   durability?: number|null, associatedCellCount?: number }} Mutation a request's MutationProto
 * @typedef {{ action: Array<{ mutation?: Mutation }> }} RegionAction the part of one a Multi request moves
 * @typedef {{ mutation?: Mutation, regionAction?: RegionAction[] }} MutatingRequest a Mutate or Multi request
 * @typedef {{ associatedCellCount: number, cell?: DecodedCell[] }} BlockResult a decoded Result
 */

/**
 * Bytes one cell takes in a block.
 * @param {BlockCell} cell
 * @returns {number}
 */
function cellSize (cell) {
  return cellSizeOf(cell.row, cell.family, cell.qualifier, cell.value)
}

/**
 * cellSize from the parts of a cell, so an encoder can size a cell without building one.
 * @param {Buffer} row
 * @param {Buffer} family
 * @param {Buffer|null|undefined} qualifier
 * @param {Buffer|null|undefined} value
 * @returns {number}
 */
function cellSizeOf (row, family, qualifier, value) {
  if (row.length > 0x7fff) throw badArgument(`row of ${row.length} bytes is longer than HBase allows (32767)`)
  if (family.length > 0x7f) throw badArgument(`family of ${family.length} bytes is longer than HBase allows (127)`)
  return CELL_OVERHEAD + row.length + family.length + (qualifier ? qualifier.length : 0) + (value ? value.length : 0)
}

/**
 * Writes one cell at `at`; returns the offset after it.
 * @param {Buffer} buf
 * @param {number} at
 * @param {BlockCell} cell
 * @returns {number}
 */
function writeCell (buf, at, cell) {
  return writeCellOf(buf, at, cell.row, cell.family, cell.qualifier, cell.value, cell.timestamp, cell.type)
}

/**
 * writeCell from the parts of a cell (sized by cellSizeOf first).
 * @param {Buffer} buf
 * @param {number} at
 * @param {Buffer} row
 * @param {Buffer} family
 * @param {Buffer|null|undefined} qualifierOrNull
 * @param {Buffer|null|undefined} valueOrNull
 * @param {number|null|undefined} ts absent: LATEST (the server's clock)
 * @param {number} type
 * @returns {number}
 */
function writeCellOf (buf, at, row, family, qualifierOrNull, valueOrNull, ts, type) {
  const qualifier = qualifierOrNull || EMPTY
  const value = valueOrNull || EMPTY
  const keyLength = 2 + row.length + 1 + family.length + qualifier.length + 9
  if (ts != null && (!Number.isSafeInteger(ts) || ts < 0)) {
    throw badArgument(`timestamp ${ts} must be a non-negative integer`)
  }
  // Byte stores and copyBytes rather than writeInt32BE/copy: a cell is a few short fields, where
  // the calls cost more than the bytes (the access log writes one cell per logged request).
  writeUint32(buf, at, 8 + keyLength + value.length)
  writeUint32(buf, at + 4, keyLength)
  writeUint32(buf, at + 8, value.length)
  buf[at + 12] = row.length >>> 8
  buf[at + 13] = row.length & 0xff
  let p = copyBytes(buf, at + 14, row)
  buf[p++] = family.length
  p = copyBytes(buf, p, family)
  p = copyBytes(buf, p, qualifier)
  writeUint32(buf, p, ts == null ? LATEST_HI : Math.floor(ts / TWO_32))
  writeUint32(buf, p + 4, ts == null ? LATEST_LO : ts % TWO_32)
  buf[p + 8] = type
  return copyBytes(buf, p + 9, value)
}

/**
 * @param {Buffer} buf
 * @param {number} at
 * @param {number} n 0..2^32-1, written big-endian
 */
function writeUint32 (buf, at, n) {
  buf[at] = n >>> 24
  buf[at + 1] = (n >>> 16) & 0xff
  buf[at + 2] = (n >>> 8) & 0xff
  buf[at + 3] = n & 0xff
}

/**
 * Copies `bytes` into `buf` at `at`: a loop for short ones (cheaper than the native call for row
 * keys, families and qualifiers), the native copy for longer ones.
 * @param {Buffer} buf
 * @param {number} at
 * @param {Uint8Array} bytes
 * @returns {number} the offset after them
 */
function copyBytes (buf, at, bytes) {
  const n = bytes.length
  if (n < SHORT_COPY) {
    for (let i = 0; i < n; i++) buf[at + i] = bytes[i]
  } else {
    buf.set(bytes, at)
  }
  return at + n
}

/**
 * Encodes cells as one KeyValueCodec cell block.
 * @param {BlockCell[]} cells
 * @returns {Buffer}
 */
function encodeCellBlock (cells) {
  let size = 0
  for (const cell of cells) size += cellSize(cell)
  const buf = Buffer.allocUnsafe(size)
  let at = 0
  for (const cell of cells) at = writeCell(buf, at, cell)
  return buf
}

/**
 * Decodes the cells of a block. Row, family, qualifier and value are views into `buf`, not copies
 * (a one-byte family or qualifier: a Buffer shared by every cell that has it; read, never write).
 * @param {Buffer} buf
 * @param {number} [offset]
 * @param {number} [length]
 * @returns {DecodedCell[]}
 */
function decodeCellBlock (buf, offset = 0, length = buf.length - offset) {
  const end = offset + length
  if (end > buf.length) throw protocolError(`cell block of ${length} bytes overruns its frame`)
  const cells = []
  let at = offset
  while (at < end) {
    if (end - at < 4 + 8 + 12) throw protocolError(`truncated cell at byte ${at - offset} of the cell block`)
    const cellEnd = at + 4 + buf.readInt32BE(at)
    const keyLength = buf.readInt32BE(at + 4)
    const valueLength = buf.readInt32BE(at + 8)
    const rowLength = buf.readUInt16BE(at + 12)
    let p = at + 14
    const row = buf.subarray(p, p + rowLength)
    p += rowLength
    const familyLength = buf[p++]
    const family = familyLength === 1 ? ONE_BYTE[buf[p]] : buf.subarray(p, p + familyLength)
    p += familyLength
    const qualifierLength = keyLength - 2 - rowLength - 1 - familyLength - 9
    if (qualifierLength < 0 || valueLength < 0 || cellEnd > end || at + 12 + keyLength + valueLength > cellEnd) {
      throw protocolError(`malformed cell at byte ${at - offset} of the cell block`)
    }
    const qualifier = qualifierLength === 1 ? ONE_BYTE[buf[p]] : buf.subarray(p, p + qualifierLength)
    p += qualifierLength
    const timestamp = buf.readInt32BE(p) * TWO_32 + buf.readUInt32BE(p + 4)
    const cellType = buf[p + 8]
    p += 9
    cells.push({ row, family, qualifier, value: buf.subarray(p, p + valueLength), timestamp, cellType })
    at = cellEnd // anything after the value (tags) is skipped
  }
  return cells
}

/**
 * The cells of an inline PUT or DELETE MutationProto, as block cells; null for other types.
 * @param {Mutation} mutation
 * @returns {BlockCell[]|null}
 */
function mutationCells (mutation) {
  const put = mutation.mutateType === MUTATE_PUT
  if (!put && mutation.mutateType !== MUTATE_DELETE) return null
  /** @type {BlockCell[]} */
  const cells = []
  for (const cv of mutation.columnValue || []) {
    for (const qv of cv.qualifierValue || []) {
      cells.push({
        row: mutation.row,
        family: cv.family,
        qualifier: qv.qualifier,
        value: put ? qv.value : null,
        timestamp: qv.timestamp ?? mutation.timestamp,
        type: put ? TYPE.PUT : DELETE_TYPE_TO_KV[qv.deleteType || 0]
      })
    }
  }
  return cells
}

/**
 * A mutation whose cells travel in the block: the same header fields, a count instead of cells.
 * @param {Mutation} mutation
 * @param {number} count
 * @returns {Mutation}
 */
function withoutCells (mutation, count) {
  /** @type {Mutation} */
  const out = { row: mutation.row, mutateType: mutation.mutateType, associatedCellCount: count }
  if (mutation.durability != null) out.durability = mutation.durability
  if (mutation.timestamp != null) out.timestamp = mutation.timestamp
  return out
}

/**
 * Moves the cells of a Mutate or Multi request's PUT/DELETE mutations into a cell block. The
 * request given is not changed. Mutations without cells (a whole-row delete) and other
 * mutation types stay inline.
 * @param {string} methodName wire name: "Mutate" and "Multi" carry mutations
 * @param {MutatingRequest} request plain object of the request type
 * @returns {{ request: object, cells: BlockCell[] }} cells empty: nothing moved, send as is
 */
function moveCellsToBlock (methodName, request) {
  /** @type {BlockCell[]} */
  const cells = []
  const move = (/** @type {Mutation} */ mutation) => {
    const own = mutationCells(mutation)
    if (!own || own.length === 0) return mutation
    for (const cell of own) cells.push(cell)
    return withoutCells(mutation, own.length)
  }
  if (methodName === 'Mutate' && request.mutation) {
    const mutation = move(request.mutation)
    return cells.length ? { request: { ...request, mutation }, cells } : { request, cells }
  }
  if (methodName !== 'Multi') return { request, cells }
  const regionAction = (request.regionAction || []).map((ra) => {
    const before = cells.length
    const action = ra.action.map((a) => (a.mutation ? { ...a, mutation: move(a.mutation) } : a))
    return cells.length > before ? { ...ra, action } : ra
  })
  return cells.length ? { request: { ...request, regionAction }, cells } : { request, cells }
}

/**
 * Gives the Results of a decoded response the cells that came in its cell block, in the order
 * the server wrote them (each Result takes its associated_cell_count; a scan's cells_per_result
 * become its Results), so the callers read `result.cell` as when cells come inline.
 * @param {string} methodName wire name of the call
 * @param {Record<string, any>} response decoded protobuf response (changed in place)
 * @param {DecodedCell[]} cells
 * @returns {void}
 */
function attachCells (methodName, response, cells) {
  let next = 0
  const take = (/** @type {number} */ count) => {
    if (next + count > cells.length) {
      throw protocolError(`${methodName} response claims more cells than its cell block holds (${cells.length})`)
    }
    const own = cells.slice(next, next + count)
    next += count
    return own
  }
  const fill = (/** @type {BlockResult|null|undefined} */ result) => {
    if (result && result.associatedCellCount > 0) result.cell = take(result.associatedCellCount)
  }
  if (methodName === 'Multi') {
    for (const rar of response.regionActionResult || []) {
      for (const roe of rar.resultOrException || []) fill(roe.result)
    }
  } else if (methodName === 'Scan') {
    /** @type {number[]} */
    const counts = response.cellsPerResult || []
    /** @type {boolean[]} */
    const partial = response.partialFlagPerResult || []
    if (counts.length) response.results = counts.map((n, i) => ({ cell: take(n), partial: Boolean(partial[i]) }))
  } else {
    fill(response.result)
  }
  if (next !== cells.length) {
    throw protocolError(
      `${methodName} response left ${cells.length - next} of ${cells.length} cell-block cells unclaimed`
    )
  }
}

/**
 * @param {string} message
 * @returns {HBaseError}
 */
function protocolError (message) {
  return new HBaseError('HBASE_PROTOCOL', message)
}

module.exports = {
  KEY_VALUE_CODEC,
  TYPE,
  encodeCellBlock,
  decodeCellBlock,
  cellSize,
  cellSizeOf,
  writeCell,
  writeCellOf,
  copyBytes,
  moveCellsToBlock,
  attachCells
}
