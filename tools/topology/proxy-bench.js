#!/usr/bin/env node
'use strict'

/**
 * How much the delay proxy adds, and how exact its delay is, on loopback:
 *
 *   node tools/topology/proxy-bench.js [--trips 2000] [--delay-ms 3.5] [--out FILE.json]
 *
 * 1. Small request/response round trips (64 bytes each way) on one kept-alive connection to an
 *    echo server: direct, through the proxy at 0 ms, at the delay (precise and timer-only), and
 *    at the delay with ±10 % jitter. Reports p50/p90/p99 RTT and the increase over direct.
 * 2. CPU of the proxy process while 50 connections ping-pong through it for a few seconds.
 * 3. A 1 MiB stream through the proxy at the delay: byte order and throughput.
 *
 * The proxy runs as its own process (the CLI form), as it would in a benchmark.
 */

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawn } = require('node:child_process')
const { performance } = require('node:perf_hooks')
const { parseArgs } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { roundTrip } = require('./round-trip')

const PROXY_CLI = path.join(__dirname, 'delay-proxy.js')
const MESSAGE = Buffer.alloc(64, 'x')
const CLK_TCK = 100 // /proc/<pid>/stat times are in clock ticks; 100 on every Linux we run

/** An echo server on loopback: every chunk straight back. */
async function startEcho () {
  const server = net.createServer({ noDelay: true }, (socket) => {
    socket.on('error', () => {})
    socket.pipe(socket)
  })
  await new Promise((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(undefined)))
  return server
}

/** Starts the proxy CLI and waits for its "listening" line. */
async function startProxy (targetPort, extraArgs) {
  const child = spawn(process.execPath, [PROXY_CLI, '--target', `127.0.0.1:${targetPort}`, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const line = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))))
    })
    child.once('exit', (code) => reject(new Error(`proxy exited with ${code}`)))
  })
  return {
    port: line.listening.port,
    pid: child.pid,
    async stop () {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

function open (port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(socket))
    socket.once('error', reject)
  })
}

async function measureRtt (port, trips) {
  const socket = await open(port)
  for (let i = 0; i < Math.min(50, trips); i++) await roundTrip(socket, MESSAGE) // warm-up, includes the emulated handshake
  const rtts = []
  for (let i = 0; i < trips; i++) rtts.push(await roundTrip(socket, MESSAGE))
  socket.destroy()
  return summarize(rtts)
}

function summarize (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  const round = (x) => Math.round(x * 1000) / 1000
  return {
    n: sorted.length,
    min: round(sorted[0]),
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1]),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length)
  }
}

function cpuSeconds (pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK // utime, stime
}

/** `connections` clients ping-pong through the proxy for `seconds`; returns trips/s and proxy CPU. */
async function measureLoad (proxy, connections, seconds) {
  const sockets = await Promise.all(Array.from({ length: connections }, () => open(proxy.port)))
  for (const s of sockets) await roundTrip(s, MESSAGE)
  const cpu0 = cpuSeconds(proxy.pid)
  const t0 = performance.now()
  const stopAt = t0 + seconds * 1000
  let trips = 0
  const rtts = []
  await Promise.all(sockets.map(async (s) => {
    while (performance.now() < stopAt) {
      rtts.push(await roundTrip(s, MESSAGE))
      trips++
    }
  }))
  const elapsed = (performance.now() - t0) / 1000
  const cpu = cpuSeconds(proxy.pid) - cpu0
  for (const s of sockets) s.destroy()
  return {
    connections,
    tripsPerSecond: Math.round(trips / elapsed),
    proxyCpuPercent: Math.round((100 * cpu) / elapsed),
    rtt: summarize(rtts)
  }
}

/** 1 MiB of random bytes up through the proxy, echoed back down: same bytes, same order? */
async function measureStream (port, size) {
  const payload = crypto.randomBytes(size)
  const socket = await open(port)
  const started = performance.now()
  const chunks = []
  let got = 0
  const done = new Promise((resolve) => socket.on('data', (chunk) => {
    chunks.push(chunk)
    got += chunk.length
    if (got >= size) resolve()
  }))
  // Written in uneven pieces so that the proxy sees many chunks per direction.
  for (let offset = 0, i = 0; offset < size; i++) {
    const n = 1000 + (i * 7919) % 30000
    socket.write(payload.subarray(offset, offset + n))
    offset += n
  }
  await done
  const ms = performance.now() - started
  socket.destroy()
  return { bytes: size, sameOrder: Buffer.concat(chunks).equals(payload), ms: Math.round(ms), chunksBack: chunks.length }
}

async function main () {
  const { values } = parseArgs({
    options: {
      trips: { type: 'string', default: '2000' },
      'delay-ms': { type: 'string', default: '3.5' },
      'load-seconds': { type: 'string', default: '3' },
      out: { type: 'string' }
    }
  })
  const trips = Number(values.trips)
  const delayMs = Number(values['delay-ms'])
  const delayTrips = Math.max(100, Math.round(trips / 10))
  const echo = await startEcho()
  const echoPort = /** @type {import('node:net').AddressInfo} */ (echo.address()).port
  const log = (line) => process.stderr.write(line + '\n')
  const results = { node: process.version, cpus: require('node:os').availableParallelism(), delayMs, rtt: {}, load: {}, stream: {} }

  const scenarios = [
    ['proxy 0 ms', ['--delay-ms', '0'], trips],
    [`proxy ${delayMs} ms precise`, ['--delay-ms', String(delayMs)], delayTrips],
    [`proxy ${delayMs} ms timer-only`, ['--delay-ms', String(delayMs), '--timer-only'], delayTrips],
    [`proxy ${delayMs} ± ${delayMs / 10} ms`, ['--delay-ms', String(delayMs), '--jitter-ms', String(delayMs / 10)], delayTrips]
  ]
  log(`direct: ${trips} round trips`)
  results.rtt.direct = await measureRtt(echoPort, trips)
  for (const [name, args, n] of scenarios) {
    log(`${name}: ${n} round trips`)
    const proxy = await startProxy(echoPort, args)
    try {
      results.rtt[name] = { ...await measureRtt(proxy.port, n), addedP50: 0 }
    } finally {
      await proxy.stop()
    }
    results.rtt[name].addedP50 = Math.round((results.rtt[name].p50 - results.rtt.direct.p50) * 1000) / 1000
  }

  for (const [name, args] of [
    ['proxy 0 ms', ['--delay-ms', '0']],
    [`proxy ${delayMs} ms precise`, ['--delay-ms', String(delayMs)]],
    [`proxy ${delayMs} ms timer-only`, ['--delay-ms', String(delayMs), '--timer-only']]
  ]) {
    log(`${name}: 50 connections for ${values['load-seconds']} s`)
    const proxy = await startProxy(echoPort, args)
    try {
      results.load[name] = await measureLoad(proxy, 50, Number(values['load-seconds']))
    } finally {
      await proxy.stop()
    }
  }

  log(`1 MiB stream at ${delayMs} ms`)
  const proxy = await startProxy(echoPort, ['--delay-ms', String(delayMs)])
  try {
    results.stream = await measureStream(proxy.port, 1024 * 1024)
  } finally {
    await proxy.stop()
  }
  echo.close()
  await sleep(10)

  const rows = Object.entries(results.rtt).map(
    ([name, r]) => `| ${name} | ${r.n} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.addedP50 ?? '—'} |`
  )
  const loadRows = Object.entries(results.load).map(
    ([name, r]) => `| ${name} | ${r.connections} | ${r.tripsPerSecond} | ${r.rtt.p50} | ${r.rtt.p99} | ${r.proxyCpuPercent} % |`
  )
  console.log([
    `Delay proxy on loopback (node ${results.node}, ${results.cpus} CPUs), 64-byte round trips on one connection:`,
    '',
    '| path | trips | p50 ms | p90 ms | p99 ms | added p50 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'Load, 50 connections ping-ponging:',
    '',
    '| path | conns | trips/s | p50 ms | p99 ms | proxy CPU |',
    '|---|---:|---:|---:|---:|---:|',
    ...loadRows,
    '',
    `1 MiB echoed through the proxy at ${delayMs} ms: same bytes in order: ${results.stream.sameOrder}, ${results.stream.ms} ms, ` +
      `${results.stream.chunksBack} chunks back`
  ].join('\n'))
  if (values.out) fs.writeFileSync(values.out, JSON.stringify(results, null, 2) + '\n')
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
