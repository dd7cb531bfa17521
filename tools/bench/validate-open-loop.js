'use strict'

/**
 * Validates the open-loop generator (tools/bench/lib/open-loop.js) against trivial servers, each in its
 * own process so that generator and server do not share an event loop:
 *
 * 1. overhead: a server that answers at once, at a modest constant rate; the p50 latency is the
 *    generator's own cost plus one loopback round trip, and must stay well under 1 ms;
 * 2. queueing: a server that stalls 50 ms every 500 ms. Every request due during a stall waits for
 *    it, so ~10 % of requests see up to 50 ms and the open-loop p99 must show it; autocannon
 *    (closed loop) only has its in-flight requests stuck, sends nothing during the stall, and
 *    reports a p99 that hides it.
 *
 *   node tools/bench/validate-open-loop.js [--rate 1000] [--duration 2] [--out FILE.json]
 */

const path = require('node:path')
const fs = require('node:fs')
const { spawn } = require('node:child_process')
const { parseArgs } = require('node:util')
const autocannon = require('autocannon')
const { runOpenLoop } = require('./lib/open-loop')
const { firstJsonLine } = require('./lib/processes')

const FIXTURE = path.join(__dirname, 'lib', 'fixture-server.js')

async function withFixture (args, fn) {
  const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const { port } = await firstJsonLine(child, 10000, 'fixture server')
    return await fn(port)
  } finally {
    child.kill('SIGKILL')
  }
}

/**
 * @param {{ rate?: number, durationMs?: number, stallEveryMs?: number, stallMs?: number }} [options]
 * @returns {Promise<{ rate: number, durationMs: number, stallEveryMs: number, stallMs: number, overhead: any,
 *   stall: { openLoop: any, autocannon: any } }>}
 */
async function validateOpenLoop ({ rate = 1000, durationMs = 2000, stallEveryMs = 500, stallMs = 50 } = {}) {
  const next = () => ({ path: '/api/x.js?id=1&callback=cb' })
  const overhead = await withFixture(['fast'], async (port) => {
    // A short first pass warms the JIT of both processes; the second one is measured.
    await runOpenLoop({ host: '127.0.0.1', port, rate, durationMs: 500, connections: 4, next })
    return runOpenLoop({ host: '127.0.0.1', port, rate, durationMs, connections: 4, next })
  })
  const stall = await withFixture(['stall', String(stallEveryMs), String(stallMs)], async (port) => {
    const seconds = Math.max(2, Math.ceil((durationMs * 1.5) / 1000))
    const openLoop = await runOpenLoop({ host: '127.0.0.1', port, rate, durationMs: seconds * 1000, connections: 10, next })
    const ac = await autocannon({ url: `http://127.0.0.1:${port}${next().path}`, connections: 10, duration: seconds })
    return {
      openLoop,
      autocannon: {
        rps: ac.requests.average,
        p50: ac.latency.p50,
        p90: ac.latency.p90,
        p99: ac.latency.p99,
        max: ac.latency.max,
        requests: ac['2xx'] + ac.non2xx
      }
    }
  })
  return { rate, durationMs, stallEveryMs, stallMs, overhead, stall }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { rate: { type: 'string', default: '1000' }, duration: { type: 'string', default: '2' }, out: { type: 'string' } }
  })
  validateOpenLoop({ rate: Number(values.rate), durationMs: Number(values.duration) * 1000 }).then((r) => {
    const o = r.overhead
    console.log(`trivial server, ${r.rate} req/s for ${r.durationMs / 1000} s: achieved ${o.rps} ` +
      `req/s, p50 ${o.p50} ms, p99 ${o.p99} ms, max ${o.max} ms, late ${o.late}, errors ${o.errors}`)
    console.log(`server stalling ${r.stallMs} ms every ${r.stallEveryMs} ms:`)
    console.log(`  open loop  ${r.rate} req/s: p50 ${r.stall.openLoop.p50} ms, p90 ${r.stall.openLoop.p90} ms, p99 ` +
      `${r.stall.openLoop.p99} ms, max ${r.stall.openLoop.max} ms`)
    console.log(`  autocannon 10 connections (${Math.round(r.stall.autocannon.rps)} req/s): p50 ${r.stall.autocannon.p50} ` +
      `ms, p90 ${r.stall.autocannon.p90} ms, p99 ${r.stall.autocannon.p99} ms, max ${r.stall.autocannon.max} ms`)
    if (values.out) fs.writeFileSync(values.out, JSON.stringify(r, null, 2) + '\n')
  }, (err) => {
    console.error(err)
    process.exitCode = 1
  })
}

module.exports = { validateOpenLoop }
