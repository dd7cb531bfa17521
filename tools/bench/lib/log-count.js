'use strict'

/**
 * The bench's `logcount` scenario: what an exact count of the access log costs, from the raw
 * rows and from the rollups (logging/rollup/). It writes `--logcount-rows` access-log rows (1
 * million by default) spread over `--logcount-minutes` past minutes into a table of its own,
 * marking their minutes as the HBase sink does, then measures, each with the wall time and the
 * HBase JVM's CPU:
 * - counting the range from the raw rows (one scan per salt bucket per minute);
 * - the roller counting every marked minute (what the rollups cost HBase, per row);
 * - counting the same range from the rollups (what `log count` reads once minutes are rolled up).
 * The counts must agree with the rows written; the scenario fails otherwise.
 */

const { performance } = require('node:perf_hooks')
const { accessLogRowKey, accessLogSplitKeys, ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } = require('../../../logging/access-log-layout')
const { MINUTE_MS, minuteOf, groupsOfId } = require('../../../logging/rollup/layout')
const { createRollupMarker } = require('../../../logging/rollup/marker')
const { createRoller } = require('../../../logging/rollup/roller')
const { countMinute } = require('../../../logging/rollup/minute-scan')
const { exactMinutes } = require('../../../logging/rollup/read')
const { createSampler } = require('./proc-sampler')

const BATCH = 5000
const ID = '42'
const idOf = (i) => String(1 + ((i * 7919) % 10000))
/** How many of the rows written carry id `id` (as writeRows assigns ids). */
function rowsOfId (rows, id) {
  let n = 0
  for (let i = 0; i < rows; i++) if (idOf(i) === id) n++
  return n
}
const PARALLEL = 4
const BUCKETS = 16

/**
 * @param {{ env: any, params: Record<string, any>, settings: any, log: (line: string) => void }} ctx
 * @param {import('@beacon/hbase-client').HBaseClient} client
 * @returns {Promise<object>} the report section
 */
async function logCount (ctx, client) {
  const rows = ctx.params.logcountRows
  const minutes = ctx.params.logcountMinutes
  const table = `beacon_bench_logcount_${Date.now()}`
  const rollupTable = ctx.settings.logSinks.hbase.rollupTable
  const to = minuteOf(Date.now()) - MINUTE_MS
  const from = to - minutes * MINUTE_MS
  const source = { client, rollupTable, logTable: table, buckets: BUCKETS }
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys() })
  /** Runs `fn`, with its wall time and the HBase JVM's CPU. */
  async function timed (what, fn) {
    const sampler = createSampler({ hbase: () => [ctx.env.hbasePid()] })
    sampler.start()
    const started = performance.now()
    const value = await fn()
    const ms = performance.now() - started
    const cpu = sampler.stop().hbase
    ctx.log(`logcount: ${what} in ${(ms / 1000).toFixed(2)} s, HBase CPU ` +
      `${cpu.cpuUs === null ? '?' : Math.round(cpu.cpuUs / 1000) + ' ms'}`)
    return { value, ms: Math.round(ms), hbaseCpuMs: cpu.cpuUs === null ? null : Math.round(cpu.cpuUs / 1000) }
  }
  try {
    const written = await timed(`${rows} rows written over ${minutes} minutes`, () => writeRows(client, table, rollupTable, rows, from, to))
    const raw = await timed('the range counted from the raw rows', async () => {
      let total = 0
      for (let minute = from; minute < to; minute += MINUTE_MS) {
        total += (await countMinute(client, { logTable: table, buckets: BUCKETS, minute })).rows
      }
      return total
    })
    const roller = createRoller({ client, logTable: table, rollupTable, buckets: BUCKETS, settleMs: 0, maxMinutesPerRun: minutes + 1 })
    const rolled = await timed('every minute rolled up', async () => {
      let n = 0
      for (let k = await roller.runOnce(); k > 0; k = await roller.runOnce()) n += k
      if (roller.stats().lastError) throw new Error(`logcount: the roller failed: ${roller.stats().lastError}`)
      return n
    })
    const sum = async (want) => {
      let total = 0
      for await (const m of exactMinutes(source, from, to, want)) for (const n of m.groups.values()) total += n
      return total
    }
    const fromRollups = await timed('the range counted from the rollups (totals rows)', () => sum({ totals: true }))
    const oneId = await timed('one id counted from the rollups', () => sum({ groups: groupsOfId(['sample5'], ID) }))
    const byId = await timed('the range counted by id from the rollups (every group)', () => sum({}))
    const idRows = rowsOfId(rows, ID)
    if (raw.value !== rows || fromRollups.value !== rows || byId.value !== rows || oneId.value !== idRows) {
      throw new Error(`logcount: counts disagree: ${rows} written, ${raw.value} from the raw rows, ${fromRollups.value} from the totals, ` +
        `${byId.value} by id; id ${ID}: ${idRows} written, ${oneId.value} from the rollups`)
    }
    const perRow = (r) => (r.hbaseCpuMs === null ? null : Math.round(r.hbaseCpuMs * 1000 / rows * 100) / 100)
    const cases = {
      'write (multiPut + marks)': {
        ms: written.ms,
        hbaseCpuMs: written.hbaseCpuMs,
        hbaseUsPerRow: perRow(written),
        rowsPerS: Math.round((rows / written.ms) * 1000)
      },
      'count from the raw rows': {
        ms: raw.ms,
        hbaseCpuMs: raw.hbaseCpuMs,
        hbaseUsPerRow: perRow(raw),
        rowsPerS: Math.round((rows / raw.ms) * 1000)
      },
      'roll up every minute': {
        ms: rolled.ms,
        hbaseCpuMs: rolled.hbaseCpuMs,
        hbaseUsPerRow: perRow(rolled),
        rowsPerS: Math.round((rows / rolled.ms) * 1000)
      },
      'count from the rollups': {
        ms: fromRollups.ms,
        hbaseCpuMs: fromRollups.hbaseCpuMs,
        hbaseUsPerRow: perRow(fromRollups),
        rowsPerS: Math.round((rows / Math.max(1, fromRollups.ms)) * 1000)
      },
      'count one id from the rollups': {
        ms: oneId.ms,
        hbaseCpuMs: oneId.hbaseCpuMs,
        hbaseUsPerRow: perRow(oneId),
        rowsPerS: Math.round((rows / Math.max(1, oneId.ms)) * 1000)
      },
      'count by id from the rollups': {
        ms: byId.ms,
        hbaseCpuMs: byId.hbaseCpuMs,
        hbaseUsPerRow: perRow(byId),
        rowsPerS: Math.round((rows / Math.max(1, byId.ms)) * 1000)
      }
    }
    return {
      title: 'Counting the access log: raw rows vs rollups',
      description: `${rows.toLocaleString('en-US')} access-log rows over ${minutes} past minutes (ids 1..10000, 16 salt buckets, the ` +
        'table pre-split like beacon_access_log), written and marked as the HBase sink does; then one exact count of the whole range ' +
        'from the raw rows (a scan per bucket per minute: any filter reads every row), the roller counting every minute, and the same ' +
        'range counted from the rollups three ways: the total (the totals rows, a few cells a minute), one id (its few cells a minute) ' +
        'and by id (every group: about one cell per id per minute). Every count equals the rows written. "rows/s" is rows counted per ' +
        'second of wall time. Wall time and the HBase JVM\'s CPU (all threads, from /proc).',
      parameters: { rows, minutes },
      markdown: [
        '| step | wall time ms | rows/s | HBase CPU ms | HBase CPU µs per row |',
        '|---|---:|---:|---:|---:|',
        ...Object.entries(cases).map(([name, c]) => `| ${name} | ${c.ms} | ` +
          `${c.rowsPerS.toLocaleString('en-US')} | ${c.hbaseCpuMs ?? '–'} | ${c.hbaseUsPerRow ?? '–'} |`)
      ],
      cases
    }
  } finally {
    await client.admin.deleteTable(table).catch(() => {})
  }
}

/** Writes `rows` entries spread over [from, to), in batches, a few at once, marking their minutes. */
async function writeRows (client, table, rollupTable, rows, from, to) {
  const marker = createRollupMarker({ client, rollupTable, logTable: table, writerId: 'benchlog' })
  const span = to - from
  let next = 0
  async function worker () {
    while (next < rows) {
      const start = next
      next = Math.min(rows, next + BATCH)
      const puts = []
      for (let i = start; i < next; i++) {
        const ts = from + Math.floor((i / rows) * span)
        const id = idOf(i)
        const value = JSON.stringify({
          ts,
          endpoint: 'sample5',
          id,
          status: i % 50 === 0 ? 404 : 200,
          ms: 0.5,
          ip: '10.0.0.1',
          ua: 'bench',
          ref: null
        })
        puts.push({
          row: accessLogRowKey(i % BUCKETS, ts, `bench-${i}`),
          cells: { [ACCESS_LOG_FAMILY]: { [ACCESS_LOG_QUALIFIER]: value } }
        })
      }
      const results = await client.multiPut(table, puts)
      const failed = results.filter(Boolean)
      if (failed.length) throw new Error(`logcount: ${failed.length} puts failed: ${failed[0].code || failed[0].message}`)
      const err = await marker.mark(puts.map((p) => p.row))
      if (err || marker.stats().disabled) {
        throw new Error(`logcount: marks failed: ${err ? /** @type {any} */ (err).code : marker.stats().disabled}`)
      }
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  return rows
}

module.exports = { logCount }
