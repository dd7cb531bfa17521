#!/usr/bin/env node
'use strict'

/**
 * A TCP proxy that adds a one-way delay (with optional uniform jitter) to every byte in each
 * direction: the stand-in for `tc netem delay` on a kernel without sch_netem. Put it between the
 * load generator (in `mon`) and the server (in `app`) to emulate a cross-zone link:
 *
 *   node tools/topology/delay-proxy.js --listen 198.18.0.20:4000 --target 198.18.0.10:4000 --delay-ms 3.5
 *
 * Every round trip through it costs 2 × delay. With `handshake` on (the default) the first bytes
 * of a connection also pay the TCP handshake a real link would cost (one more round trip), so
 * connection-per-request clients are not flattered; keep-alive connections pay it once.
 */

const net = require('node:net')
const { performance } = require('node:perf_hooks')
const { parseArgs } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { DelayLine } = require('./delay-line')

const DEFAULT_HIGH_WATER_MARK = 1024 * 1024
const MAX_DELAY_MS = 60000
const noop = () => {}

/**
 * @param {{ listen?: { host?: string, port?: number }, target: { host?: string, port: number },
 *   delayMs?: number, jitterMs?: number, handshake?: boolean, precise?: boolean,
 *   highWaterMark?: number, now?: () => number, random?: () => number }} options
 *   delayMs: one-way delay per direction; jitterMs: uniform ±jitter on each chunk's delay (order
 *   is kept, so a chunk behind a slow one waits for it); precise: sub-millisecond release times
 *   at the cost of a busy event loop while bytes are in flight (false: timers only, ±1 ms);
 *   highWaterMark: queued bytes per direction before the sender is paused
 * @returns {Promise<{ address: { host: string, port: number },
 *   stats (): { accepted: number, active: number, bytesUp: number, bytesDown: number },
 *   setDelay (delayMs: number): void, close (): Promise<void>, destroy (): void }>}
 *   close(): stops accepting, releases the bytes already accepted, then closes every
 *   connection; idempotent. destroy(): drops everything at once.
 */
async function createDelayProxy (options) {
  const validated = validate(options)
  let o = validated
  const connections = new Set()
  const totals = { accepted: 0, bytesUp: 0, bytesDown: 0 }
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    totals.accepted++
    connections.add(connect(client, o, totals, connections))
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: o.listen.host, port: o.listen.port }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { address: host, port } = /** @type {import('node:net').AddressInfo} */ (server.address())

  let closing = null
  return {
    address: { host, port },
    stats: () => ({ ...totals, active: connections.size }),
    /**
     * Sets the one-way delay for bytes that arrive from now on, on every connection (open and
     * future): a link that turns slow or heals under load.
     * @param {number} delayMs
     */
    setDelay (delayMs) {
      o = Object.freeze({ ...validated, delayMs: ms(delayMs, 'delayMs') })
      for (const c of connections) c.setDelay(o.delayMs)
    },
    close () {
      closing ??= (async () => {
        const stopped = new Promise((resolve) => server.close(() => resolve()))
        await Promise.all([...connections].map((c) => c.closeAfterFlush()))
        await stopped
      })()
      return closing
    },
    destroy () {
      server.close()
      for (const c of connections) c.destroy()
    }
  }
}

function connect (client, o, totals, connections) {
  const acceptedAt = o.now()
  const upstream = net.connect({ host: o.target.host, port: o.target.port, allowHalfOpen: true, noDelay: true })
  // Set once the pipes exist; the delay lines call them after each release, which is when room
  // may have appeared for a paused sender.
  let resumeClient = noop
  let resumeUpstream = noop
  const line = (dest, onFlush) => new DelayLine(dest, {
    delayMs: o.delayMs,
    jitterMs: o.jitterMs,
    precise: o.precise,
    now: o.now,
    random: o.random,
    onFlush,
    // A real client sends only after SYN and SYN-ACK (2 delays) and its data takes a third; the
    // server's first bytes leave after the SYN reached it (1 delay) and take a second.
    notBefore: o.handshake ? acceptedAt + (dest === upstream ? 3 : 2) * o.delayMs : -Infinity
  })
  const up = line(upstream, () => resumeClient())
  const down = line(client, () => resumeUpstream())

  const pipe = (source, dl, dest, counter) => {
    const resumeIfRoom = () => {
      if (source.isPaused() && !source.destroyed && dl.queuedBytes + dest.writableLength < o.highWaterMark) source.resume()
    }
    source.on('data', (chunk) => {
      totals[counter] += chunk.length
      dl.push(chunk)
      if (dl.queuedBytes + dest.writableLength >= o.highWaterMark) source.pause()
    })
    source.on('end', () => dl.end())
    source.on('error', noop) // handled by 'close' below
    dest.on('drain', resumeIfRoom)
    return resumeIfRoom
  }
  resumeClient = pipe(client, up, upstream, 'bytesUp')
  resumeUpstream = pipe(upstream, down, client, 'bytesDown')

  let closed = 0
  let onBothClosed
  const bothClosed = new Promise((resolve) => { onBothClosed = resolve })
  // A side that goes away without a FIN (reset, refused, error) takes the other side down, behind
  // the bytes it sent before, the way an RST arrives after the data.
  const onClose = (source, dl) => () => {
    if (!source.readableEnded) dl.abort()
    if (++closed < 2) return
    up.destroy()
    down.destroy()
    connections.delete(conn)
    onBothClosed()
  }
  client.on('close', onClose(client, up))
  upstream.on('close', onClose(upstream, down))

  const conn = {
    setDelay (delayMs) {
      up.setDelay(delayMs)
      down.setDelay(delayMs)
    },
    /** Lets the bytes already accepted out (bounded), then closes both sockets. */
    async closeAfterFlush () {
      const deadline = Date.now() + 3 * o.delayMs + o.jitterMs + 1000
      while ((!up.idle || !down.idle) && connections.has(conn) && Date.now() < deadline) await sleep(5)
      conn.destroy()
      await bothClosed
    },
    destroy () {
      up.destroy()
      down.destroy()
      client.destroy()
      upstream.destroy()
    }
  }
  return conn
}

function ms (value, name) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_DELAY_MS) {
    throw new RangeError(`delay proxy: ${name} must be 0..${MAX_DELAY_MS} ms, got ${JSON.stringify(value)}`)
  }
  return value
}

function validate (options) {
  if (!options || typeof options !== 'object') throw new TypeError('delay proxy: options are required')
  const known = ['listen', 'target', 'delayMs', 'jitterMs', 'handshake', 'precise', 'highWaterMark', 'now', 'random']
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`delay proxy: unknown option "${key}"`)
  }
  const {
    listen = {},
    target,
    delayMs = 0,
    jitterMs = 0,
    handshake = true,
    precise = true,
    highWaterMark = DEFAULT_HIGH_WATER_MARK
  } = options
  const port = (value, name, allowZero) => {
    if (!Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 65535) {
      throw new RangeError(`delay proxy: ${name} must be a port number, got ${JSON.stringify(value)}`)
    }
    return value
  }
  if (!target || typeof target !== 'object') throw new TypeError('delay proxy: target { host, port } is required')
  if (!Number.isInteger(highWaterMark) || highWaterMark < 1) {
    throw new RangeError(`delay proxy: highWaterMark must be a positive integer, got ${JSON.stringify(highWaterMark)}`)
  }
  return Object.freeze({
    listen: Object.freeze({ host: listen.host || '127.0.0.1', port: port(listen.port ?? 0, 'listen.port', true) }),
    target: Object.freeze({ host: target.host || '127.0.0.1', port: port(target.port, 'target.port', false) }),
    delayMs: ms(delayMs, 'delayMs'),
    jitterMs: ms(jitterMs, 'jitterMs'),
    handshake: Boolean(handshake),
    precise: Boolean(precise),
    highWaterMark,
    now: options.now || performance.now.bind(performance),
    random: options.random || Math.random
  })
}

function parseHostPort (value, name) {
  const m = /^(.*):(\d+)$/.exec(value || '')
  if (!m) throw new TypeError(`delay proxy: --${name} must be host:port, got ${JSON.stringify(value)}`)
  return { host: m[1].replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: Number(m[2]) }
}

async function main (argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string', default: '127.0.0.1:0' },
      target: { type: 'string' },
      'delay-ms': { type: 'string', default: '0' },
      'jitter-ms': { type: 'string', default: '0' },
      'no-handshake': { type: 'boolean', default: false },
      'timer-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false }
    }
  })
  if (values.help || !values.target) {
    console.error('usage: node tools/topology/delay-proxy.js --target HOST:PORT [--listen HOST:PORT] [--delay-ms 3.5] [--jitter-ms 0.5] ' +
      '[--no-handshake] [--timer-only]')
    return 2
  }
  const proxy = await createDelayProxy({
    listen: parseHostPort(values.listen, 'listen'),
    target: parseHostPort(values.target, 'target'),
    delayMs: Number(values['delay-ms']),
    jitterMs: Number(values['jitter-ms']),
    handshake: !values['no-handshake'],
    precise: !values['timer-only']
  })
  // One JSON line on stdout, for scripts that start the proxy and need its port.
  process.stdout.write(
    JSON.stringify({
      listening: proxy.address,
      target: values.target,
      delayMs: Number(values['delay-ms']),
      jitterMs: Number(values['jitter-ms'])
    }) + '\n'
  )
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve)
    process.once('SIGINT', resolve)
  })
  const t = setTimeout(() => proxy.destroy(), 5000).unref()
  await proxy.close()
  clearTimeout(t)
  const s = proxy.stats()
  console.error(`delay proxy: closed after ${s.accepted} connections, ${s.bytesUp} bytes up, ${s.bytesDown} bytes down`)
  return 0
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err) => {
    console.error(err.message)
    process.exitCode = 1
  })
}

module.exports = { createDelayProxy }
