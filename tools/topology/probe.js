#!/usr/bin/env node
'use strict'

/**
 * Connectivity probe, run inside a namespace by index.js (`ip netns exec beacon_<host> node probe.js`):
 *
 *   probe.js serve <address> <timeoutMs>
 *     listens on address:0, prints {"port":N}, answers each line with
 *     {"seen":"<peer address>","echo":"<line>"}; exits when stdin closes or after timeoutMs.
 *   probe.js connect <timeoutMs> <name=address:port>...
 *     one TCP round trip to each target; prints [{name, ok, rttMs, seen, error}].
 *
 * `seen` is the source address the server saw: it proves that the bytes left through the
 * client's own namespace interface rather than some other path.
 */

const net = require('node:net')
const { performance } = require('node:perf_hooks')

function serve (address, timeoutMs) {
  const server = net.createServer((socket) => {
    socket.setEncoding('utf8')
    let buffered = ''
    socket.on('data', (chunk) => {
      buffered += chunk
      const nl = buffered.indexOf('\n')
      if (nl === -1) return
      socket.end(JSON.stringify({ seen: socket.remoteAddress, echo: buffered.slice(0, nl) }) + '\n')
    })
    socket.on('error', () => {})
  })
  const stop = () => {
    server.close()
    process.exit(0)
  }
  setTimeout(stop, timeoutMs).unref()
  process.stdin.on('end', stop).on('close', stop).resume()
  server.listen({ host: address, port: 0 }, () => {
    process.stdout.write(JSON.stringify({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }) + '\n')
  })
}

function roundTrip (name, host, port, timeoutMs) {
  return new Promise((resolve) => {
    const nonce = `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`
    const started = performance.now()
    let reply = ''
    const socket = net.connect({ host, port })
    const finish = (result) => {
      socket.destroy()
      resolve({ name, address: host, port, ...result })
    }
    socket.setTimeout(timeoutMs, () => finish({ ok: false, error: `no answer within ${timeoutMs} ms` }))
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(nonce + '\n'))
    socket.on('data', (chunk) => { reply += chunk })
    socket.on('end', () => {
      const rttMs = performance.now() - started
      try {
        const { seen, echo } = JSON.parse(reply)
        if (echo !== nonce) return finish({ ok: false, error: `echo mismatch: ${echo}` })
        finish({ ok: true, rttMs, seen })
      } catch {
        finish({ ok: false, error: `bad reply ${JSON.stringify(reply)}` })
      }
    })
    socket.on('error', (/** @type {NodeJS.ErrnoException} */ err) => finish({ ok: false, error: err.code || err.message }))
  })
}

async function connect (timeoutMs, targets) {
  const results = await Promise.all(targets.map((spec) => {
    const m = /^([\w-]+)=([\d.]+):(\d+)$/.exec(spec)
    if (!m) return { name: spec, ok: false, error: 'bad target, want name=address:port' }
    return roundTrip(m[1], m[2], Number(m[3]), timeoutMs)
  }))
  process.stdout.write(JSON.stringify(results) + '\n')
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === 'serve' && rest.length === 2) {
  serve(rest[0], Number(rest[1]))
} else if (mode === 'connect' && rest.length >= 1) {
  connect(Number(rest[0]), rest.slice(1))
} else {
  process.stderr.write('usage: probe.js serve <address> <timeoutMs> | connect <timeoutMs> <name=address:port>...\n')
  process.exitCode = 2
}
