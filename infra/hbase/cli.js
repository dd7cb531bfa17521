#!/usr/bin/env node
'use strict'

// node infra/hbase/cli.js up|down|kill|wipe|status — a local standalone HBase for dev and tests.

const hbase = require('./index')

const USAGE = 'usage: node infra/hbase/cli.js up|down|kill|wipe|status'
const log = (line) => console.log(line)
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`

const COMMANDS = {
  async up (opts) {
    const r = await hbase.up(opts, { log })
    log(`hbase: up (${r.alreadyRunning ? 'was already running' : 'started'}, pid ${r.pid}) in ${seconds(r.startedMs)}; bootstrap ${r.bootstrap.join(',')}`)
  },
  async down (opts) {
    log('hbase: stopping (cluster shutdown, then SIGTERM; SIGKILL after 60 s)…')
    const r = await hbase.down(opts)
    log(r.wasRunning
      ? `hbase: stopped pid ${r.pid} in ${seconds(r.stopMs)}${r.forced ? ' (had to SIGKILL)' : ''}`
      : 'hbase: was not running')
  },
  async kill (opts) {
    const r = await hbase.kill(opts)
    log(r.wasRunning ? `hbase: killed pid ${r.pid} (SIGKILL)` : 'hbase: was not running')
  },
  async wipe (opts) {
    const r = await hbase.wipe(opts)
    log(`hbase: ${r.wasRunning ? `stopped pid ${r.pid} in ${seconds(r.stopMs)}, ` : ''}removed ${r.removed}`)
  },
  async status (opts) {
    const s = await hbase.status(opts)
    if (s.running) {
      log(`hbase: running, pid ${s.pid}, ${s.serving ? 'serving' : 'NOT accepting on the RegionServer port yet'}`)
    } else {
      log(`hbase: not running${s.serving ? ` (but something else accepts on ${s.host}:${s.rsPort})` : ''}`)
    }
    log(`  RegionServer ${s.host}:${s.rsPort}  master ${s.host}:${s.masterPort}  ZooKeeper ${s.host}:${s.zkPort}`)
    log(`  UI master ${s.masterInfoPort === -1 ? 'disabled' : s.masterInfoPort}  RegionServer ${s.rsInfoPort === -1 ? 'disabled' : s.rsInfoPort}`)
    log(`  data ${s.dataDir}\n  log  ${s.logFile}`)
  }
}

async function main (argv) {
  const command = Object.hasOwn(COMMANDS, argv[0]) && COMMANDS[argv[0]]
  if (!command || argv.length !== 1) {
    console.error(USAGE)
    return 2
  }
  try {
    await command(hbase.resolveOptions())
    return 0
  } catch (err) {
    console.error(`hbase ${argv[0]} failed: ${err.message}`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code })
