'use strict'

/**
 * What one access entry costs the code that makes and counts it, this tree beside an earlier
 * commit's: building and serializing an entry (logging/access-entry.js, on the request thread of
 * every logged view) and reading its rollup key from the stored bytes (logging/rollup/group-keys.js,
 * in the rollup job, once per row). The whole-server cpu scenario (`npm run bench -- --scenario
 * cpu`) cannot resolve a change of a fraction of a microsecond on this machine (its run-to-run
 * spread is wider); this isolates the code that changed. No HBase, no sockets: nanoseconds per
 * call, median of `--rounds` rounds of `--calls` calls, the two trees alternating.
 *
 *   npm run bench:entry-cost -- --before <commit> [--rounds 7] [--calls 2000000]
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { execFileSync } = require('node:child_process')
const { writeResult } = require('./lib/result-files')
const { describeMachine } = require('./lib/machine')

const ROOT = path.join(__dirname, '..', '..')
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '2000000' }
  }
})
if (!args.before) {
  console.error('usage: npm run bench:entry-cost -- --before <commit> [--rounds 7] [--calls 2000000]')
  process.exit(1)
}

/**
 * The earlier commit's logging/ and lib/, unpacked inside this checkout (so their requires of
 * npm packages resolve to its node_modules).
 * @param {string} ref
 * @returns {string} the folder
 */
function unpack (ref) {
  const dir = fs.mkdtempSync(path.join(ROOT, '.entry-cost-'))
  const tar = execFileSync('git', ['archive', ref, 'logging', 'lib', 'config'], { cwd: ROOT, maxBuffer: 1 << 28 })
  execFileSync('tar', ['-x', '-C', dir], { input: tar })
  return dir
}

/**
 * One tree's two measured calls.
 * @param {string} root
 */
function callsOf (root) {
  const { accessEntry, serializeEntry } = require(path.join(root, 'logging', 'access-entry'))
  const { groupKeyOfValue } = require(path.join(root, 'logging', 'rollup', 'group-keys'))
  /** @param {number} i */
  const fields = (i) => ({
    ts: 1795537234567 + i,
    endpoint: 'sample5',
    id: String(i % 10000),
    variant: i & 1 ? 'B' : null, // an earlier tree's accessEntry leaves these out
    status: 200,
    version: 'hmx53n6d1-B',
    ms: 0.123,
    ip: '127.0.0.1',
    ua: UA,
    ref: null
  })
  const stored = Buffer.from(serializeEntry(accessEntry(fields(1))))
  return {
    entry: (/** @type {number} */ i) => serializeEntry(accessEntry(fields(i))).length,
    key: () => groupKeyOfValue(stored).length,
    bytes: stored.length
  }
}

/**
 * @param {(i: number) => number} fn
 * @param {number} calls
 * @returns {number} ns per call
 */
function time (fn, calls) {
  let sink = 0
  for (let i = 0; i < calls / 10; i++) sink += fn(i)
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) sink += fn(i)
  const ns = Number(process.hrtime.bigint() - started) / calls
  if (sink < 0) console.log(sink) // keeps the calls from being optimized away
  return ns
}

const machineLine = () => {
  const m = describeMachine()
  return `Machine: ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB, node ${m.node}`
}
const median = (/** @type {number[]} */ xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]
const range = (/** @type {number[]} */ xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`

const dir = unpack(args.before)
try {
  const rounds = Number(args.rounds)
  const calls = Number(args.calls)
  const trees = { before: callsOf(dir), after: callsOf(ROOT) }
  /** @type {Record<string, { entry: number[], key: number[] }>} */
  const ns = { before: { entry: [], key: [] }, after: { entry: [], key: [] } }
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? ['after', 'before'] : ['before', 'after']) {
      ns[name].entry.push(time(trees[name].entry, calls))
      ns[name].key.push(time(trees[name].key, calls))
    }
  }
  const delta = (/** @type {'entry'|'key'} */ k) => (median(ns.after[k]) - median(ns.before[k])).toFixed(1)
  const markdown = [
    `# What one access entry costs the code: ${args.before.slice(0, 12)} beside this tree`,
    '',
    `${machineLine()}; ${rounds} rounds of ${calls} calls each, the trees alternating; ns per call, median (min–max).`,
    '',
    '| call | before | after | after − before | stored bytes before → after |',
    '|---|---:|---:|---:|---:|',
    `| accessEntry + serializeEntry (request thread, per logged view) | ${range(ns.before.entry)} | ${range(ns.after.entry)} | ` +
      `${delta('entry')} | ${trees.before.bytes} → ${trees.after.bytes} |`,
    `| groupKeyOfValue (rollup job, per row) | ${range(ns.before.key)} | ${range(ns.after.key)} | ${delta('key')} | |`,
    ''
  ].join('\n')
  writeResult({ name: 'entry-cost', report: { before: args.before, machine: describeMachine(), rounds, calls, ns }, markdown })
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
