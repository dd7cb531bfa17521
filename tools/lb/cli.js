#!/usr/bin/env node
'use strict'

// node tools/lb/cli.js config|run — HAProxy in front of beacon's app hosts (see tools/topology/README.md).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { startLoadBalancer, haproxyConfig } = require('./index')

const USAGE = `usage: node tools/lb/cli.js <config|run> --listen HOST:PORT --server NAME=HOST:PORT[/ADMIN_PORT] [--server ...] [--dir DIR]
  config   print the haproxy.cfg
  run      write it into DIR (default: a new temp dir), run haproxy in the foreground and print every
           change of a host's state, until SIGINT/SIGTERM
  ADMIN_PORT is where the host's /readyz answers (beacon's ADMIN_PORT; it must listen on an address
  HAProxy reaches: ADMIN_HOST). BEACON_HAPROXY names the binary if it is not /usr/sbin/haproxy.`

/** "host:port" -> { host, port } */
function hostPort (s, what) {
  const m = /^(.+):(\d+)$/.exec(s || '')
  if (!m) throw new TypeError(`${what} must be HOST:PORT (got ${JSON.stringify(s)})`)
  return { host: m[1], port: Number(m[2]) }
}

/** "name=host:port/adminPort" -> server */
function parseServer (s) {
  const m = /^([^=]+)=(.+?)(?:\/(\d+))?$/.exec(s)
  if (!m) throw new TypeError(`--server must be NAME=HOST:PORT[/ADMIN_PORT] (got ${JSON.stringify(s)})`)
  return { name: m[1], ...hostPort(m[2], '--server'), ...(m[3] ? { checkPort: Number(m[3]) } : {}) }
}

async function main (argv) {
  const [command, ...rest] = argv
  const { values } = parseArgs({
    args: rest,
    options: { listen: { type: 'string' }, server: { type: 'string', multiple: true }, dir: { type: 'string' } }
  })
  if (!['config', 'run'].includes(command) || !values.listen || !values.server) {
    console.error(USAGE)
    return 2
  }
  const options = { listen: hostPort(values.listen, '--listen'), servers: values.server.map(parseServer) }
  if (command === 'config') {
    process.stdout.write(haproxyConfig({ ...options, statsSocket: path.resolve(values.dir || '.', 'haproxy.sock') }))
    return 0
  }
  const dir = values.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-lb-'))
  const lb = await startLoadBalancer({ ...options, dir })
  console.log(`lb: haproxy pid ${lb.pid} on ${options.listen.host}:${options.listen.port}, config ${lb.configFile}`)
  let last = ''
  const watch = setInterval(async () => {
    const now = (await lb.servers().catch(() => [])).map((s) => `${s.name} ${s.status} (${s.checkStatus})`).join(', ')
    if (now && now !== last) console.log(`lb: ${new Date().toISOString()} ${now}`)
    last = now || last
  }, 250)
  await new Promise((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  clearInterval(watch)
  await lb.stop()
  if (!values.dir) fs.rmSync(dir, { recursive: true, force: true })
  return 0
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err) => {
  console.error(`lb: ${err.message}`)
  process.exitCode = 1
})
