'use strict'

/**
 * Scale (issue 24, item 5), not in `npm test` nor `npm run bench`: on an HBase of its own
 * (`.state/hbase-scale`, ZooKeeper 2491, master 16860, RegionServer 16880; its data wiped before and,
 * unless `--keep`, after):
 *
 * - config part (./lib/scale-config.js), first: `--ids` ids seeded in `beacon_config`, then per `--lru`
 *   size a server cluster under open-loop load on sample3 and sample5, ids uniform and Zipf
 *   (`--zipf-s`): hit ratio, HBase reads/s, RSS, p99; and a full cache's memory per size;
 * - log part (./lib/scale-log.js): `--rows` access-log rows over one day through the HBase sink;
 *   bytes per row on disk, the rollup job catching up (its CPU and RSS), `log count` from the
 *   rollups and from the raw rows, `log scan` rows/s, `log erase` of one id.
 *
 * Results: tools/bench/results/<time>-scale.{md,json} (./lib/scale-report.js).
 *
 *   npm run bench:scale -- [--part log|config|all] [--rows 20000000] [--ids 10000000]
 *     [--lru 10000,100000,1000000] [--rate 1000] [--warmup 20] [--measure 30] [--keep]
 *     [--out FILE.json]   (--help lists every option)
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const infra = require('../dev-hbase')
const { ensureToolCompiled } = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { describeMachine } = require('./lib/machine')
const { writeResult } = require('./lib/result-files')
const { runLogPart } = require('./lib/scale-log')
const { runConfigPart } = require('./lib/scale-config')
const { logSummary, markdown } = require('./lib/scale-report')

const OPTIONS = {
  part: { type: 'string', default: 'all' },
  rows: { type: 'string', default: '20000000' },
  'log-ids': { type: 'string', default: '100000' },
  'batch-size': { type: 'string', default: '500' },
  'no-compact': { type: 'boolean', default: false },
  'scan-minutes': { type: 'string', default: '60' },
  'erase-id': { type: 'string', default: '42' },
  'roller-interval-ms': { type: 'string', default: '5000' },
  'roller-minutes-per-run': { type: 'string', default: '30' },
  'write-budget-s': { type: 'string', default: '3600' },
  'roller-budget-s': { type: 'string', default: '3600' },
  ids: { type: 'string', default: '10000000' },
  lru: { type: 'string', default: '10000,100000,1000000' },
  endpoints: { type: 'string', default: 'sample3,sample5' },
  dists: { type: 'string', default: 'uniform,zipf' },
  'zipf-s': { type: 'string', default: '1.1' },
  rate: { type: 'string', default: '1000' },
  connections: { type: 'string', default: '50' },
  warmup: { type: 'string', default: '20' },
  measure: { type: 'string', default: '30' },
  workers: { type: 'string', default: '2' },
  port: { type: 'string', default: '4350' },
  // A standalone HBase (master, RegionServer and ZooKeeper in one JVM) ran out of a 2g heap
  // while the rollup job caught up with 15 million of a day's 20 million rows.
  'hbase-heap': { type: 'string', default: '4g' },
  'seed-budget-s': { type: 'string', default: '3600' },
  keep: { type: 'boolean', default: false },
  out: { type: 'string' },
  help: { type: 'boolean', default: false }
}

const log = (line) => console.error(line)

/**
 * @param {string} value
 * @param {string} name
 * @param {number} min
 * @returns {number}
 */
function integer (value, name, min) {
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) throw new RangeError(`--${name} must be an integer >= ${min} (got ${value})`)
  return n
}

/**
 * @param {string} value
 * @returns {string[]}
 */
function list (value) {
  return value.split(',').map((v) => v.trim()).filter(Boolean)
}

/** The bench's own instance: its state dir and ports, which no test and no other bench uses. */
const HBASE = {
  stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-scale'),
  zkPort: 2491,
  masterPort: 16860,
  rsPort: 16880,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 1,
  jvm: 'server'
}

async function main () {
  const args = /** @type {Record<string, any>} */ (parseArgs({ options: /** @type {any} */ (OPTIONS) }).values)
  if (args.help) {
    const usage = Object.entries(OPTIONS).map(([k, o]) => `[--${k}${o.type === 'string' ? ` ${o.default ?? 'FILE.json'}` : ''}]`)
    console.log(`npm run bench:scale -- ${usage.join(' ')}`)
    return
  }
  if (!['log', 'config', 'all'].includes(args.part)) throw new RangeError('--part must be log, config or all')
  const runLog = args.part !== 'config'
  const runConfig = args.part !== 'log'
  const logParams = {
    rows: integer(args.rows, 'rows', 1000),
    logIds: integer(args['log-ids'], 'log-ids', 1),
    batchSize: integer(args['batch-size'], 'batch-size', 1),
    compact: !args['no-compact'],
    scanMinutes: integer(args['scan-minutes'], 'scan-minutes', 1),
    eraseId: String(args['erase-id']),
    rollerIntervalMs: integer(args['roller-interval-ms'], 'roller-interval-ms', 0),
    rollerMinutesPerRun: integer(args['roller-minutes-per-run'], 'roller-minutes-per-run', 1),
    writeBudgetS: integer(args['write-budget-s'], 'write-budget-s', 1),
    rollerBudgetS: integer(args['roller-budget-s'], 'roller-budget-s', 1)
  }
  const s = Number(args['zipf-s'])
  if (!(s > 0)) throw new RangeError('--zipf-s must be > 0')
  const dists = /** @type {Array<'uniform'|'zipf'>} */ (list(args.dists))
  for (const d of dists) if (d !== 'uniform' && d !== 'zipf') throw new RangeError(`--dists: unknown ${d}`)
  const configParams = {
    ids: integer(args.ids, 'ids', 1),
    lrus: list(args.lru).map((v) => integer(v, 'lru', 1)),
    endpoints: list(args.endpoints),
    dists,
    s,
    rate: integer(args.rate, 'rate', 1),
    connections: integer(args.connections, 'connections', 1),
    warmupS: integer(args.warmup, 'warmup', 1),
    measureS: integer(args.measure, 'measure', 1),
    workers: integer(args.workers, 'workers', 1),
    port: integer(args.port, 'port', 1024),
    seedBudgetS: integer(args['seed-budget-s'], 'seed-budget-s', 1)
  }
  const overrides = { ...HBASE, heap: args['hbase-heap'] }
  const opts = infra.resolveOptions(overrides)
  const started = Date.now()
  const loadAtStart = Math.round(os.loadavg()[0] * 10) / 10
  if (fs.existsSync(opts.dataDir)) {
    log(`scale: wiping ${path.relative(process.cwd(), opts.dataDir)} left by an earlier run`)
    await infra.wipe(opts)
  }
  // Ended early (Ctrl-C, a budget's kill): HBase goes too; the job processes notice by themselves.
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => {
      log(`scale: ${signal}: killing HBase (${path.relative(process.cwd(), opts.stateDir)} keeps its data until the next run)`)
      infra.kill(opts).finally(() => process.exit(130))
    })
  }
  const info = await infra.up(opts, { log })
  const classpath = await infra.ensureClasspath(opts)
  await ensureToolCompiled(opts, classpath)
  const client = createHBaseClient({ bootstrap: info.bootstrap, rpcTimeout: 30000, operationTimeout: 120000 })
  const ctx = { opts, pid: info.pid, bootstrap: info.bootstrap, client, classpath, log }
  let logPart = null
  let configPart = null
  /** @type {string[]} a part that failed: said in the report, the other part still runs */
  const failures = []
  try {
    // The config part first: its size is fixed, and the log part's writes can stop early at their budget.
    if (runConfig) {
      configPart = await runConfigPart({ ...ctx, params: configParams }).catch((err) => {
        failures.push(`config part: ${err.stack || err.message}`)
        log(`scale: the config part failed: ${err.stack || err.message}`)
        return null
      })
    }
    if (runLog) {
      logPart = await runLogPart({ ...ctx, params: logParams }).catch((err) => {
        failures.push(`log part: ${err.stack || err.message}`)
        log(`scale: the log part failed: ${err.stack || err.message}`)
        return null
      })
    }
  } finally {
    await client.close()
    if (!args.keep) {
      const wiped = await infra.wipe(opts)
      // Everything but the resolved classpath and the compiled tools (a few KiB, a minute to make again).
      for (const name of fs.readdirSync(opts.stateDir)) {
        if (name === 'classes' || name.startsWith('classpath-')) continue
        fs.rmSync(path.join(opts.stateDir, name), { recursive: true, force: true })
      }
      log(`scale: stopped HBase (pid ${wiped.pid}); removed its data, logs and journals (${path.relative(process.cwd(), opts.stateDir)})`)
    }
  }
  const seconds = (Date.now() - started) / 1000
  const report = {
    date: new Date().toISOString(),
    seconds,
    loadAverage: [loadAtStart, Math.round(os.loadavg()[0] * 10) / 10],
    machine: describeMachine(),
    parameters: {
      command: `npm run bench:scale${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
      part: args.part,
      ...(runLog ? { log: logParams } : {}),
      ...(runConfig ? { config: configParams } : {}),
      s,
      hbaseVersion: opts.version,
      jvm: opts.jvm,
      heap: opts.heap
    },
    log: logPart && { ...logPart, summary: logSummary(logPart) },
    config: configPart,
    failures
  }
  const out = writeResult({ out: args.out, name: 'scale', report, markdown: markdown(report) })
  log(`written: ${out}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
