'use strict'

/**
 * `npm run bench` — the seed's protocol and the other load shapes against our server:
 *
 * - seed: per endpoint a warm-up, then N closed-loop runs of D seconds at C connections
 *   (autocannon), the second-best reported; a bare node:http baseline in the same run;
 * - cpu: CPU µs per request of each endpoint and of the baseline, at a fixed rate and at
 *   saturation, median of several rounds (tools/bench/lib/cpu.js); with the seed's table, it opens
 *   the report;
 * - sweep: open-loop constant rates rising until the server breaks, and the knee;
 * - access-log completeness over everything sent (lost: N), and the server-side view (CPU per
 *   1k requests, peak RSS) of every run.
 *
 * HBase, server and load generator on loopback, each role pinned with BEACON_PIN_<ROLE>
 * (lib/environment.js). `npm run bench -- --help` lists the options.
 */

const fs = require('node:fs')
const path = require('node:path')
const { createHBaseClient } = require('@beacon/hbase-client')
const { tables: { accessLogSplitKeys }, settings: { loadSettings }, log: { countLines } } = require('../../index.js')
const { describeMachine, timestampForFile } = require('./lib/machine')
const { withRatios, markdownReport } = require('./lib/report')
const { leadSection } = require('./lib/cpu-report')
const { commandOf, commitOf, provenanceHeader } = require('./lib/result-files')
const { parseOptions } = require('./lib/options')
const { createEnvironment } = require('./lib/environment')
const scenarios = require('./lib/scenarios')

const ROOT = path.join(__dirname, '..', '..')
const SIGNALS = /** @type {const} */ (['SIGINT', 'SIGTERM'])
const log = (line) => process.stderr.write(line + '\n')

/** Concurrent config reads for `seconds`, so HBase's JIT is warm before anything is measured. */
async function warmHBase (client, table, seconds, idRange) {
  const until = Date.now() + seconds * 1000
  let reads = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (Date.now() < until) {
      const ids = Array.from({ length: 8 }, () => String(1 + Math.floor(Math.random() * idRange)))
      await client.multiGet(table, ids)
      reads += ids.length
    }
  }))
  return reads
}

/** Polls until the access-log count reaches `expected` (or stops moving), bounded. */
async function settleCount (count, expected, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs
  let last = -1
  let stableSince = Date.now()
  for (;;) {
    const n = await count()
    if (n >= expected) return n
    if (n !== last) {
      last = n
      stableSince = Date.now()
    }
    if (Date.now() > deadline || Date.now() - stableSince > 15000) return n
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/** Every 2xx must have left exactly one access-log entry: sets `lost` and `duplicates`. */
async function checkCompleteness (endpoints, ledger, names, settings, client) {
  for (const name of names) {
    const sinks = settings.endpoints[name].accessLog
    if (!sinks.length || !endpoints[name]) continue
    const found = {}
    for (const sinkName of sinks) {
      const sink = settings.logSinks[sinkName]
      // Other endpoints may share a sink: count what all its writers were answered.
      const writers = Object.keys(ledger).filter((n) => settings.endpoints[n] && settings.endpoints[n].accessLog.includes(sinkName))
      const expected = writers.reduce((n, w) => n + ledger[w].ok, 0)
      const upper = writers.reduce((n, w) => n + ledger[w].sent, 0)
      found[sinkName] = sink.type === 'file'
        ? await settleCount(async () => countLines(path.dirname(sink.path)), expected)
        : await settleCount(() => client.count(sink.table), expected)
      // Responses in flight when an autocannon run stopped were logged but not counted, so the
      // count may exceed the 2xx seen, by at most the requests sent and not counted.
      endpoints[name].lost = Math.max(0, expected - found[sinkName])
      endpoints[name].duplicates = Math.max(0, found[sinkName] - upper)
    }
    log(`${name}: 2xx seen ${ledger[name].ok}, sent ${ledger[name].sent}; access-log entries ` +
      `${JSON.stringify(found)}; lost: ${endpoints[name].lost}, duplicates: ${endpoints[name].duplicates}`)
  }
}

/**
 * The scenarios that share one environment (HBase, the server cluster, load workers; see
 * lib/environment.js), in order, then the access-log completeness check; fills `report`.
 * @param {Readonly<Record<string, any>>} params
 * @param {string[]} list scenario names
 * @param {Record<string, any>} report
 * @param {{ stamp: string, stateDir: string }} run
 */
async function runSharedScenarios (params, list, report, { stamp, stateDir }) {
  const accessLogTable = `beacon_bench_access_log_${stamp.replace(/-/g, '').replace('T', '_')}_${process.pid}`
  const noRollupTable = `${accessLogTable}_norollup`
  // Endpoints declared for the bench only: sample5 with its access-log sink in each other
  // durability (the cost of each guarantee), and without rollups (the cpu scenario's
  // sample5_norollup: what rollups cost), each sink on a table of its own.
  const durabilities = Object.entries(scenarios.DURABILITY_ENDPOINTS)
  const durabilityTables = durabilities.map(([, durability]) => `${accessLogTable}_${durability}`)
  const tables = [accessLogTable, noRollupTable, ...durabilityTables]
  const sample5Like = (/** @type {string} */ sink) => ({ source: 'hbase', cache: 'lru', accessLog: [sink], cacheControl: 'no-cache' })
  const configFile = path.join(stateDir, 'bench-config.json')
  fs.writeFileSync(configFile, JSON.stringify({
    logSinks: {
      [scenarios.NO_ROLLUP_SINK]: { type: 'hbase', table: noRollupTable, rollups: false },
      ...Object.fromEntries(durabilities.map(([, durability], i) =>
        [`hbase_${durability}`, { type: 'hbase', table: durabilityTables[i], durability }]))
    },
    endpoints: {
      [scenarios.NO_ROLLUP_ENDPOINT]: sample5Like(scenarios.NO_ROLLUP_SINK),
      ...Object.fromEntries(durabilities.map(([name, durability]) => [name, sample5Like(`hbase_${durability}`)]))
    }
  }))

  const env = await createEnvironment({
    workers: params.workers,
    port: params.port,
    log,
    env: {
      BEACON_STATE_DIR: stateDir,
      BEACON_ACCESS_LOG_TABLE: accessLogTable,
      BEACON_ACCESS_ROLLUPS: '1',
      BEACON_LOG_LEVEL: 'warn',
      BEACON_CONFIG_FILE: configFile
    }
  })
  // Ended early (Ctrl-C, a budget's kill): the server cluster, baseline and load workers go too.
  const onSignal = (/** @type {string} */ signal) => {
    log(`bench: ${signal}: stopping what it started`)
    env.close().finally(() => process.exit(130))
  }
  for (const signal of SIGNALS) process.once(signal, onSignal)
  const client = createHBaseClient({ bootstrap: env.bootstrap })
  report.machine = describeMachine({ hbaseVersion: env.hbaseOptions.version, ...env.describe() })
  const ledger = {}
  try {
    for (const table of tables) await client.admin.createTable(table, { families: ['l'], splits: accessLogSplitKeys() })
    const settings = loadSettings({ env: { ...process.env, ...env.serverEnv } })
    log(`warming HBase for ${params.hbaseWarmupSeconds} s…`)
    log(`HBase warm-up: ${await warmHBase(client, settings.hbase.configTable, params.hbaseWarmupSeconds, params.idRange)} reads`)
    await env.refreshHBasePid()
    const names = params.endpoints || Object.keys(settings.endpoints).filter((n) => n !== scenarios.NO_ROLLUP_ENDPOINT)
    for (const n of names) if (!settings.endpoints[n]) throw new Error(`bench: unknown endpoint ${n}`)
    const server = await env.startServer(`/api/${names[0]}.js?id=1`)
    const ctx = {
      env,
      params,
      names,
      settings,
      server,
      log,
      ledger: (endpoint, r) => {
        const l = (ledger[endpoint] ??= { ok: 0, sent: 0 })
        l.ok += r.ok
        l.sent += r.sent
      }
    }
    for (const name of list) {
      log(`— scenario ${name} —`)
      const result = await scenarios[name](ctx)
      if (name === 'seed') {
        report.endpoints = withRatios(result.endpoints, 'sample1')
        report.baseline = result.baseline
      } else {
        report.scenarios[name] = result
      }
    }
    try {
      await checkCompleteness(report.endpoints, ledger, names, settings, client)
    } catch (err) {
      // The measurements stand without the count: the report says it was not made, and why.
      report.completenessError = err.message
      log(`bench: access-log entries not counted: ${err.message}`)
    }
  } finally {
    for (const signal of SIGNALS) process.removeListener(signal, onSignal)
    // The tables go first: closing the environment stops an HBase the bench started (then each
    // delete would wait out the admin timeout, 2 minutes).
    for (const table of tables) await client.admin.deleteTable(table).catch(() => {})
    await client.close()
    await env.close()
  }
}

async function main () {
  const params = parseOptions(process.argv.slice(2))
  if (params.help) {
    console.log(params.help)
    return
  }
  const started = new Date()
  const stamp = timestampForFile(started)
  const stateDir = path.join(ROOT, '.state', 'bench', `${stamp}-${process.pid}`)
  fs.mkdirSync(stateDir, { recursive: true })
  const report = {
    date: started.toISOString(),
    machine: null,
    parameters: params,
    endpoints: {},
    baseline: null,
    scenarios: {}
  }
  await runSharedScenarios(params, params.scenarios, report, { stamp, stateDir })

  // The raw figures (git-ignored) under results/raw/; the report in results/.
  const out = params.out ? path.resolve(params.out) : path.join(__dirname, 'results', 'raw', `${stamp}-${params.label}.json`)
  const base = params.out ? out.replace(/\.json$/, '') : path.join(__dirname, 'results', `${stamp}-${params.label}`)
  fs.mkdirSync(path.dirname(out), { recursive: true })
  const provenance = { command: commandOf(), commit: commitOf() }
  fs.writeFileSync(out, JSON.stringify({ provenance, ...report }, null, 2) + '\n')
  const md = provenanceHeader(provenance) + markdownReport(report, { lead: leadSection(report), skip: ['cpu'] })
  fs.writeFileSync(`${base}.md`, md)
  fs.rmSync(stateDir, { recursive: true, force: true })
  console.log(md)
  log(`written: ${out} and ${base}.md`)
  if (report.completenessError) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
