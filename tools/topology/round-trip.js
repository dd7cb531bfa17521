'use strict'

const { performance } = require('node:perf_hooks')

/**
 * Sends one message on a socket to an echo server and resolves with the milliseconds until the
 * same number of bytes came back (the delay proxy's benchmark and tests measure RTT with it).
 * @param {import('node:net').Socket} socket
 * @param {Buffer} [message]
 * @returns {Promise<number>}
 */
function roundTrip (socket, message = Buffer.alloc(64, 'x')) {
  return new Promise((resolve) => {
    let got = 0
    const started = performance.now()
    const onData = (chunk) => {
      got += chunk.length
      if (got < message.length) return
      socket.off('data', onData)
      resolve(performance.now() - started)
    }
    socket.on('data', onData)
    socket.write(message)
  })
}

module.exports = { roundTrip }
