'use strict'

/**
 * The benchmark's baseline: a bare node:http cluster answering the same fixed JSONP that
 * sample1 serves, with no parsing, validation or framework at all — the ceiling for this
 * machine and process count. Not part of the product.
 *
 *   node tools/bench/baseline-server.js <port> <workers> [host]
 */

const cluster = /** @type {import('node:cluster').Cluster} */ (/** @type {unknown} */ (require('node:cluster')))
const http = require('node:http')
const fs = require('node:fs')
const path = require('node:path')
const { publicPlane: { renderBody }, toggles: { serializeConfig } } = require('../../index.js')

const port = Number(process.argv[2] || 4200)
const workers = Number(process.argv[3] || 1)
const host = process.argv[4] || '127.0.0.1'

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork()
  let up = 0
  cluster.on('listening', () => { if (++up === workers) console.log(`baseline listening on ${port}`) })
  // Waits for the workers: one run with --cpu-prof writes its profile as it exits.
  const stop = () => {
    const workers = Object.values(cluster.workers)
    if (!workers.length) process.exit(0)
    let left = workers.length
    for (const w of workers) {
      w.once('exit', () => { if (--left === 0) process.exit(0) })
      w.kill()
    }
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
} else {
  process.on('SIGTERM', () => process.exit(0))
  const value = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'config', 'fixed', 'sample1.json'), 'utf8'))
  const body = renderBody({ id: '1', isDefault: false, configJson: serializeConfig(value), callback: 'EXAMPLE.process' })
  const headers = {
    'Content-Type': 'application/javascript; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff'
  }
  http.createServer((req, res) => {
    res.writeHead(200, headers)
    res.end(body)
  }).listen(port, host)
}
