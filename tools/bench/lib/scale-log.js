'use strict'

/**
 * The scale bench's log part (tools/bench/scale.js): `rows` realistic access-log entries
 * (./log-entries.js) spread over one past UTC day, written through the HBase sink itself
 * (logging/hbase-sink/, with the rollup marker a server's sink has) into a table of its own made as
 * `hbase:up` makes the access log (GZ, pre-split, the default retention as TTL), then:
 * - bytes per row on disk after the flush, and after a major compaction (`compact`);
 * - the rollup job (logging/rollup/roller.js) catching up with the day's marked minutes in a
 *   process of its own (./scale-roller.js), its CPU and RSS read from /proc;
 * - `log count` of the day from the rollups and from the raw rows (logging/query/);
 * - `log scan` of the first `scanMinutes` of the day, rows/s;
 * - `log erase` of one id over the day (logging/erase.js), and the counts after it.
 * Every count is checked against the rows written; the part fails otherwise.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { performance } = require('node:perf_hooks')
const { setTimeout: sleep } = require('node:timers/promises')
const { runTool } = require('../../dev-hbase')
const {
  log: { createHBaseSink, createRollupMarker, createLogQuery, eraseId },
  tables: { ACCESS_LOG_FAMILY, ACCESS_LOG_STORAGE, accessLogSplitKeys, ROLLUP_FAMILY },
  settings: { SINK_DEFAULTS, parseDuration }
} = require('../../../index.js')
const { createSampler, readAll } = require('./proc-sampler')
const { firstJsonLine } = require('./processes')
const { logEntries, ENDPOINTS, DAY_MS } = require('./log-entries')
const { hfileBytes } = require('./hfile-bytes')

const BUCKETS = 16
const REGIONS = 8
/** The part's own log table, made as `hbase:up` makes beacon_access_log (a server on the instance writes that one). */
const TABLE = 'beacon_access_log_scale'
const WRITER_ID = 'xw1p48213' // shaped like server.js's: instance, worker tag, pid
const WRITE_STEP = 2000
const MAX_BACKLOG = 20000
const STEP_TIMEOUT_MS = 3600000
const ROLLER = path.join(__dirname, 'scale-roller.js')

/**
 * @typedef {object} LogPartContext
 * @property {Readonly<Record<string, any>>} opts the HBase instance's options
 * @property {number} pid the HBase JVM
 * @property {string[]} bootstrap
 * @property {any} client the HBase client (the `@beacon/hbase-client` package)
 * @property {string} classpath
 * @property {(line: string) => void} log
 * @property {{ rows: number, logIds: number, batchSize: number, compact: boolean, scanMinutes: number, eraseId: string,
 *   rollerIntervalMs: number, rollerMinutesPerRun: number, writeBudgetS: number, rollerBudgetS: number }} params
 */

/**
 * Runs `fn` with the HBase JVM's CPU (and this process's) over it.
 * @template T
 * @param {number} hbasePid
 * @param {() => Promise<T>} fn
 * @returns {Promise<{ value: T, seconds: number, hbaseCpuUs: number|null, selfCpuUs: number }>}
 */
async function measured (hbasePid, fn) {
  const sampler = createSampler({ hbase: () => [hbasePid] })
  const self = process.cpuUsage()
  sampler.start()
  const started = performance.now()
  const value = await fn()
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(self)
  return { value, seconds, hbaseCpuUs: sampler.stop().hbase.cpuUs, selfCpuUs: used.user + used.system }
}

/**
 * @param {string} dir
 * @returns {number} bytes of the regular files under it (0 when absent)
 */
function dirBytes (dir) {
  let bytes = 0
  let entries
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) bytes += dirBytes(p)
    else if (e.isFile()) bytes += fs.statSync(p).size
  }
  return bytes
}

/**
 * Writes the day's entries through a sink of its own (rollup marks included) and waits until
 * HBase has every one; stops early, with what it wrote, past `budgetS`.
 * @returns {Promise<{ rows: number, stoppedEarly: boolean, marks: number }>}
 */
async function writeDay (ctx, dayStart) {
  const { client, opts, params, log } = ctx
  const { rows } = params
  const table = TABLE
  const marker = createRollupMarker({ client, rollupTable: opts.rollupTable, logTable: table, writerId: WRITER_ID })
  const sink = createHBaseSink({
    client,
    table,
    journalDir: path.join(opts.stateDir, 'journal', 'scale'),
    writerId: WRITER_ID,
    buckets: BUCKETS,
    batchSize: params.batchSize,
    rollupMarker: marker
  })
  const started = performance.now()
  let n = 0
  let stoppedEarly = false
  let nextReport = started + 30000
  for (const entry of logEntries({ count: rows, ids: params.logIds, dayStart })) {
    sink.write(/** @type {any} */ (entry))
    if (++n % WRITE_STEP !== 0) continue
    for (let s = sink.stats(); s.queueDepth + s.inFlight > MAX_BACKLOG; s = sink.stats()) await sleep(2)
    const now = performance.now()
    if (now > nextReport) {
      nextReport = now + 30000
      log(`scale: log: ${n.toLocaleString('en-US')} of ${rows.toLocaleString('en-US')} written, ` +
        `${Math.round(n / ((now - started) / 1000))} rows/s`)
    }
    if (now - started > params.writeBudgetS * 1000) {
      stoppedEarly = true
      log(`scale: log: the write budget (${params.writeBudgetS} s) is spent: stopping at ${n} rows`)
      break
    }
  }
  await sink.flush()
  const stats = sink.stats()
  await sink.close()
  if (stats.written !== n || stats.spilled !== 0 || stats.shed !== 0) {
    throw new Error(`scale: the sink wrote ${stats.written} of ${n} (spilled ${stats.spilled}, shed ${stats.shed})`)
  }
  const rollup = /** @type {any} */ (stats).rollup || {}
  if (rollup.disabled) throw new Error(`scale: rollup marks were switched off: ${rollup.disabled}`)
  return { rows: n, stoppedEarly, marks: rollup.marks || 0 }
}

/**
 * The rollup job in its own process until it has caught up, with its CPU and RSS from /proc
 * (and the RSS every second, for its peak and its end) and the HBase JVM's CPU meanwhile.
 */
async function rollerCatchUp (ctx) {
  const { opts, params, bootstrap, pid: hbasePid, log } = ctx
  const job = {
    bootstrap,
    logTable: TABLE,
    rollupTable: opts.rollupTable,
    buckets: BUCKETS,
    intervalMs: params.rollerIntervalMs,
    maxMinutesPerRun: params.rollerMinutesPerRun,
    deadlineMs: params.rollerBudgetS * 1000
  }
  const child = spawn(process.execPath, [ROLLER, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let lastLine = ''
  child.stderr.on('data', (c) => { lastLine = String(c).trim().split('\n').pop() || lastLine })
  const sampler = createSampler({ roller: () => [child.pid], hbase: () => [hbasePid] })
  sampler.start()
  /** @type {number[]} */
  const rssMiB = []
  const progress = setInterval(() => log(`scale: log: ${lastLine}`), 30000)
  const rssTimer = setInterval(() => {
    const s = readAll().get(/** @type {number} */ (child.pid))
    if (s) rssMiB.push(Math.round(s.rssBytes / 2 ** 20))
  }, 1000)
  const started = performance.now()
  try {
    const result = await firstJsonLine(child, job.deadlineMs + 180000, 'the rollup job')
    const seconds = (performance.now() - started) / 1000
    const sampled = sampler.stop()
    return {
      ...result,
      wallSeconds: seconds,
      cpuUs: sampled.roller.cpuUs,
      peakRssMiB: sampled.roller.peakRssMiB,
      rssMiB,
      hbaseCpuUs: sampled.hbase.cpuUs
    }
  } catch (err) {
    sampler.stop()
    child.kill('SIGKILL')
    throw err
  } finally {
    clearInterval(progress)
    clearInterval(rssTimer)
  }
}

/**
 * @param {LogPartContext} ctx
 * @returns {Promise<Record<string, any>>} the part's measurements (./scale-report.js reads them)
 */
async function runLogPart (ctx) {
  const { opts, client, classpath, params, log, pid: hbasePid } = ctx
  const table = TABLE
  if (await client.admin.tableExists(table)) await client.admin.deleteTable(table)
  await client.admin.createTable(table, {
    families: [ACCESS_LOG_FAMILY],
    splits: accessLogSplitKeys(BUCKETS, REGIONS),
    ttl: parseDuration(SINK_DEFAULTS.hbase.retention),
    attributes: ACCESS_LOG_STORAGE
  })
  const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS // yesterday, UTC: every minute ready to roll up
  const store = (command, name = table) => runTool(opts, classpath, [command, '--table', name, '--timeout-ms', String(STEP_TIMEOUT_MS)],
    { tool: 'BeaconHBaseStore' })
  const day = { from: dayStart, to: dayStart + DAY_MS }
  const rootDir = path.join(opts.dataDir, 'hbase')
  const walBytes = () => dirBytes(path.join(rootDir, 'WALs')) + dirBytes(path.join(rootDir, 'oldWALs'))
  const query = createLogQuery({
    client, table, buckets: BUCKETS, maxIdLength: 64, timeout: 600000, rollupTable: opts.rollupTable, endpoints: ENDPOINTS
  })

  log(`scale: log: writing ${params.rows.toLocaleString('en-US')} entries over ${new Date(dayStart).toISOString().slice(0, 10)} ` +
    `(ids 1..${params.logIds}) through the HBase sink…`)
  const walBefore = walBytes()
  const write = await measured(hbasePid, () => writeDay(ctx, dayStart))
  const rows = write.value.rows
  const walAfterWrites = Math.max(0, walBytes() - walBefore) // old WALs the cleaner deletes meanwhile are missed
  log(`scale: log: ${rows} rows in ${write.seconds.toFixed(0)} s (${Math.round(rows / write.seconds)} rows/s); flush…`)
  const flush = await measured(hbasePid, () => store('flush'))
  await store('flush', opts.rollupTable)
  const afterFlush = hfileBytes(rootDir, table, ACCESS_LOG_FAMILY)

  log('scale: log: the rollup job catches up with the day…')
  const roller = await rollerCatchUp(ctx)
  if (!roller.caughtUp) log(`scale: log: the rollup job did not catch up within ${params.rollerBudgetS} s`)
  log(`scale: log: rollup job: ${roller.minutesRolled} minutes, ${roller.rowsCounted} rows in ${roller.wallSeconds.toFixed(0)} s`)

  let compaction = null
  let afterCompaction = null
  if (params.compact) {
    log('scale: log: major compaction…')
    compaction = await measured(hbasePid, () => store('compact'))
    await store('reopen')
    afterCompaction = hfileBytes(rootDir, table, ACCESS_LOG_FAMILY)
  }
  await store('flush', opts.rollupTable)
  // The whole rollup table: this table's counts, and a server's if one ran on the instance before (a few minutes' worth)
  const rollupBytes = hfileBytes(rootDir, opts.rollupTable, ROLLUP_FAMILY)

  log('scale: log: counting the day from the rollups, then from the raw rows…')
  const fromRollups = await measured(hbasePid, () => query.count({ ...day }))
  const fromRaw = await measured(hbasePid, () => query.count({ ...day, scan: true }))
  /** @type {string[]} what did not check out: said in the report, and the run goes on to measure the rest */
  const problems = []
  if (fromRollups.value.total !== rows || fromRaw.value.total !== rows) {
    problems.push(`counts disagree: ${rows} written, ${fromRollups.value.total} from the rollups, ${fromRaw.value.total} raw` +
      (roller.caughtUp ? '' : ' (the rollup job had not caught up)'))
  }

  const scanTo = dayStart + Math.min(DAY_MS, params.scanMinutes * 60000)
  log(`scale: log: log scan of the first ${params.scanMinutes} minutes…`)
  const scan = await measured(hbasePid, async () => {
    let n = 0
    for await (const record of query.scan({ from: dayStart, to: scanTo })) if (record) n++
    return n
  })

  log(`scale: log: log erase of id ${params.eraseId}…`)
  const idCountBefore = await query.count({ ...day, id: params.eraseId })
  const target = { client, table, buckets: BUCKETS, rollupTable: opts.rollupTable, timeout: 600000 }
  const erase = await measured(hbasePid, () => eraseId(target, { id: params.eraseId, from: day.from, to: day.to }))
  const idCountAfter = await query.count({ ...day, id: params.eraseId })
  const totalAfter = await query.count({ ...day })
  if (erase.value.deleted !== idCountBefore.total || idCountAfter.total !== 0 || totalAfter.total !== rows - erase.value.deleted) {
    problems.push(`erase: ${idCountBefore.total} rows of id ${params.eraseId} counted, ${erase.value.deleted} deleted, ` +
      `${idCountAfter.total} left; day ${totalAfter.total} of ${rows - erase.value.deleted}`)
  }
  for (const p of problems) log(`scale: log: PROBLEM: ${p}`)
  const cut = (m) => ({ seconds: m.seconds, hbaseCpuUs: m.hbaseCpuUs, selfCpuUs: m.selfCpuUs })
  return {
    table,
    problems,
    day: new Date(dayStart).toISOString().slice(0, 10),
    requestedRows: params.rows,
    rows,
    stoppedEarly: write.value.stoppedEarly,
    logIds: params.logIds,
    batchSize: params.batchSize,
    rollerIntervalMs: params.rollerIntervalMs,
    rollerMinutesPerRun: params.rollerMinutesPerRun,
    write: { ...cut(write), marks: write.value.marks, walBytes: walAfterWrites },
    flush: cut(flush),
    afterFlush,
    compaction: compaction && cut(compaction),
    afterCompaction,
    rollupBytes,
    roller,
    countFromRollups: {
      ...cut(fromRollups),
      total: fromRollups.value.total,
      rollupMinutes: fromRollups.value.rollupMinutes,
      scannedMinutes: fromRollups.value.scannedMinutes
    },
    countFromRaw: { ...cut(fromRaw), total: fromRaw.value.total },
    scan: { ...cut(scan), minutes: params.scanMinutes, rows: scan.value },
    erase: {
      ...cut(erase),
      id: params.eraseId,
      ...erase.value,
      idRowsBefore: idCountBefore.total,
      idRowsAfter: idCountAfter.total,
      dayAfter: totalAfter.total
    }
  }
}

module.exports = { runLogPart, dirBytes }
