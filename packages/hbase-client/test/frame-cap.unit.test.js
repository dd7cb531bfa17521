'use strict'

// A peer's 4-byte frame length is not trusted: a frame over maxFrameBytes fails the connection
// (HBASE_PROTOCOL) before it is buffered, over a real loopback socket to a crafted server.

const net = require('node:net')
const { Connection } = require('../lib/connection')
const { DEFAULTS } = require('../lib/options')

/** A server that answers every connection with a frame header of `length` bytes, then closes it. */
function craftedServer (length) {
  const server = net.createServer((socket) => {
    const header = Buffer.alloc(4)
    header.writeUInt32BE(length)
    socket.on('error', () => {})
    socket.end(header)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function closeOf (length, maxFrameBytes) {
  const server = await craftedServer(length)
  const conn = new Connection({
    host: '127.0.0.1',
    port: server.address().port,
    service: 'ClientService',
    user: 'test',
    connectTimeout: 2000,
    maxFrameBytes
  })
  try {
    return await new Promise((resolve) => conn.once('close', resolve))
  } finally {
    server.close()
  }
}

test('a frame length over the cap fails the connection with HBASE_PROTOCOL, naming both sizes', async () => {
  const err = await closeOf(4 * 1024 * 1024 * 1024 - 1, 256 * 1024 * 1024)
  expect(err).toMatchObject({ code: 'HBASE_PROTOCOL', retryable: true })
  expect(err.message).toMatch(/response frame of 4294967295 bytes from 127\.0\.0\.1:\d+ is over the 268435456-byte cap/)
})

test('a frame under the cap is waited for, not refused: the connection fails only as the peer closes it', async () => {
  const err = await closeOf(1024, 2048)
  expect(err.code).toBe('HBASE_CONNECTION')
})

test('the default cap is 256 MiB', () => {
  expect(DEFAULTS.maxFrameBytes).toBe(256 * 1024 * 1024)
})
