#!/usr/bin/env node
'use strict'
// `npm test` after its pretest: the `unit` project first, while the shared test HBase starts,
// then, as soon as that HBase serves, the `main` and `faults` projects in two lanes beside the
// rest of the unit project (a failing unit project stops them at once, so a broken build still
// fails within a minute), each lane one jest after another, each jest in band. One lane would leave a
// third of this 2-core machine idle: a fault test spends much of its time waiting for a JVM to
// start, a region to move or an outage to last. Lane 1 takes the fault files that run HBase
// clusters, in one jest run that ends by discarding the shared fault cluster (its six idle JVMs
// would otherwise burn CPU the rest of the run), then the heavy standalone fault files; lane 2
// the main project and then every other fault file. Lint (eslint + tsc) runs after the unit project, on the
// CPU the lanes leave idle; when it fails, the lanes are stopped at once. The shared test HBase is
// stopped at the end only if this run started it. `npm run test:unit`, `test:main` and
// `test:faults` still run one project.
const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')
const hbase = require('../tools/dev-hbase')
const { upTestHBase, useTestJvmProfile, READY_ENV } = require('./support/test-hbase')
const { signalGroup } = require('./support/process-group')
const { FailureDigest } = require('./support/failure-digest')
const { ORDER_ENV } = require('./support/test-sequencer')
const { discardSharedCluster } = require('./support/fault-cluster')

const ROOT = path.join(__dirname, '..')
const FAULTS_DIR = path.join(ROOT, 'test', 'faults')
/**
 * Lane 1's fault files, in the order they run: first those on the shared fault cluster (the one
 * that stops it last), then the standalone ones, those that mostly wait first (they meet the
 * main project's busiest files), those that keep the CPU busy next (they meet lane 2's fault
 * file, which mostly waits), and last two that lane 2 had, so that the lanes end together (the
 * main project shares its first minute with the unit project).
 */
const LANE_ONE_CLUSTER_FAULTS = ['hbase-cluster-client', 'hbase-chaos', 'hbase-cluster']
const LANE_ONE_FAULTS = [
  'memory-outage', 'hbase-restart', 'server-signals', 'shutdown-budget', 'hbase-outage', 'host-disk', 'lb-failover', 'torn-files'
]

/** @type {Set<number>} pids (= process groups) of the commands going on */
const running = new Set()
let stopping = false
/** @type {Map<string, FailureDigest>} each tag's failures, printed again at the end */
const digests = new Map()

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
 * @param {Record<string, string>} [env] added to the environment
 * @returns {Promise<boolean>} passed
 */
function run (tag, command, args, env = {}) {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true // a group of its own: stopped whole, by its pid
  })
  running.add(child.pid)
  if (!digests.has(tag)) digests.set(tag, new FailureDigest())
  const digest = /** @type {FailureDigest} */ (digests.get(tag))
  for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
      digest.add(line)
      to.write(`${tag}${line}\n`)
    })
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
 * @param {Array<{ args: string[], order?: string[] }>} runs jest runs, one after another: the
 *   arguments after `jest`, and the files' order when it is not jest's own (test-sequencer.js)
 * @returns {Promise<{ name: string, passed: boolean, ms: number }>}
 */
async function lane (name, tag, runs) {
  const started = Date.now()
  let passed = true
  for (const { args, order } of runs) passed = !stopping && (await jest(tag, args, order)) && passed
  return { name, passed, ms: Date.now() - started }
}

/**
 * @param {string} tag
 * @param {string[]} args after `jest`; --runInBand before any paths (--selectProjects takes
 *   every name after it)
 * @param {string[]} [order] file names (without `.test.js`) in the order they are to run
 * @returns {Promise<boolean>} passed
 */
function jest (tag, args, order) {
  return run(tag, process.execPath, [require.resolve('jest/bin/jest'), ...args], order ? { [ORDER_ENV]: order.join(',') } : {})
}

/** @returns {Promise<{ name: string, passed: boolean, ms: number }>} the unit project, first, on both cores */
async function unit () {
  const started = Date.now()
  const passed = await jest('u| ', ['--selectProjects', 'unit', '--maxWorkers=2'])
  if (!passed) {
    console.error('lanes: the unit project failed; stopping the test lanes')
    stopAll()
  }
  return { name: 'unit', passed, ms: Date.now() - started }
}

/** @returns {Promise<{ name: string, passed: boolean, ms: number }>} */
async function lint () {
  const started = Date.now()
  if (stopping) return { name: 'lint (eslint, tsc; not run, the lanes were stopped)', passed: false, ms: 0 }
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

/** @param {string[]} names fault files, in the order they are to run */
function faultRun (names) {
  return { args: ['--selectProjects', 'faults', '--runInBand', ...faultPaths(names)], order: names }
}

/** Every lane's failures again, just above the lanes' verdicts: the last lines a CI log keeps. */
function printFailures () {
  for (const [tag, digest] of digests) {
    const lines = digest.report()
    if (!lines.length) continue
    console.error(`failures, again (${tag.replace(/[| ]+$/, '')}):`)
    for (const line of lines) console.error(`${tag}${line}`)
  }
}

async function main () {
  const all = fs.readdirSync(FAULTS_DIR).filter((f) => f.endsWith('.test.js')).map((f) => f.replace(/\.test\.js$/, '')).sort()
  const laneOne = [...LANE_ONE_CLUSTER_FAULTS, ...LANE_ONE_FAULTS]
  const missing = laneOne.filter((n) => !all.includes(n))
  if (missing.length) throw new Error(`test/lanes.js names fault files that do not exist: ${missing.join(', ')}`)
  const laneTwoFaults = all.filter((n) => !laneOne.includes(n))

  useTestJvmProfile()
  // The unit project while the test HBase starts: neither needs the other, and the JVM's start
  // leaves CPU idle while it waits on itself. The lanes do not wait for the unit project's end:
  // its last files mostly sleep (timers of the sink's property test), which left the machine
  // idle for 15-25 s.
  const unitRun = unit()
  const { alreadyRunning, overrides, bootstrap } = await upTestHBase({ log: (line) => process.stderr.write(`${line}\n`) })
    .catch(async (err) => {
      stopAll()
      await unitRun
      throw err
    })
  process.env[READY_ENV] = JSON.stringify({ overrides, bootstrap })
  /** @type {Array<{ name: string, passed: boolean, ms: number }>} */
  let results = []
  try {
    results = await Promise.all([
      unitRun,
      unitRun.then(lint), // after the unit project, on the CPU it leaves
      lane('1: faults (clusters, then heavy)', '1| ', [
        faultRun(LANE_ONE_CLUSTER_FAULTS),
        faultRun(LANE_ONE_FAULTS)
      ]),
      lane('2: main, then faults', '2| ', [
        { args: ['--selectProjects', 'main', '--runInBand'] },
        { args: ['--selectProjects', 'faults', '--runInBand', ...faultPaths(laneTwoFaults)] }
      ])
    ])
  } finally {
    if (stopping) {
      // A jest run that was stopped never ran its teardown: the fault cluster it may have
      // started (six JVMs) goes here, not at the next run's first claim.
      const { wasRunning } = await discardSharedCluster()
      if (wasRunning) process.stderr.write('fault cluster: discarded (the lanes were stopped)\n')
    }
    if (!alreadyRunning) {
      const { stopMs } = await hbase.down(hbase.resolveOptions(overrides))
      process.stderr.write(`hbase: stopped in ${(stopMs / 1000).toFixed(1)} s\n`)
    }
  }
  printFailures()
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
