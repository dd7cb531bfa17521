'use strict'

const net = require('node:net')

/**
 * Change streams a greedy client opens and holds (tools/bench/flood.js): raw sockets from one local
 * address, a few hundred connecting at a time, each sending its GET and reading the status
 * line; a 200 is held open (its heartbeats read and dropped), anything else is counted and
 * closed.
 * @param {{ port: number, localAddress: string, count: number, path: string, concurrency?: number }} options
 * @returns {Promise<{ summary: () => { asked: number, opened: number, byStatus: Record<string, number> }, close: () => void }>}
 */
async function openStreams ({ port, localAddress, count, path, concurrency = 200 }) {
  const held = []
  const byStatus = {}
  let next = 0

  function one () {
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress })
      let head = ''
      const settle = (status) => {
        byStatus[status] = (byStatus[status] || 0) + 1
        resolve()
      }
      socket.setEncoding('latin1')
      socket.on('error', () => { if (head !== null) settle('error') })
      socket.on('data', (chunk) => {
        if (head === null) return // a held stream: its bytes are read and dropped
        head += chunk
        const line = head.indexOf('\r\n')
        if (line === -1) return
        const status = head.slice(9, 12)
        head = null
        if (status === '200') held.push(socket)
        else socket.destroy()
        settle(status)
      })
      socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: beacon\r\nAccept: text/event-stream\r\n\r\n`))
    })
  }

  async function worker () {
    while (next < count) {
      next++
      await one()
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return {
    summary: () => ({ asked: count, opened: byStatus[200] || 0, byStatus: { ...byStatus } }),
    close () {
      for (const socket of held.splice(0)) socket.destroy()
    }
  }
}

module.exports = { openStreams }
