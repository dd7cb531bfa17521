#!/usr/bin/env node
'use strict'
// `npm test`'s last step: the `main` and `faults` projects in two lanes at once, each lane one
// jest after another, each jest in band. One lane would leave a third of this 2-core machine
// idle: a fault test spends much of its time waiting for a JVM to start, a region to move or an
// outage to last. Two fault files never run at once (their HBase instances and clusters each
// want the machine's CPU to keep their ZooKeeper sessions), so lane 1 takes the clusters and
// the heavy standalone files, and lane 2 the main project and then every other fault file.
// Lint (eslint + tsc) runs beside them, on the CPU the lanes leave idle; when it fails, the
// lanes are stopped at once. The shared test HBase is started here, before both lanes, and
// stopped at the end only if this run started it. `npm run test:main` and `npm run test:faults` still run one project alone.
const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')
const hbase = require('../infra/hbase')
const { upTestHBase, useTestJvmProfile } = require('./support/test-hbase')
const { signalGroup } = require('./support/process-group')

const ROOT = path.join(__dirname, '..')
const FAULTS_DIR = path.join(ROOT, 'test', 'faults')
/** Lane 1's fault files, the longest first; every other file in test/faults/ runs in lane 2. */
const LANE_ONE_FAULTS = [
  'hbase-cluster-client', 'hbase-chaos', 'memory-outage', 'hbase-cluster', 'shutdown-budget', 'host-disk', 'hbase-outage',
  'server-signals'
]

/** @type {Set<number>} pids (= process groups) of the commands going on */
const running = new Set()
let stopping = false

/** Stops every command going on, and the lanes start no further one. */
function stopAll () {
  stopping = true
  for (const pid of running) signalGroup(pid, 'SIGTERM')
}

/**
 * One command, its output lines tagged with its lane.
 * @param {string} tag
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<boolean>} passed
 */
function run (tag, command, args) {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true // a group of its own: stopped whole, by its pid
  })
  running.add(child.pid)
  for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`${tag}${line}\n`))
  }
  return new Promise((resolve) => {
    child.once('close', (code) => {
      running.delete(child.pid)
      signalGroup(child.pid, 'SIGKILL') // anything it left running in its group
      resolve(code === 0)
    })
  })
}

/**
 * @param {string} name
 * @param {string} tag
 * @param {string[][]} runs jest argument lists, run one after another
 * @returns {Promise<{ name: string, passed: boolean, ms: number }>}
 */
async function lane (name, tag, runs) {
  const started = Date.now()
  let passed = true
  for (const args of runs) passed = !stopping && (await jest(tag, args)) && passed
  return { name, passed, ms: Date.now() - started }
}

/**
 * @param {string} tag
 * @param {string[]} args after `jest`; --runInBand before any paths (--selectProjects takes
 *   every name after it)
 * @returns {Promise<boolean>} passed
 */
function jest (tag, args) {
  return run(tag, process.execPath, [require.resolve('jest/bin/jest'), ...args])
}

/** @returns {Promise<{ name: string, passed: boolean, ms: number }>} */
async function lint () {
  const started = Date.now()
  const passed = await run('lint| ', 'npm', ['run', '--silent', 'lint'])
  if (!passed) {
    console.error('lanes: lint failed; stopping the test lanes')
    stopAll()
  }
  return { name: 'lint (eslint, tsc)', passed, ms: Date.now() - started }
}

function faultPaths (names) {
  return names.map((n) => path.relative(ROOT, path.join(FAULTS_DIR, `${n}.test.js`)))
}

async function main () {
  const all = fs.readdirSync(FAULTS_DIR).filter((f) => f.endsWith('.test.js')).map((f) => f.replace(/\.test\.js$/, '')).sort()
  const missing = LANE_ONE_FAULTS.filter((n) => !all.includes(n))
  if (missing.length) throw new Error(`test/lanes.js names fault files that do not exist: ${missing.join(', ')}`)
  const laneTwoFaults = all.filter((n) => !LANE_ONE_FAULTS.includes(n))

  useTestJvmProfile()
  const { alreadyRunning, overrides } = await upTestHBase({ log: (line) => process.stderr.write(`${line}\n`) })
  let results
  try {
    results = await Promise.all([
      lint(),
      lane('1: faults (clusters, heavy)', '1| ', [['--selectProjects', 'faults', '--runInBand', ...faultPaths(LANE_ONE_FAULTS)]]),
      lane('2: main, then faults', '2| ', [
        ['--selectProjects', 'main', '--runInBand'],
        ['--selectProjects', 'faults', '--runInBand', ...faultPaths(laneTwoFaults)]
      ])
    ])
  } finally {
    if (!alreadyRunning) {
      const { stopMs } = await hbase.down(hbase.resolveOptions(overrides))
      process.stderr.write(`hbase: stopped in ${(stopMs / 1000).toFixed(1)} s\n`)
    }
  }
  for (const r of results) console.error(`lane ${r.name}: ${r.passed ? 'passed' : 'FAILED'} in ${(r.ms / 1000).toFixed(0)} s`)
  process.exitCode = results.every((r) => r.passed) ? 0 : 1
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopAll()
    console.error(`lanes: ${signal}; the jest runs going on were sent SIGTERM`)
    process.exit(130)
  })
}

main().catch((err) => {
  console.error(`lanes: ${err.stack || err.message}`)
  process.exit(1)
})
