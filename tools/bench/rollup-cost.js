#!/usr/bin/env node
'use strict'

/**
 * What the rollup job costs per logged row: CPU of this process (user + system) per raw row
 * counted, over full catch-ups of the roller (logging/rollup/roller.js) on a real HBase.
 *
 * Writes `--rows` realistic entries (tools/bench/lib/log-entries.js: user agents, referers, ~10%
 * events) spread over `--minutes` past minutes into a fresh access-log table, as the HBase sink
 * stores them (same row keys, one JSON cell), marks their minutes as the sink does, then
 * `--rounds` times: marks every minute again and lets one roller count them all (runOnce until
 * nothing is due). The CPU of each catch-up is read with process.cpuUsage(); the HBase JVM's is
 * not counted. Tables are dropped at the end.
 *
 * The client is built as the rollup process builds its own (api/rollup-job.js: cell blocks on);
 * `--cell-blocks false` measures it as the serving workers' client is (cells inline).
 *
 *   BEACON_HBASE_BOOTSTRAP=127.0.0.1:16020 node tools/bench/rollup-cost.js [--rows 60000] [--minutes 5] [--rounds 5]
 *     [--cell-blocks true|false] [--profile file.cpuprofile]
 *
 * Prints one line per round and a JSON summary (µs per row: min, median, max).
 */

const { parseArgs } = require('node:util')
const { createHBaseClient } = require('@beacon/hbase-client')
const { ACCESS_LOG_FAMILY, accessLogRowKey, accessLogSplitKeys } = require('../../logging/access-log-layout')
const { serializeEntry } = require('../../logging/access-entry')
const { ROLLUP_FAMILY, MINUTE_MS, minuteOf } = require('../../logging/rollup/layout')
const { createRollupMarker } = require('../../logging/rollup/marker')
const { createRoller } = require('../../logging/rollup/roller')
const { logEntries } = require('./lib/log-entries')

const BUCKETS = 16
const PUT_BATCH = 1000

async function main () {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '60000' },
      minutes: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '5' },
      profile: { type: 'string' },
      'cell-blocks': { type: 'string', default: 'true' }
    }
  })
  const rows = Number(values.rows)
  const minutes = Number(values.minutes)
  const rounds = Number(values.rounds)
  const bootstrap = (process.env.BEACON_HBASE_BOOTSTRAP || '127.0.0.1:16020').split(',')
  const client = createHBaseClient({ bootstrap, cellBlocks: values['cell-blocks'] === 'true' })
  const suffix = `${process.pid}_${Date.now().toString(36)}`
  const logTable = `bench_rollup_log_${suffix}`
  const rollupTable = `bench_rollup_${suffix}`
  try {
    await client.admin.createTable(logTable, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(BUCKETS, 8) })
    await client.admin.createTable(rollupTable, { families: [ROLLUP_FAMILY] })
    const first = minuteOf(Date.now()) - (minutes + 2) * MINUTE_MS
    const marker = createRollupMarker({ client, rollupTable, logTable, writerId: 'bench' })
    let batch = []
    let n = 0
    let bytes = 0
    const flush = async () => {
      const results = await client.multiPut(logTable, batch)
      const err = results.find(Boolean)
      if (err) throw err
      await marker.mark(batch.map((p) => p.row))
      batch = []
    }
    for (const entry of logEntries({ count: rows })) {
      entry.ts = first + Math.floor((n * minutes * MINUTE_MS) / rows)
      const value = serializeEntry(entry)
      bytes += Buffer.byteLength(value)
      batch.push({ row: accessLogRowKey(n % BUCKETS, entry.ts, `bench-${n}`), cells: { [ACCESS_LOG_FAMILY]: { e: value } } })
      n++
      if (batch.length >= PUT_BATCH) await flush()
    }
    if (batch.length) await flush()
    console.log(`wrote ${rows} rows over ${minutes} minutes (value ${(bytes / rows).toFixed(0)} bytes on average)`)
    const perRow = []
    const profiler = values.profile ? await startProfile() : null
    for (let round = 0; round < rounds; round++) {
      if (round > 0) {
        // Mark every minute again: the next catch-up counts them all.
        const keys = []
        for (let m = 0; m < minutes; m++) keys.push(accessLogRowKey(0, first + m * MINUTE_MS, 'x'))
        await marker.mark(keys)
      }
      const roller = createRoller({ client, logTable, rollupTable, buckets: BUCKETS, settleMs: 0, maxMinutesPerRun: minutes + 1 })
      const cpu = process.cpuUsage()
      const t0 = process.hrtime.bigint()
      for (let done = await roller.runOnce(); done > 0; done = await roller.runOnce());
      const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
      const used = process.cpuUsage(cpu)
      const { rowsCounted, lastError } = roller.stats()
      if (lastError) throw new Error(`roller failed: ${lastError}`)
      if (rowsCounted !== rows) throw new Error(`counted ${rowsCounted} rows, wrote ${rows}`)
      const us = (used.user + used.system) / rowsCounted
      perRow.push(us)
      console.log(`round ${round + 1}: ${rowsCounted} rows, CPU ${((used.user + used.system) / 1000).toFixed(0)} ms ` +
        `(user ${(used.user / 1000).toFixed(0)}, sys ${(used.system / 1000).toFixed(0)}), wall ${wallMs.toFixed(0)} ms, ` +
        `${us.toFixed(2)} µs/row, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`)
    }
    if (profiler) await profiler.stop(values.profile)
    const sorted = [...perRow].sort((a, b) => a - b)
    console.log(JSON.stringify({
      rows,
      minutes,
      rounds,
      usPerRow: { min: +sorted[0].toFixed(2), median: +sorted[Math.floor(sorted.length / 2)].toFixed(2), max: +sorted.at(-1).toFixed(2) }
    }))
    marker.close()
  } finally {
    await client.admin.deleteTable(logTable).catch(() => {})
    await client.admin.deleteTable(rollupTable).catch(() => {})
    await client.close()
  }
}

/** A CPU profile of the catch-ups only (node:inspector), written where --profile says. */
async function startProfile () {
  const inspector = require('node:inspector/promises')
  const fs = require('node:fs')
  const session = new inspector.Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return {
    async stop (file) {
      const { profile } = await session.post('Profiler.stop')
      fs.writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
    }
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
