'use strict'

const path = require('node:path')
const protobuf = require('protobufjs')

/**
 * HBase RPC wire format (HBase 2.x, SIMPLE auth, cells inline in protobuf — no cell-block codec):
 *   connection preamble: "HBas" + version 0 + auth 0x50, then int32 BE length + ConnectionHeader
 *   each call:           int32 BE total length, delimited RequestHeader, delimited request
 *   each response:       int32 BE total length, delimited ResponseHeader, delimited response
 */

const root = protobuf.loadSync(path.join(__dirname, 'proto', 'hbase.proto'))
root.resolveAll()

/** @type {Record<string, protobuf.Type>} */
const types = {}
for (const name of Object.keys(/** @type {protobuf.Namespace} */ (root.lookup('hbase.pb')).nested)) {
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
const METHODS = {}
for (const [service, methods] of Object.entries(SERVICES)) {
  METHODS[service] = {}
  for (const [method, [req, res]] of Object.entries(methods)) {
    METHODS[service][method] = { name: method, request: types[req], response: types[res] }
  }
}

const PREAMBLE = Buffer.from([0x48, 0x42, 0x61, 0x73, 0x00, 0x50]) // "HBas", version 0, SIMPLE auth

/**
 * Bytes a new connection sends before its first call.
 * @param {string} serviceName
 * @param {string} user
 * @returns {Buffer}
 */
function connectionPreamble (serviceName, user) {
  const header = types.ConnectionHeader.encode({ userInfo: { effectiveUser: user }, serviceName }).finish()
  const out = Buffer.allocUnsafe(PREAMBLE.length + 4 + header.length)
  PREAMBLE.copy(out, 0)
  out.writeUInt32BE(header.length, PREAMBLE.length)
  Buffer.from(header.buffer, header.byteOffset, header.length).copy(out, PREAMBLE.length + 4)
  return out
}

/**
 * Encodes one call frame (length prefix included).
 * @param {number} callId
 * @param {{ name: string, request: protobuf.Type }} method
 * @param {object} request plain object of the request type
 * @param {number} timeoutMs server-side deadline hint
 * @returns {Buffer}
 */
function encodeCall (callId, method, request, timeoutMs) {
  const writer = protobuf.Writer.create()
  writer.uint32(0) // placeholder for the 4-byte length, patched below
  writer.uint32(0)
  writer.uint32(0)
  writer.uint32(0)
  types.RequestHeader.encodeDelimited({ callId, methodName: method.name, requestParam: true, timeout: timeoutMs }, writer)
  method.request.encodeDelimited(request, writer)
  const bytes = writer.finish()
  const frame = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  frame.writeUInt32BE(frame.length - 4, 0)
  return frame
}

/**
 * Splits a response payload (length prefix removed) into header and reader positioned at the body.
 * @param {Buffer} payload
 * @returns {{ header: object, reader: protobuf.Reader }}
 */
function decodeResponseHeader (payload) {
  const reader = protobuf.Reader.create(payload)
  const header = types.ResponseHeader.decodeDelimited(reader)
  return { header, reader }
}

module.exports = { types, METHODS, connectionPreamble, encodeCall, decodeResponseHeader, protobuf }
