#!/usr/bin/env node
'use strict'

// node tools/dev-hbase/cli.js up|down|kill|restart|wipe|status — a local HBase for dev and tests:
// standalone, or with BEACON_HBASE_REGIONSERVERS=N a cluster (ZooKeeper, master(s), N RegionServers).

const hbase = require('./index')

const USAGE = `usage: node tools/dev-hbase/cli.js <command> [target]
  up                     start (or complete) the instance, create tables, seed; wait until served
  down                   orderly shutdown (cluster shutdown, then SIGTERM; SIGKILL after 60 s)
  kill [target]          SIGKILL every JVM, or one of a cluster
  restart target         stop one JVM of a cluster (SIGTERM) if it runs, start it again
  wipe                   down, then delete the data dir
  status                 one line per JVM: role, pid, ports, regions held
target (cluster only, 1-based): --rs N | --master N | --zk
  e.g. npm run hbase:kill -- --rs 2`
const log = (line) => console.log(line)
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`

const COMMANDS = {
  async up (opts) {
    const r = await hbase.up(opts, { log })
    log(`hbase: up (${r.alreadyRunning ? 'was already running' : 'started'}, pid ` +
      `${r.pid}) in ${seconds(r.startedMs)}; bootstrap ${r.bootstrap.join(',')}`)
  },
  async down (opts) {
    log('hbase: stopping (cluster shutdown, then SIGTERM; SIGKILL after 60 s)…')
    const r = await hbase.down(opts)
    log(r.wasRunning
      ? `hbase: stopped pid${r.pids.length > 1 ? 's' : ''} ${r.pids.join(', ')} ` +
        `in ${seconds(r.stopMs)}${r.forced ? ' (had to SIGKILL)' : ''}`
      : 'hbase: was not running')
  },
  async kill (opts, target) {
    const r = await hbase.kill(opts, target)
    log(
      r.wasRunning
        ? `hbase: killed ${r.killed.join(', ')} (pid${r.pids.length > 1 ? 's' : ''} ${r.pids.join(', ')}, SIGKILL)`
        : `hbase: ${target ? describe(target) : 'HBase'} was not running`
    )
  },
  async restart (opts, target) {
    if (!target) throw new Error('restart needs a target: --rs N, --master N or --zk')
    const r = await hbase.restart(opts, target, { log })
    log(
      `hbase: ${r.name} ${r.stoppedPid
        ? `stopped (pid ${r.stoppedPid}) in ${seconds(r.stopMs)}, `
        : ''}started pid ${r.pid}, accepting after ${seconds(r.startMs)}`
    )
  },
  async wipe (opts) {
    const r = await hbase.wipe(opts)
    log(`hbase: ${r.wasRunning ? `stopped in ${seconds(r.stopMs)}, ` : ''}removed ${r.removed}`)
  },
  async status (opts) {
    const s = await hbase.status(opts, { regions: true })
    log(`hbase: ${s.cluster ? `cluster of ${s.processes.length} JVMs` : 'standalone'}, ${s.running
      ? s.serving
        ? 'serving'
        : 'running, NOT serving on every RegionServer port'
      : 'not running'}` +
      `; ZooKeeper ${s.host}:${s.zkPort}; data ${s.dataDir}; logs ${s.logDir}`)
    for (const p of s.processes) log(`  ${processLine(p)}`)
    if (s.view) {
      log(`  active master ${s.view.active}; backups ${s.view.backups.join(', ') || 'none'}; ` +
        `dead servers ${s.view.dead.length}; regions in transition ${s.view.inTransition}`)
    } else if (s.running) {
      log(`  (regions unknown: ${s.viewError || 'HBase not answering'})`)
    }
  }
}

function processLine (p) {
  const ports = `port ${p.port}${p.infoPort === -1 ? '' : `, UI ${p.infoPort}`}`
  const state = p.pid ? `pid ${p.pid}${p.serving ? '' : ' (not accepting)'}` : 'not running'
  const role = p.master ? `${p.master} master` : p.role
  const tables = p.regions ? ` (${Object.entries(p.tables).map(([t, n]) => `${t} ${n}`).join(', ')})` : ''
  const regions = p.regions === undefined ? '' : `; ${p.regions} regions${p.meta ? ' incl. hbase:meta' : ''}${tables}`
  return `${p.name.padEnd(10)} ${role.padEnd(14)} ${state.padEnd(24)} ${ports}${regions}`
}

function describe ({ role, index }) {
  return role === 'zookeeper' ? 'ZooKeeper' : `${role} ${index}`
}

/**
 * @param {string[]} args after the command
 * @returns {{ role: 'master'|'regionserver'|'zookeeper', index: number }|undefined|null} null: bad
 */
function parseTarget (args) {
  if (args.length === 0) return undefined
  if (args.length === 1 && args[0] === '--zk') return { role: 'zookeeper', index: 1 }
  const roles = { '--rs': 'regionserver', '--master': 'master' }
  if (args.length === 2 && Object.hasOwn(roles, args[0]) && /^[1-9]\d*$/.test(args[1])) {
    return { role: roles[args[0]], index: Number(args[1]) }
  }
  return null
}

async function main (argv) {
  const [name, ...rest] = argv
  const command = Object.hasOwn(COMMANDS, name) && COMMANDS[name]
  const target = parseTarget(rest)
  const takesTarget = name === 'kill' || name === 'restart'
  if (!command || target === null || (target && !takesTarget)) {
    console.error(USAGE)
    return 2
  }
  try {
    await command(hbase.resolveOptions(), target)
    return 0
  } catch (err) {
    console.error(`hbase ${name} failed: ${err.message}`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code })
