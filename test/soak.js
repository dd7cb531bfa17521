#!/usr/bin/env node
'use strict'

// Runs fault-test files again and again to find the flaky ones, and says what each run's loss
// audit saw: `npm run test:soak -- --runs 20 --tests server-signals,lb-failover --out FILE`.
// One jest at a time (a 2-core machine; the fault tests start HBase instances of their own),
// each in a process group of its own, killed by its pid when it outlasts its time bound.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { parseArgs } = require('node:util')
const { parseAudits, firstErrorLines, soakMarkdown } = require('./support/soak-report')
const { signalGroup } = require('./support/process-group')

const ROOT = path.join(__dirname, '..')
const ALL = ['server-signals', 'lb-failover', 'hbase-outage', 'shutdown-budget', 'host-disk', 'torn-files', 'hbase-chaos']
// Per run, generous: several times a file's usual duration on this machine.
const DEFAULT_TIMEOUT_MIN = 30
const KILL_GRACE_MS = 15000
/** @type {number|null} the pid (and process group) of the jest running now */
let current = null

const USAGE = `usage: npm run test:soak -- [--runs N] [--tests a,b,...] [--out FILE] [--timeout-min M]
  --runs         runs of each file (default 20)
  --tests        fault-test files by name, test/faults/<name>.test.js (default: ${ALL.join(',')})
  --out          also write the markdown report there
  --timeout-min  a run still going after this is killed and counted as failed (default ${DEFAULT_TIMEOUT_MIN})`

/**
 * @param {string[]} argv
 * @returns {{ runs: number, tests: string[], out: string|null, timeoutMs: number }}
 */
function options (argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      tests: { type: 'string' },
      out: { type: 'string' },
      'timeout-min': { type: 'string' },
      help: { type: 'boolean' }
    }
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const runs = Number(values.runs ?? 20)
  const timeoutMin = Number(values['timeout-min'] ?? DEFAULT_TIMEOUT_MIN)
  const tests = (values.tests ?? ALL.join(',')).split(',').map((t) => t.trim().replace(/\.test\.js$/, '')).filter(Boolean)
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number >= 1, not ${values.runs}`)
  if (!(timeoutMin > 0)) throw new Error(`--timeout-min must be > 0, not ${values['timeout-min']}`)
  for (const t of tests) {
    if (!fs.existsSync(testFile(t))) throw new Error(`no fault test ${path.relative(ROOT, testFile(t))}`)
  }
  return { runs, tests, out: values.out ?? null, timeoutMs: timeoutMin * 60000 }
}

function testFile (name) {
  return path.join(ROOT, 'test', 'faults', `${name}.test.js`)
}

/**
 * One jest run of one fault-test file, its output in `log` and its audits in `report`.
 * @param {{ name: string, run: number, dir: string, timeoutMs: number }} job
 * @returns {Promise<import('./support/soak-report').RunResult>}
 */
function runOnce ({ name, run, dir, timeoutMs }) {
  const log = path.join(dir, `${name}-${run}.log`)
  const report = path.join(dir, `${name}-${run}.audit.ndjson`)
  const fd = fs.openSync(log, 'w')
  const started = Date.now()
  // --runInBand between the project and the path: --selectProjects takes every name after it.
  const child = spawn('npx', ['jest', '--selectProjects', 'faults', '--runInBand', path.relative(ROOT, testFile(name))], {
    cwd: ROOT,
    env: { ...process.env, BEACON_SOAK_REPORT: report, FORCE_COLOR: '0' },
    stdio: ['ignore', fd, fd],
    detached: true // a group of its own: a run that hangs is killed whole, by its pid
  })
  fs.closeSync(fd)
  current = child.pid
  let timedOut = false
  let killTimer = null
  const timer = setTimeout(() => {
    timedOut = true
    signalGroup(child.pid, 'SIGTERM')
    killTimer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS)
  }, timeoutMs)
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      if (killTimer) clearTimeout(killTimer)
      current = null
      // Whatever the run left running in its group (a server it started) goes with it.
      signalGroup(child.pid, 'SIGKILL')
      const output = fs.readFileSync(log, 'utf8')
      const audits = fs.existsSync(report) ? parseAudits(fs.readFileSync(report, 'utf8')) : []
      const errors = timedOut
        ? [`timed out after ${timeoutMs / 60000} min; last lines:`, ...output.trimEnd().split('\n').slice(-5)]
        : firstErrorLines(output)
      resolve({ run, passed: code === 0 && !timedOut, code, signal, timedOut, ms: Date.now() - started, audits, errors, log })
    })
  })
}

/** The soak stopped (Ctrl-C): the run going on now stops too, not left behind in its group. */
function stopWith (signal) {
  process.on(signal, () => {
    if (current) signalGroup(current, 'SIGTERM')
    console.error(`soak: ${signal}; the run going on was sent SIGTERM`)
    process.exit(130)
  })
}

async function main () {
  stopWith('SIGINT')
  stopWith('SIGTERM')
  let opts
  try {
    opts = options(process.argv.slice(2))
  } catch (err) {
    console.error(`${err.message}\n${USAGE}`)
    process.exit(2)
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-soak-'))
  const started = new Date().toISOString()
  console.log(`soak: ${opts.runs} runs of ${opts.tests.join(', ')}; run output and audits in ${dir}`)
  const files = []
  for (const name of opts.tests) {
    const results = []
    files.push({ name, results })
    for (let run = 1; run <= opts.runs; run++) {
      const r = await runOnce({ name, run, dir, timeoutMs: opts.timeoutMs })
      results.push(r)
      const audits = r.audits.map((a) => `${a.answered}/${a.rows ?? '-'}/${a.left ? a.left.lines : 'idle'}`).join(' ')
      const how = r.passed ? 'passed' : `FAILED (${r.errors[0] || ''})`
      console.log(`soak: ${name} run ${run}/${opts.runs}: ${Math.round(r.ms / 1000)} s; answered/rows/left ${audits || '-'}; ${how}`)
    }
  }
  const markdown = soakMarkdown({ started, runs: opts.runs, files }).join('\n') + '\n'
  console.log(`\n${markdown}`)
  if (opts.out) fs.writeFileSync(opts.out, markdown)
  process.exit(files.some((f) => f.results.some((r) => !r.passed)) ? 1 : 0)
}

main()
