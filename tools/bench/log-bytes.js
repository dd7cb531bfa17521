'use strict'

/**
 * What one access-log row costs on disk, per storage variant of its column family (no encoding
 * and no compression, as today; FAST_DIFF and ROW_INDEX_V1 data block encodings; GZ, ZSTD and
 * LZ4 compression; then the best encoding with the best compressions), on an HBase of its own:
 *
 * - writes `--rows` realistic entries (tools/bench/lib/log-entries.js) through the HBase sink itself
 *   (logging/hbase-sink/: its row keys, its JSON values, its batches) into a table per variant,
 *   pre-split as `hbase:up` splits the access log;
 * - flushes it, major-compacts it and reopens it (tools/dev-hbase/java/BeaconHBaseStore.java), and
 *   sums the HFiles under the table's family dirs;
 * - reads it back through the log's query code (logging/query/): one id over the day (HBase
 *   filters every row), then the whole day;
 * - with the HBase JVM's CPU from /proc over each step.
 *
 * The figures and the markdown report: tools/bench/lib/log-bytes-report.js. Results go to
 * tools/bench/results/<time>-log-bytes.{md,json}; the instance is wiped at the end.
 *
 *   npm run bench:log-bytes -- [--rows 1000000] [--variants none,fast-diff,…] [--no-combined]
 *     [--views-per-sec 10000] [--keep] [--out FILE.json]
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const infra = require('../dev-hbase')
const { ensureToolCompiled, runTool } = require('../dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { log: { createHBaseSink, createLogQuery }, tables: { ACCESS_LOG_FAMILY, accessLogSplitKeys } } = require('../../index.js')
const { createSampler } = require('./lib/proc-sampler')
const { describeMachine } = require('./lib/machine')
const { writeResult } = require('./lib/result-files')
const { logEntries, DAY_MS } = require('./lib/log-entries')
const { hfileBytes } = require('./lib/hfile-bytes')
const { VARIANTS, summarize, combinedVariants, markdown } = require('./lib/log-bytes-report')

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'warmup-rows': { type: 'string', default: '200000' },
    variants: { type: 'string', default: VARIANTS.map((v) => v.name).join(',') },
    'no-combined': { type: 'boolean', default: false },
    'views-per-sec': { type: 'string', default: '10000' },
    keep: { type: 'boolean', default: false },
    out: { type: 'string' }
  }
})
const ROWS = Number(args.rows)
const WARMUP_ROWS = Number(args['warmup-rows'])
if (!Number.isInteger(ROWS) || ROWS < 1000) throw new Error('--rows must be an integer >= 1000')
if (!Number.isInteger(WARMUP_ROWS) || WARMUP_ROWS < 0) throw new Error('--warmup-rows must be an integer >= 0')

const BUCKETS = 16
const REGIONS = 8
const DAY_START = Date.UTC(2026, 10, 25)
const WRITER_ID = 'xw1p48213' // shaped like server.js's: instance, worker tag, pid
const ID = '42'
const STEP_TIMEOUT_MS = 1800000
// Entries written before the bench looks at the sink's backlog, and the backlog it keeps:
// enough batches queued to keep the sink's 3 in flight busy, far below its maxQueue (no spill).
const WRITE_STEP = 2000
const MAX_BACKLOG = 20000

const log = (line) => console.error(line)

/** The bench's own instance: its state dir and ports, which no test uses. */
function hbaseOptions () {
  return infra.resolveOptions({
    stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-log-bytes'),
    zkPort: 2461,
    masterPort: 16800,
    rsPort: 16820,
    masterInfoPort: -1,
    rsInfoPort: -1,
    seedCount: 100,
    jvm: 'server'
  })
}

/**
 * Runs `fn` with the HBase JVM's CPU over it.
 * @template T
 * @param {number} pid
 * @param {() => Promise<T>} fn
 * @returns {Promise<{ value: T, seconds: number, cpuUs: number }>}
 */
async function measured (pid, fn) {
  const sampler = createSampler({ hbase: () => [pid] })
  sampler.start()
  const started = performance.now()
  const value = await fn()
  const seconds = (performance.now() - started) / 1000
  return { value, seconds, cpuUs: sampler.stop().hbase.cpuUs }
}

/** The HBase JVM's CPU per second while no client sends. */
async function idleCpuUsPerSec (pid, seconds = 3) {
  const { cpuUs } = await measured(pid, () => sleep(seconds * 1000))
  return Math.round(cpuUs / seconds)
}

/**
 * The client the sink writes through, summing the row keys and values it sends.
 * @param {import('@beacon/hbase-client').HBaseClient} client
 */
function countingClient (client) {
  const sent = { keyBytes: 0, valueBytes: 0 }
  return {
    sent,
    multiPut (table, puts, opts) {
      for (const put of puts) {
        sent.keyBytes += Buffer.byteLength(put.row)
        for (const columns of Object.values(put.cells)) {
          for (const value of Object.values(columns)) sent.valueBytes += Buffer.byteLength(value)
        }
      }
      return client.multiPut(table, puts, opts)
    }
  }
}

/**
 * Writes the entries through a sink of its own and waits until HBase has every one.
 * @returns {Promise<{ keyBytes: number, valueBytes: number }>}
 */
async function writeEntries (client, table, journalDir, rows) {
  const counting = countingClient(client)
  const sink = createHBaseSink({ client: /** @type {any} */ (counting), table, journalDir, writerId: WRITER_ID, buckets: BUCKETS })
  let n = 0
  for (const entry of logEntries({ count: rows, dayStart: DAY_START })) {
    sink.write(/** @type {any} */ (entry)) // an event's entry goes through write() as the data plane's do
    if (++n % WRITE_STEP !== 0) continue
    for (let s = sink.stats(); s.queueDepth + s.inFlight > MAX_BACKLOG; s = sink.stats()) await sleep(2)
  }
  await sink.flush()
  const stats = sink.stats()
  await sink.close()
  // Every entry in HBase from the live path: none went through the journal, none was shed.
  if (stats.written !== rows || stats.spilled !== 0 || stats.shed !== 0) {
    throw new Error(`log-bytes: the sink wrote ${stats.written} of ${rows} (spilled ${stats.spilled}, shed ${stats.shed})`)
  }
  return counting.sent
}

/**
 * Reads the table back through the log's query code.
 * @returns {Promise<number>} rows returned
 */
async function scanRows (client, table, filters) {
  const query = createLogQuery({ client, table, buckets: BUCKETS, maxIdLength: 64, timeout: 120000 })
  let rows = 0
  for await (const record of query.scan({ from: DAY_START, to: DAY_START + DAY_MS, ...filters })) if (record) rows++
  return rows
}

/**
 * One variant, start to end.
 * @param {{ opts: Readonly<Record<string, any>>, pid: number, client: any, classpath: string }} hb
 * @param {import('./lib/log-bytes-report').Variant} variant
 * @param {number} [rows]
 * @returns {Promise<import('./lib/log-bytes-report').Measured>}
 */
async function measureVariant (hb, variant, rows = ROWS) {
  const { opts, pid, client, classpath } = hb
  const table = `log_bytes_${variant.name.replace(/[^a-z0-9]+/g, '_')}`
  const store = (command) => runTool(opts, classpath, [command, '--table', table, '--timeout-ms', String(STEP_TIMEOUT_MS)],
    { tool: 'BeaconHBaseStore' })
  if (await client.admin.tableExists(table)) await client.admin.deleteTable(table)
  await client.admin.createTable(table, {
    families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(BUCKETS, REGIONS), attributes: variant.attributes
  })
  const idle = await idleCpuUsPerSec(pid)
  log(`log-bytes: ${variant.name}: writing ${rows} entries (HBase idle ${idle} µs/s)…`)
  const journalDir = path.join(opts.stateDir, 'journal', table)
  let writeSeconds = 0
  const write = await measured(pid, async () => {
    const started = performance.now()
    const sent = await writeEntries(client, table, journalDir, rows)
    writeSeconds = (performance.now() - started) / 1000
    await store('flush')
    return sent
  })
  log(`log-bytes: ${variant.name}: ${(rows / writeSeconds).toFixed(0)} rows/s; major compaction…`)
  const compaction = await measured(pid, () => store('compact'))
  await store('reopen')
  const disk = hfileBytes(path.join(opts.dataDir, 'hbase'), table, ACCESS_LOG_FAMILY)
  const { storeFiles, regions } = compaction.value
  log(`log-bytes: ${variant.name}: compacted in ${compaction.seconds.toFixed(1)} s to ${storeFiles} store files in ${regions} regions; ` +
    `${disk.bytes} bytes in ${disk.files} HFiles (${(disk.bytes / rows).toFixed(1)} bytes/row); scans…`)
  const filtered = await measured(pid, () => scanRows(client, table, { id: ID }))
  const scan = await measured(pid, () => scanRows(client, table, {}))
  if (scan.value !== rows) throw new Error(`log-bytes: ${table}: the scan found ${scan.value} rows of ${rows}`)
  if (!args.keep) await client.admin.deleteTable(table)
  return {
    name: variant.name,
    attributes: variant.attributes,
    rows,
    keyBytes: write.value.keyBytes,
    valueBytes: write.value.valueBytes,
    hfileBytes: disk.bytes,
    hfiles: disk.files,
    idleCpuUsPerSec: idle,
    write: { seconds: writeSeconds, flushSeconds: write.seconds - writeSeconds, cpuUs: write.cpuUs },
    compaction: { seconds: compaction.seconds, cpuUs: compaction.cpuUs },
    scan: { rows: scan.value, seconds: scan.seconds, cpuUs: scan.cpuUs },
    filteredScan: { rows: filtered.value, examined: rows, seconds: filtered.seconds, cpuUs: filtered.cpuUs }
  }
}

/**
 * @param {string} list comma-separated variant names
 * @returns {import('./lib/log-bytes-report').Variant[]}
 */
function chosenVariants (list) {
  return list.split(',').map((name) => name.trim()).filter(Boolean).map((name) => {
    const variant = VARIANTS.find((v) => v.name === name)
    if (!variant) throw new Error(`unknown variant ${name}; known: ${VARIANTS.map((v) => v.name).join(', ')}`)
    return variant
  })
}

async function main () {
  const variants = chosenVariants(args.variants)
  const opts = hbaseOptions()
  const info = await infra.up(opts, { log })
  const classpath = await infra.ensureClasspath(opts)
  await ensureToolCompiled(opts, classpath)
  const client = createHBaseClient({ bootstrap: info.bootstrap, rpcTimeout: 30000, operationTimeout: 120000 })
  const hb = { opts, pid: info.pid, client, classpath }
  /** @type {import('./lib/log-bytes-report').Measured[]} */
  const measuredVariants = []
  try {
    // The JVM's JIT compiles the write, flush, compaction and scan paths on the first table: a
    // table of today's layout that is not reported, so that no variant pays for it.
    if (WARMUP_ROWS > 0) await measureVariant(hb, { name: 'warmup', attributes: {} }, WARMUP_ROWS)
    for (const variant of variants) measuredVariants.push(await measureVariant(hb, variant))
    const combined = args['no-combined'] ? [] : combinedVariants(summarize(measuredVariants))
    for (const variant of combined) measuredVariants.push(await measureVariant(hb, variant))
  } finally {
    await client.close()
    if (!args.keep) {
      const wiped = await infra.wipe(opts)
      fs.rmSync(opts.stateDir, { recursive: true, force: true })
      log(`log-bytes: stopped HBase (pid ${wiped.pid}) and removed ${path.relative(process.cwd(), opts.stateDir)}`)
    }
  }
  const report = {
    date: new Date().toISOString(),
    machine: describeMachine(),
    parameters: {
      command: `npm run bench:log-bytes${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
      rows: ROWS,
      warmupRows: WARMUP_ROWS,
      hbaseVersion: opts.version,
      jvm: opts.jvm,
      heap: opts.heap,
      buckets: BUCKETS,
      regions: REGIONS
    },
    viewsPerSec: Number(args['views-per-sec']),
    measured: measuredVariants,
    summary: summarize(measuredVariants)
  }
  const out = writeResult({ out: args.out, name: 'log-bytes', report, markdown: markdown(report) })
  log(`written: ${out}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
