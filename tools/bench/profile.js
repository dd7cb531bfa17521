'use strict'

/**
 * Where a request's CPU goes, per endpoint: each target (the bare node:http baseline, then
 * the endpoints) is served by a one-worker cluster started with `--cpu-prof`, driven closed
 * loop by autocannon, and the worker's profile is cut to the measured window and summed by
 * category (socket write, node's HTTP, beacon's request code, cache, metrics, access log,
 * HBase client, GC, ...). Writes tools/bench/results/<time>-profile.md and .json, and the worker
 * profiles (gzipped .cpuprofile, open them in Chrome DevTools) in <time>-profile/.
 *
 *   npm run bench:profile -- [--endpoints sample1,sample3,sample5] [--duration 10]
 *     [--connections 50] [--ids 1|range] [--interval-us 200] [--port 4400]
 *
 * The profile is the main JavaScript thread's: libuv's threads and V8's GC helpers are not in
 * it (the cpu scenario of `npm run bench` counts every thread, from /proc). V8 samples on a
 * wall-clock timer, so a thread the kernel preempted has its wait charged to the function it
 * was in: run it on a quiet machine, and read the shares rather than the µs when it is not.
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { parseArgs } = require('node:util')
const autocannon = require('autocannon')
const hbase = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { accessLogSplitKeys } = require('../../logging/access-log-layout')
const { startNode, waitForHttp } = require('./lib/processes')
const { describeMachine, timestampForFile } = require('./lib/machine')
const { summarizeProfile, CATEGORIES } = require('./lib/profile-summary')

const { values: args } = parseArgs({
  options: {
    endpoints: { type: 'string', default: 'sample1,sample2,sample3,sample4,sample5' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    ids: { type: 'string', default: 'range' },
    'interval-us': { type: 'string', default: '200' },
    port: { type: 'string', default: '4400' },
    out: { type: 'string' }
  }
})
const ROOT = path.join(__dirname, '..', '..')
const BASELINE = 'bare node:http'
const LOG_TABLE = 'beacon_bench_profile_log'
const port = Number(args.port)
const log = (line) => process.stderr.write(`${line}\n`)

/** A path per request: the seed's id=1, or ids 1..10000 at random. */
function requestsFor (target) {
  const file = target === BASELINE ? 'sample1' : target
  const ids = args.ids === '1' ? [1] : Array.from({ length: 10000 }, (_, i) => i + 1)
  return ids.map((id) => ({ method: 'GET', path: `/api/${file}.js?id=${id}&callback=EXAMPLE.process` }))
}

/** @param {string} url @param {number} seconds @param {object[]} requests */
function load (url, seconds, requests) {
  return autocannon({ url, connections: Number(args.connections), duration: seconds, requests, pipelining: 1 })
}

/**
 * Profiles one target; resolves with its summary.
 * @param {string} target
 * @param {{ dir: string, env: Record<string, string> }} run
 */
async function profileTarget (target, { dir, env }) {
  const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-prof-'))
  const profArgs = ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-interval=${args['interval-us']}`]
  const child = target === BASELINE
    ? startNode(path.join(__dirname, 'baseline-server.js'), [String(port), '1'], { name: target, log, nodeArgs: profArgs })
    : startNode(path.join(ROOT, 'server.js'), [], {
      name: target,
      log,
      env: { ...env, PORT: String(port), ADMIN_PORT: String(port + 1), BEACON_WORKERS: '1' },
      nodeArgs: profArgs
    })
  const url = `http://127.0.0.1:${port}`
  try {
    await waitForHttp(`${url}/api/sample1.js?id=1`, { child, timeoutMs: 60000 })
    const requests = requestsFor(target)
    await load(url, 3, requests) // warm-up: JIT, caches filled
    const from = process.hrtime.bigint()
    const result = await load(url, Number(args.duration), requests)
    const to = process.hrtime.bigint()
    const code = await child.stop(30000)
    const files = fs.readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'))
    // The worker's profile: the one with the most samples in the window (the primary idles).
    let best = null
    for (const file of files) {
      const profile = JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8'))
      const summary = summarizeProfile(profile, { fromUs: Number(from / 1000n), toUs: Number(to / 1000n), requests: result.requests.total })
      if (!best || summary.busyUs > best.summary.busyUs) best = { file, profile, summary }
    }
    if (!best) throw new Error(`${target}: no profile written (exit ${code})`)
    fs.writeFileSync(path.join(dir, `${target.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile.gz`), zlib.gzipSync(JSON.stringify(best.profile)))
    return {
      target,
      rps: Math.round(result.requests.average),
      requests: result.requests.total,
      errors: result.errors + result.non2xx,
      ...best.summary
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) await child.stop(10000)
    fs.rmSync(profDir, { recursive: true, force: true })
  }
}

function markdown (report) {
  const names = Object.keys(CATEGORIES)
  const lines = [
    `# Where a request's CPU goes — ${report.date}`,
    '',
    `Machine: ${report.machine.cores} cores, ${report.machine.cpuModel}, node ${report.machine.node}. One-worker cluster per target, ` +
      `closed loop (autocannon, ${report.parameters.connections} connections, ${report.parameters.duration} s after 3 s of warm-up), ids ` +
      `${report.parameters.ids === '1' ? '1 (the seed\'s)' : '1..10000 at random'}; the worker's main thread sampled every ` +
      `${report.parameters.intervalUs} µs and cut to the measured window. Cells: µs of the main thread per request (V8 samples on a ` +
      'wall-clock timer: time the thread was preempted counts where it stood, so on a busy machine read the shares). Profiles: ' +
      `\`${path.basename(report.profileDir)}/\` (gzipped .cpuprofile).`,
    '',
    `| target | req/s | main thread µs/req | ${names.join(' | ')} |`,
    `|---|---:|---:|${names.map(() => '---:').join('|')}|`
  ]
  for (const t of report.targets) {
    lines.push(`| ${t.target} | ${t.rps.toLocaleString('en-US')} | ${t.usPerRequest} | ${names.map((n) => t.categories[n]).join(' | ')} |`)
  }
  lines.push(
    '',
    'Categories, first match from the sampled frame up its stack:',
    '',
    ...names.map((n) => `- **${n}**: ${CATEGORIES[n]}`),
    ''
  )
  for (const t of report.targets) {
    lines.push(`## ${t.target}: the heaviest functions (self time, µs per request)`, '', '| function | µs/req |', '|---|---:|')
    for (const [fn, us] of t.topSelf) lines.push(`| \`${fn}\` | ${us} |`)
    lines.push('')
  }
  return lines.join('\n')
}

async function main () {
  const stamp = timestampForFile(new Date())
  const outJson = args.out || path.join(__dirname, 'results', `${stamp}-profile.json`)
  const dir = outJson.replace(/\.json$/, '')
  fs.mkdirSync(dir, { recursive: true })
  const hbaseOptions = hbase.resolveOptions()
  const { bootstrap } = await hbase.up(hbaseOptions, { log })
  const client = createHBaseClient({ bootstrap })
  try {
    if (!(await client.admin.tableExists(LOG_TABLE))) {
      await client.admin.createTable(LOG_TABLE, { families: ['l'], splits: accessLogSplitKeys() })
    }
  } finally {
    await client.close()
  }
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-prof-state-'))
  const env = {
    BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
    BEACON_STATE_DIR: stateDir,
    BEACON_ACCESS_LOG_TABLE: LOG_TABLE,
    BEACON_LOG_LEVEL: 'warn'
  }
  const targets = []
  try {
    for (const target of [BASELINE, ...args.endpoints.split(',').filter(Boolean)]) {
      log(`profile: ${target}`)
      targets.push(await profileTarget(target, { dir, env }))
    }
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true })
  }
  const report = {
    date: new Date().toISOString(),
    machine: describeMachine({ hbaseVersion: hbaseOptions.version, topology: 'loopback', netem: 'none' }),
    parameters: {
      duration: Number(args.duration),
      connections: Number(args.connections),
      ids: args.ids,
      intervalUs: Number(args['interval-us'])
    },
    profileDir: dir,
    targets
  }
  fs.writeFileSync(outJson, JSON.stringify({ ...report, profileDir: path.basename(dir) }, null, 2))
  fs.writeFileSync(outJson.replace(/\.json$/, '.md'), markdown(report))
  log(`profile: wrote ${outJson} and ${outJson.replace(/\.json$/, '.md')}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
