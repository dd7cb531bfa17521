#!/usr/bin/env node
'use strict'

// node tools/topology/cli.js up|down|status|env|exec — the three benchmark hosts as network namespaces.

const { parseArgs } = require('node:util')
const topology = require('./index')

const USAGE = `usage: node tools/topology/cli.js <command>
  up [--fallback] [--no-verify]   create beacon_app, beacon_mon, beacon_hbase on ${'$'}BEACON_TOPOLOGY_SUBNET and check TCP between them
                                  (BEACON_TOPOLOGY_EXTRA_HOSTS=app2,lb adds a second app host and a load-balancer host)
                                  (--fallback: if namespaces are unavailable, say so and exit 0: everything runs on loopback,
                                  127.0.0.1, and 127.0.0.11 / 127.0.0.40 for app2 / lb)
  down [--force]                  remove every beacon_ namespace and link (--force: SIGTERM processes still inside)
  status                          what exists now
  env                             shell exports with the host addresses:  eval "$(node tools/topology/cli.js env)"
  exec <app|mon|hbase|app2|lb> -- <command> [args...]
                                  run a command inside a host's namespace (pinned with taskset if BEACON_PIN_<HOST> is set)`

const log = (line) => console.log(line)

const COMMANDS = {
  async up (args) {
    const { values } = parseArgs({
      args,
      options: { fallback: { type: 'boolean', default: false }, 'no-verify': { type: 'boolean', default: false } }
    })
    const t0 = Date.now()
    const r = await topology.up({ allowFallback: values.fallback, verify: !values['no-verify'] })
    if (r.mode === 'loopback') {
      log(`topology: network namespaces unavailable (${r.reason}); fall back to ` +
        `loopback: ${Object.entries(r.hosts).map(([h, a]) => `${h} ${a}`).join(', ')}`)
      return 0
    }
    log(`topology: up in ${Date.now() - t0} ms (${r.actions.length ? `${r.actions.length} changes` : 'already in place, nothing changed'})`)
    log(`  bridge ${r.bridge.name} ${r.bridge.address}`)
    for (const [host, address] of Object.entries(r.hosts)) {
      const pin = topology.pin(host)
      log(`  ${host.padEnd(5)} ${address.padEnd(15)} netns ${r.namespaces[host]}${pin ? `  cpus ${pin}` : ''}`)
    }
    if (r.verified.length) {
      log(`  TCP round trips: ${r.verified.map((v) => `${v.from}->${v.to} ${v.rttMs.toFixed(2)} ms`).join(', ')}`)
    }
    log(`  netem: ${r.netem.available ? 'available' : `unavailable (${r.netem.reason}); use tools/topology/delay-proxy.js for latency`}`)
    return 0
  },

  async down (args) {
    const { values } = parseArgs({ args, options: { force: { type: 'boolean', default: false } } })
    const r = await topology.down({ force: values.force })
    if (!r.namespaces.length && !r.links.length) {
      log('topology: nothing to remove')
    } else {
      log(`topology: removed namespaces ${r.namespaces.join(', ') || 'none'}; links ${r.links.join(', ') || 'none'}`)
    }
    if (r.killed.length) log(`topology: stopped processes ${r.killed.join(', ')}`)
    return 0
  },

  async status (args) {
    parseArgs({ args, options: {} })
    const s = await topology.status()
    if (!s.available) {
      log(`topology: network namespaces unavailable (${s.reason}); loopback mode`)
      return 0
    }
    log(`topology: ${s.complete ? 'up' : 'not (completely) up'} on ${s.subnet}`)
    log(`  bridge ${s.bridge.name} ${s.bridge.address}: ` +
      `${!s.bridge.exists ? 'absent' : s.bridge.configured ? 'up' : s.bridge.up ? 'up, without this address' : 'down'}`)
    for (const [host, h] of Object.entries(s.hosts)) {
      const state = !h.exists ? 'absent' : h.configured ? 'configured' : 'exists, not configured'
      const pids = h.pids.length ? `  processes ${h.pids.join(' ')}` : ''
      log(`  ${host.padEnd(5)} ${h.address.padEnd(15)} netns ${h.netns}: ${state}${h.pin ? `  cpus ${h.pin}` : ''}${pids}`)
    }
    if (s.others.length) log(`  also present with the prefix (removed by down): ${s.others.join(', ')}`)
    return 0
  },

  async env (args) {
    parseArgs({ args, options: {} })
    const s = await topology.status()
    const mode = s.available && s.complete ? 'netns' : 'loopback'
    const address = (host) => (mode === 'netns' ? s.hosts[host].address : topology.loopbackAddress(host))
    const rsPort = process.env.BEACON_HBASE_RS_PORT || '16020'
    const masterPort = process.env.BEACON_HBASE_MASTER_PORT || '16000'
    const lines = [
      `BEACON_TOPOLOGY_MODE=${mode}`,
      ...Object.keys(s.hosts).map((host) => `BEACON_${host.toUpperCase()}_HOST=${address(host)}`),
      `BEACON_HBASE_BOOTSTRAP=${address('hbase')}:${rsPort},${address('hbase')}:${masterPort}`
    ]
    if (mode === 'loopback') console.error(`topology: not up${s.available ? '' : ` (${s.reason})`}; printing loopback addresses`)
    log(lines.map((l) => `export ${l}`).join('\n'))
    return 0
  },

  async exec (args) {
    const sep = args.indexOf('--')
    const [host] = args
    const command = sep === -1 ? args.slice(1) : args.slice(sep + 1)
    if (!host || !command.length || (sep !== -1 && sep !== 1)) {
      console.error(USAGE)
      return 2
    }
    const child = topology.exec(host, command[0], command.slice(1), { stdio: 'inherit' })
    // The child shares our terminal, so Ctrl-C reaches it directly; forward kill signals too.
    const forward = (signal) => () => child.kill(signal)
    process.on('SIGTERM', forward('SIGTERM'))
    process.on('SIGINT', () => {})
    return new Promise((resolve) => {
      child.on('error', (err) => {
        console.error(`topology exec: ${err.message}`)
        resolve(127)
      })
      child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? require('node:os').constants.signals[signal] : 0)))
    })
  }
}

async function main (argv) {
  const [name, ...args] = argv
  const command = Object.hasOwn(COMMANDS, name || '') && COMMANDS[name]
  if (!command) {
    console.error(USAGE)
    return 2
  }
  try {
    return await command(args)
  } catch (err) {
    console.error(`topology ${name} failed: ${err.message}`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code })
