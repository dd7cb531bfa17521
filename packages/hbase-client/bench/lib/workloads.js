'use strict'

/**
 * The workloads of packages/hbase-client/bench/run.js through beacon's native client (@beacon/hbase-client): sequential
 * and concurrent gets, coalesced multi-gets (as the config source reads), sequential puts and
 * access-log-shaped batched multi-puts. tools/dev-hbase/java/BeaconHBaseLoad.java sends the same ones
 * through HBase's Java client (tools/bench/lib/java-load.js).
 */

const { tables: { accessLogSplitKeys, bucketPrefix, DEFAULT_LOG_BUCKETS } } = require('../../../../index.js')
const { percentile } = require('../../../../tools/bench')

const CONFIG_TABLE = 'beacon_bench_config'
const CONFIG_FAMILY = 'c'
const LOG_TABLE = 'beacon_bench_log'
const LOG_FAMILY = 'l'

function summarize (latencies, elapsedMs) {
  latencies.sort((a, b) => a - b)
  return {
    ops: latencies.length,
    opsPerSec: Math.round((latencies.length / elapsedMs) * 1000),
    p50Ms: +percentile(latencies, 50).toFixed(3),
    p99Ms: +percentile(latencies, 99).toFixed(3),
    maxMs: +latencies[latencies.length - 1].toFixed(3)
  }
}

/**
 * @typedef {import('@beacon/hbase-client/lib/client').HBaseClient} Client
 * @typedef {{ label: string, ops: number, node: (client: Client) => Promise<Record<string, any>> }} Workload
 */

/**
 * The workloads sized by the bench's parameters.
 * @param {Record<string, number>} N rows, gets, puts, entries, concurrency, 'multi-get', batch, inflight
 * @returns {{ ensureTables: (client: Client) => Promise<void>, warmUp: (client: Client, seconds: number) => Promise<number>,
 *   workloads: Record<string, Workload> }}
 */
function createWorkloads (N) {
  const configRow = (i) => String(1 + (i % N.rows))

  async function ensureTables (client) {
    if (!(await client.admin.tableExists(CONFIG_TABLE))) await client.admin.createTable(CONFIG_TABLE, { families: [CONFIG_FAMILY] })
    if (!(await client.admin.tableExists(LOG_TABLE))) {
      await client.admin.createTable(LOG_TABLE, { families: [LOG_FAMILY], splits: accessLogSplitKeys() })
    }
    const puts = []
    for (let id = 1; id <= N.rows; id++) {
      puts.push({ row: String(id), cells: { [CONFIG_FAMILY]: { json: JSON.stringify({ id, features: { a: true, b: id % 2 === 0 } }) } } })
    }
    const failed = (await client.multiPut(CONFIG_TABLE, puts)).filter(Boolean)
    if (failed.length) throw failed[0]
  }

  async function sequentialGets (client, n) {
    const lat = new Array(n)
    const started = performance.now()
    for (let i = 0; i < n; i++) {
      const t = performance.now()
      const row = await client.get(CONFIG_TABLE, configRow(i))
      if (!row) throw new Error('seeded row missing')
      lat[i] = performance.now() - t
    }
    return summarize(lat, performance.now() - started)
  }

  async function concurrentGets (client, n, concurrency) {
    const lat = []
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++
        const t = performance.now()
        await client.get(CONFIG_TABLE, configRow(i))
        lat.push(performance.now() - t)
      }
    }))
    return summarize(lat, performance.now() - started)
  }

  // Config reads as the HBase config source makes them: the ids of one event-loop turn in one
  // multi-get, `concurrency / size` of them in flight.
  async function multiGets (client, n, size, concurrency) {
    const lat = []
    let next = 0
    let missing = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: Math.max(1, Math.floor(concurrency / size)) }, async () => {
      while (next < n) {
        const from = next
        const rows = Array.from({ length: Math.min(size, n - from) }, (_, j) => configRow(from + j))
        next += rows.length
        const t = performance.now()
        const results = await client.multiGet(CONFIG_TABLE, rows)
        lat.push(performance.now() - t)
        missing += results.filter((r) => !r || r instanceof Error).length
      }
    }))
    if (missing) throw new Error(`${missing} multi-get rows missing or failed`)
    return {
      ...summarize(lat, performance.now() - started),
      ops: n,
      opsPerSec: Math.round((n / (performance.now() - started)) * 1000),
      size
    }
  }

  async function sequentialPuts (client, n) {
    const lat = new Array(n)
    const started = performance.now()
    for (let i = 0; i < n; i++) {
      const t = performance.now()
      await client.put(CONFIG_TABLE, `put-${i % 1000}`, { [CONFIG_FAMILY]: { json: `{"i":${i}}` } })
      lat[i] = performance.now() - t
    }
    return summarize(lat, performance.now() - started)
  }

  // Access-log-shaped entries, batched as the HBase log sink batches them.
  async function batchedLogPuts (client, n, batch, inflight) {
    const entry = (i) =>
      JSON.stringify({
        ts: Date.now(),
        endpoint: 'sample5',
        id: String(1 + (i % 10000)),
        status: 200,
        ms: 0.31,
        ip: '127.0.0.1',
        ua: 'tools/bench/1.0',
        ref: 'http://example.test/page'
      })
    const batchLat = []
    let failed = 0
    let sent = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: inflight }, async (_, worker) => {
      while (sent < n) {
        const from = sent
        const size = Math.min(batch, n - from)
        sent += size
        const puts = new Array(size)
        for (let j = 0; j < size; j++) {
          const i = from + j
          const key = `${bucketPrefix(i % DEFAULT_LOG_BUCKETS)}${String(Date.now()).padStart(13, '0')}b${worker}-${i}`
          puts[j] = { row: key, cells: { [LOG_FAMILY]: { e: entry(i) } } }
        }
        const t = performance.now()
        const results = await client.multiPut(LOG_TABLE, puts)
        batchLat.push(performance.now() - t)
        failed += results.filter(Boolean).length
      }
    }))
    const elapsed = performance.now() - started
    batchLat.sort((a, b) => a - b)
    return {
      entries: n,
      batch,
      inflightBatches: inflight,
      entriesPerSec: Math.round((n / elapsed) * 1000),
      batchP50Ms: +percentile(batchLat, 50).toFixed(3),
      batchP99Ms: +percentile(batchLat, 99).toFixed(3),
      failed
    }
  }

  // Gets, multi-gets and log multi-puts in turn, so every path measured is compiled (JIT) on both
  // sides before the first round.
  async function warmUp (client, seconds) {
    const until = Date.now() + seconds * 1000
    let n = 0
    while (Date.now() < until) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => client.get(CONFIG_TABLE, configRow(n + j))))
      await multiGets(client, 200, N['multi-get'], N.concurrency)
      await batchedLogPuts(client, 2000, N.batch, N.inflight)
      n += 20
    }
    return n
  }

  /** @type {Record<string, Workload>} */
  const workloads = {
    sequentialGets: { label: 'sequential gets', ops: N.gets, node: (c) => sequentialGets(c, N.gets) },
    concurrentGets: {
      label: `${N.concurrency} concurrent gets`,
      ops: N.gets * 2,
      node: (c) => concurrentGets(c, N.gets * 2, N.concurrency)
    },
    multiGets: {
      label: `multi-gets of ${N['multi-get']} (${N.concurrency} rows in flight)`,
      ops: N.gets * 2,
      node: (c) => multiGets(c, N.gets * 2, N['multi-get'], N.concurrency)
    },
    sequentialPuts: { label: 'sequential puts', ops: N.puts, node: (c) => sequentialPuts(c, N.puts) },
    batchedLogPuts: {
      label: `access-log multi-puts (batch ${N.batch}, ${N.inflight} in flight)`,
      ops: N.entries,
      node: (c) => batchedLogPuts(c, N.entries, N.batch, N.inflight)
    }
  }
  return { ensureTables, warmUp, workloads }
}

module.exports = { CONFIG_TABLE, CONFIG_FAMILY, LOG_TABLE, LOG_FAMILY, DEFAULT_LOG_BUCKETS, createWorkloads }
