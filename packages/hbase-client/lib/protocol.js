'use strict'

const path = require('node:path')
const protobuf = require('protobufjs')
const { KEY_VALUE_CODEC, cellSize, writeCell, moveCellsToBlock, decodeCellBlock, attachCells } = require('./cell-block')
const { planMulti } = require('./multi-encoder')

/**
 * HBase RPC wire format (HBase 2.x, SIMPLE auth):
 *   connection preamble: "HBas" + version 0 + auth 0x50, then int32 BE length + ConnectionHeader
 *   each call:           int32 BE total length, delimited RequestHeader, delimited request
 *                        [, cell block of RequestHeader.cell_block_meta.length bytes]
 *   each response:       int32 BE total length, delimited ResponseHeader, delimited response
 *                        [, cell block of ResponseHeader.cell_block_meta.length bytes]
 * Cells travel inline in the protobuf unless the connection named a cell-block codec
 * (KeyValueCodec, see cell-block.js): then the server sends every result's cells in the block,
 * and PUT/DELETE mutations send theirs there too.
 */

const root = protobuf.loadSync(path.join(__dirname, 'proto', 'hbase.proto'))
root.resolveAll()

/** @type {Record<string, protobuf.Type>} */
const types = {}
// hbase.proto declares its messages in package hbase.pb, so that namespace has nested types.
const pb = /** @type {protobuf.Namespace} */ (root.lookup('hbase.pb'))
const nested = /** @type {NonNullable<protobuf.Namespace['nested']>} */ (pb.nested)
for (const name of Object.keys(nested)) {
  const t = root.lookup('hbase.pb.' + name)
  if (t instanceof protobuf.Type) types[name] = t
}

/** ServiceName → method name → [request type, response type] for the calls this client makes. */
const SERVICES = {
  ClientService: {
    Get: ['GetRequest', 'GetResponse'],
    Mutate: ['MutateRequest', 'MutateResponse'],
    Scan: ['ScanRequest', 'ScanResponse'],
    Multi: ['MultiRequest', 'MultiResponse']
  },
  ClientMetaService: {
    GetMetaRegionLocations: ['GetMetaRegionLocationsRequest', 'GetMetaRegionLocationsResponse'],
    GetActiveMaster: ['GetActiveMasterRequest', 'GetActiveMasterResponse'],
    GetClusterId: ['GetClusterIdRequest', 'GetClusterIdResponse']
  },
  MasterService: {
    CreateTable: ['CreateTableRequest', 'CreateTableResponse'],
    DisableTable: ['DisableTableRequest', 'DisableTableResponse'],
    DeleteTable: ['DeleteTableRequest', 'DeleteTableResponse'],
    GetTableDescriptors: ['GetTableDescriptorsRequest', 'GetTableDescriptorsResponse'],
    ModifyColumn: ['ModifyColumnRequest', 'ModifyColumnResponse'],
    MoveRegion: ['MoveRegionRequest', 'MoveRegionResponse'],
    SplitRegion: ['SplitTableRegionRequest', 'SplitTableRegionResponse'],
    MergeTableRegions: ['MergeTableRegionsRequest', 'MergeTableRegionsResponse'],
    SetBalancerRunning: ['SetBalancerRunningRequest', 'SetBalancerRunningResponse'],
    getProcedureResult: ['GetProcedureResultRequest', 'GetProcedureResultResponse']
  },
  AdminService: {
    GetServerInfo: ['GetServerInfoRequest', 'GetServerInfoResponse']
  }
}

// Method names are the wire names, case included (MasterService has a lower-case getProcedureResult).
// Resolve the type objects once so the hot path does no lookups.
/** @type {Record<string, Record<string, { name: string, request: protobuf.Type, response: protobuf.Type }>>} */
const METHODS = {}
for (const [service, methods] of Object.entries(SERVICES)) {
  METHODS[service] = {}
  for (const [method, [req, res]] of Object.entries(methods)) {
    METHODS[service][method] = { name: method, request: types[req], response: types[res] }
  }
}

/** The HBase client version this client speaks the protocol of (2.x), as a ConnectionHeader says it. */
const CLIENT_VERSION = Object.freeze({
  version: '2.0.0',
  url: '@beacon/hbase-client',
  revision: '',
  user: '',
  date: '',
  srcChecksum: '',
  versionMajor: 2,
  versionMinor: 0
})

const PREAMBLE = Buffer.from([0x48, 0x42, 0x61, 0x73, 0x00, 0x50]) // "HBas", version 0, SIMPLE auth

/**
 * Bytes a new connection sends before its first call.
 * @param {string} serviceName
 * @param {string} user
 * @param {boolean} [cellBlocks] name KeyValueCodec: cells travel in cell blocks both ways
 * @returns {Buffer}
 */
function connectionPreamble (serviceName, user, cellBlocks = false) {
  /** @type {Record<string, any>} */
  const fields = { userInfo: { effectiveUser: user }, serviceName }
  if (cellBlocks) {
    fields.cellBlockCodecClass = KEY_VALUE_CODEC
    // A RegionServer answers a Get in a cell block only to clients of version 1.3 or later
    // (older ones could not read one); without version info it answers inline.
    fields.versionInfo = CLIENT_VERSION
  }
  const header = types.ConnectionHeader.encode(fields).finish()
  const out = Buffer.allocUnsafe(PREAMBLE.length + 4 + header.length)
  PREAMBLE.copy(out, 0)
  out.writeUInt32BE(header.length, PREAMBLE.length)
  Buffer.from(header.buffer, header.byteOffset, header.length).copy(out, PREAMBLE.length + 4)
  return out
}

/**
 * Encodes one call frame (length prefix included). A Multi request of puts and plain gets, the
 * access log's batches, is written by the hand-written encoder (multi-encoder.js, the same bytes
 * protobufjs writes); everything else by protobufjs.
 * @param {number} callId
 * @param {{ name: string, request: protobuf.Type }} method
 * @param {object} request plain object of the request type
 * @param {number} timeoutMs server-side deadline hint
 * @param {boolean} [cellBlocks] the connection named a codec: mutations' cells go in a cell block
 * @returns {Buffer}
 */
function encodeCall (callId, method, request, timeoutMs, cellBlocks = false) {
  const fast = method.name === 'Multi' ? planMulti(request, cellBlocks) : null
  const moved = cellBlocks && !fast ? moveCellsToBlock(method.name, request) : null
  /** @type {Record<string, any>} */
  const header = { callId, methodName: method.name, requestParam: true, timeout: timeoutMs }
  let blockSize = fast ? fast.blockSize : 0
  if (moved) for (const cell of moved.cells) blockSize += cellSize(cell)
  if (blockSize) header.cellBlockMeta = { length: blockSize }
  const writer = protobuf.Writer.create()
  writer.uint32(0) // placeholder for the 4-byte length, patched below
  writer.uint32(0)
  writer.uint32(0)
  writer.uint32(0)
  types.RequestHeader.encodeDelimited(header, writer)
  if (!fast) method.request.encodeDelimited(moved ? moved.request : request, writer)
  const bytes = writer.finish()
  let frame
  if (fast || blockSize) {
    // The request (fast) and the block are written straight after the header, into the one frame buffer.
    frame = Buffer.allocUnsafe(bytes.length + (fast ? fast.length : blockSize))
    frame.set(bytes, 0)
    if (fast) {
      fast.write(frame, bytes.length)
    } else {
      let at = bytes.length
      // blockSize without fast: moveCellsToBlock moved cells, the only other source of a block.
      for (const cell of /** @type {NonNullable<typeof moved>} */ (moved).cells) at = writeCell(frame, at, cell)
    }
  } else {
    frame = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  }
  frame.writeUInt32BE(frame.length - 4, 0)
  return frame
}

/**
 * @typedef {{ exceptionClassName: string, stackTrace: string, doNotRetry: boolean,
 *   serverOverloaded?: boolean }} ExceptionResponse the fields of one read here
 * @typedef {{ callId: number, exception?: ExceptionResponse|null,
 *   cellBlockMeta?: { length: number }|null }} ResponseHeader the fields of one read here
 */

/**
 * Splits a response payload (length prefix removed) into header and reader positioned at the body.
 * @param {Buffer} payload
 * @returns {{ header: ResponseHeader, reader: protobuf.Reader }}
 */
function decodeResponseHeader (payload) {
  const reader = protobuf.Reader.create(payload)
  // decodeDelimited returns a ResponseHeader message: the fields of the typedef are its own.
  const header = /** @type {ResponseHeader} */ (/** @type {unknown} */ (types.ResponseHeader.decodeDelimited(reader)))
  return { header, reader }
}

/**
 * Decodes a response body after its header: the message, and the cells of its cell block given
 * to its Results (see cell-block.js).
 * @param {{ name: string, response: protobuf.Type }} method
 * @param {ResponseHeader} header decoded ResponseHeader
 * @param {protobuf.Reader} reader positioned at the body (from decodeResponseHeader)
 * @param {Buffer} payload the whole response (length prefix removed)
 * @returns {Record<string, any>}
 */
function decodeResponseBody (method, header, reader, payload) {
  const response = method.response.decodeDelimited(reader)
  const blockLength = header.cellBlockMeta ? header.cellBlockMeta.length : 0
  if (blockLength > 0) attachCells(method.name, response, decodeCellBlock(payload, reader.pos, blockLength))
  return response
}

module.exports = { types, METHODS, connectionPreamble, encodeCall, decodeResponseHeader, decodeResponseBody, protobuf }
