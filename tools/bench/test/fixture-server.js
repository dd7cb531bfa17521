'use strict'

/**
 * Trivial HTTP servers that the load generators are validated against (not the product):
 *
 *   node tools/bench/lib/fixture-server.js fast            answers at once
 *   node tools/bench/lib/fixture-server.js stall 500 50    blocks its event loop for 50 ms every 500 ms
 *
 * Prints one JSON line `{"port":N}` once listening (port 0 = any free port; `--port N` to pick).
 * A stall blocks the whole process, like a long GC pause or a synchronous hiccup would.
 */

const http = require('node:http')
const { parseArgs } = require('node:util')

const BODY = '/**/ typeof cb === \'function\' && cb({"id":"1"});'

/**
 * @param {{ mode?: 'fast'|'stall', everyMs?: number, stallMs?: number, port?: number, host?: string }} [options]
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
async function startFixture ({ mode = 'fast', everyMs = 500, stallMs = 50, port = 0, host = '127.0.0.1' } = {}) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/javascript', 'Content-Length': Buffer.byteLength(BODY) })
    res.end(BODY)
  })
  let timer = null
  if (mode === 'stall') {
    timer = setInterval(() => {
      const until = Date.now() + stallMs
      while (Date.now() < until) { /* the stall: nothing else runs */ }
    }, everyMs)
  }
  await new Promise((resolve) => server.listen(port, host, () => resolve(undefined)))
  return {
    port: /** @type {import('node:net').AddressInfo} */ (server.address()).port,
    close: () => new Promise((resolve) => {
      clearInterval(timer)
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

if (require.main === module) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } }
  })
  const [mode = 'fast', everyMs = '500', stallMs = '50'] = positionals
  startFixture({
    mode: /** @type {'fast'|'stall'} */ (mode),
    everyMs: Number(everyMs),
    stallMs: Number(stallMs),
    port: Number(values.port),
    host: values.host
  }).then((f) => {
    process.stdout.write(JSON.stringify({ port: f.port }) + '\n')
    process.on('SIGTERM', () => f.close().then(() => process.exit(0)))
  })
}

module.exports = { startFixture }
