'use strict'

// The response side of HBase's RPC framing on a real socket, for unit tests of the client's
// connection and pool with no JVM: it reads the preamble and the call frames, and `respond`
// answers them (frameFor builds an answer) however a test needs: in pieces, glued, late, never.

const net = require('node:net')
const protobuf = require('protobufjs')
const { types } = require('../../lib/protocol')
const { Connection } = require('../../lib/connection')

/**
 * One response frame, length prefix included: a GetResponse, or an exception header.
 * @param {number} callId
 * @param {object|null} message GetResponse fields
 * @param {object} [exception] ExceptionResponse fields
 * @returns {Buffer}
 */
function frameFor (callId, message, exception) {
  const writer = types.ResponseHeader.encodeDelimited(exception ? { callId, exception } : { callId })
  if (!exception) types.GetResponse.encodeDelimited(message, writer)
  const body = Buffer.from(writer.finish())
  const out = Buffer.alloc(4 + body.length)
  out.writeUInt32BE(body.length, 0)
  body.copy(out, 4)
  return out
}

/**
 * Runs `fn` with a Connection to a fake server that hands the call ids of each chunk it reads to
 * `respond`; closes both after.
 * @param {(socket: net.Socket, callIds: number[]) => void} respond
 * @param {(conn: Connection, address: string) => Promise<void>} fn
 * @returns {Promise<void>}
 */
async function withServer (respond, fn) {
  const server = net.createServer((socket) => {
    let buf = Buffer.alloc(0)
    let preambleSeen = false
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk])
      if (!preambleSeen) {
        if (buf.length < 10) return
        const headerLength = buf.readUInt32BE(6)
        if (buf.length < 10 + headerLength) return
        buf = buf.subarray(10 + headerLength)
        preambleSeen = true
      }
      const calls = []
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const size = buf.readUInt32BE(0)
        const reader = protobuf.Reader.create(buf.subarray(4, 4 + size))
        calls.push(types.RequestHeader.decodeDelimited(reader).callId)
        buf = buf.subarray(4 + size)
      }
      if (calls.length) respond(socket, calls)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {net.AddressInfo} */ (server.address())
  const conn = new Connection({ host: '127.0.0.1', port, service: 'ClientService', user: 'test', connectTimeout: 1000 })
  try {
    await fn(conn, `127.0.0.1:${port}`)
  } finally {
    conn.close()
    server.close()
  }
}

/** A Get's answer holding one cell of value `v`. */
const result = (v) => ({
  result: {
    cell: [{ row: Buffer.from('r'), family: Buffer.from('f'), qualifier: Buffer.from('q'), value: Buffer.from(v), timestamp: 1 }]
  }
})

/** A Get request the fake server answers (it never reads the body). */
const getRequest = { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }

module.exports = { frameFor, withServer, result, getRequest }
