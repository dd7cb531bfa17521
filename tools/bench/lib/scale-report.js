'use strict'

/**
 * The scale bench's arithmetic and report (tools/bench/scale.js measures, this computes): the server
 * counters of a config case, the per-row figures of the log part, and the markdown. Pure: no
 * HBase, no clock.
 */

const { parseTraffic } = require('./hbase-traffic')
const { lruHitRatio, ttlHitRatio, distinctIds } = require('./zipf')

const LOOKUP_SAMPLE = /^beacon_config_lookups_total\{([^}]*)\} (\S+)$/gm
const LABEL = /(\w+)="([^"]*)"/g

/**
 * The config cache's outcomes per endpoint in one /metrics text (every worker summed by the primary).
 * @param {string} text
 * @returns {Record<string, Record<string, number>>} endpoint -> outcome -> count
 */
function parseLookups (text) {
  /** @type {Record<string, Record<string, number>>} */
  const out = {}
  for (const [, labels, value] of text.matchAll(LOOKUP_SAMPLE)) {
    const l = Object.fromEntries([...labels.matchAll(LABEL)].map(([, k, v]) => [k, v]))
    if (!l.endpoint || !l.outcome) continue
    const e = (out[l.endpoint] ??= {})
    e[l.outcome] = (e[l.outcome] || 0) + Number(value)
  }
  return out
}

/**
 * @param {Record<string, number>} before
 * @param {Record<string, number>} after
 * @returns {Record<string, number>} after - before per key
 */
function delta (before = {}, after = {}) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] || 0)]))
}

/**
 * One measured config case.
 * @param {{ lru: number, endpoint: string, dist: string, before: string, after: string,
 *   run: Record<string, any>, sampled: Record<string, any>, rssMiB: number[] }} m /metrics before and after
 *   the window, the generator's summary, the sampler's roles (app, hbase), each server process's RSS after it
 */
function configCase ({ lru, endpoint, dist, before, after, run, sampled, rssMiB }) {
  const seconds = run.durationMs / 1000
  const sum = (o) => Object.entries(o || {}).reduce((n, [k, v]) => (k === 'refresh_error' ? n : n + v), 0)
  const outcomes = delta(parseLookups(before)[endpoint], parseLookups(after)[endpoint])
  const lookups = sum(outcomes)
  const of = (k) => outcomes[k] || 0
  const config = (t) => (t.kinds.config ? t.kinds.config.rpcs : 0)
  const rpcs = config(parseTraffic(after)) - config(parseTraffic(before))
  const perReq = (us) => (us == null || !(run.requests > 0) ? null : us / run.requests)
  return {
    lru,
    endpoint,
    dist,
    seconds,
    offeredRate: run.offeredRate,
    rps: run.rps,
    requests: run.requests,
    errors: run.errors,
    non2xx: run.non2xx,
    late: run.late,
    p50: run.p50,
    p99: run.p99,
    max: run.max,
    lookups,
    // every lookup of the endpoint since the server started: what the LRU can have seen
    lookupsSinceStart: sum(parseLookups(after)[endpoint]),
    outcomes,
    // fresh hits: answered from memory with no read; stale ones are answered from memory too,
    // but each starts a refresh read
    hitRatio: lookups > 0 ? of('hit') / lookups : null,
    fromMemoryRatio: lookups > 0 ? (of('hit') + of('stale') + of('negative_hit')) / lookups : null,
    storeReadsPerSec: (of('miss') + of('stale')) / seconds,
    configRpcsPerSec: rpcs / seconds,
    appCpuUsPerReq: perReq(sampled.app && sampled.app.cpuUs),
    hbaseCpuUsPerReq: perReq(sampled.hbase && sampled.hbase.cpuUs),
    appPeakRssMiB: sampled.app ? sampled.app.peakRssMiB : null,
    rssMiB
  }
}

/**
 * @param {number} n
 * @param {number} seconds
 * @returns {number|null}
 */
function rate (n, seconds) {
  return seconds > 0 ? n / seconds : null
}

/**
 * @param {number|null|undefined} us
 * @param {number} n
 * @returns {number|null}
 */
function per (us, n) {
  return us == null || !(n > 0) ? null : us / n
}

/**
 * The log part's per-row figures.
 * @param {Record<string, any>} m ./scale-log.js's measurements
 */
function logSummary (m) {
  const rows = m.rows
  const r = m.roller
  return {
    rows,
    bytesPerRowFlushed: m.afterFlush.bytes / rows,
    bytesPerRowCompacted: m.afterCompaction ? m.afterCompaction.bytes / rows : null,
    rollupBytesPerRow: m.rollupBytes.bytes / rows,
    walBytesPerRow: m.write.walBytes / rows,
    writeRowsPerSec: rate(rows, m.write.seconds),
    writeHBaseUsPerRow: per(m.write.hbaseCpuUs, rows),
    writerUsPerRow: per(m.write.selfCpuUs, rows),
    compactionSeconds: m.compaction ? m.compaction.seconds : null,
    compactionHBaseUsPerRow: m.compaction ? per(m.compaction.hbaseCpuUs, rows) : null,
    rollerSeconds: r.wallSeconds,
    rollerRowsPerSec: rate(r.rowsCounted, r.wallSeconds),
    rollerCpuUsPerRow: per(r.cpuUs, r.rowsCounted),
    rollerCores: r.cpuUs == null ? null : r.cpuUs / 1e6 / r.wallSeconds,
    rollerPeakRssMiB: r.peakRssMiB,
    rollerHBaseUsPerRow: per(r.hbaseCpuUs, r.rowsCounted),
    countRollupsMs: m.countFromRollups.seconds * 1000,
    countRawSeconds: m.countFromRaw.seconds,
    countRawRowsPerSec: rate(rows, m.countFromRaw.seconds),
    scanRowsPerSec: rate(m.scan.rows, m.scan.seconds),
    eraseSeconds: m.erase.seconds
  }
}

/**
 * @param {number|null|undefined} n
 * @param {number} [digits]
 * @returns {string}
 */
function fmt (n, digits = 0) {
  if (n == null || !Number.isFinite(n)) return '–'
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/**
 * What each case's cache could hit at best, two ways: its size alone (an LRU with no TTL, Che's
 * approximation) and its TTL alone (no size limit, at one worker's share of the rate), with the
 * ids a worker sees within the TTL and the stale window (what the LRU must hold for the TTL to
 * be the only limit).
 * @param {Array<{ lru: number, dist: string, rps: number }>} cases
 * @param {{ ids: number, s: number, workers: number, ttlS: number, staleS: number }} p
 * @returns {Map<string, { lru: number, ttl: number, workingSet: number }>} `${lru}/${dist}/${rps}` -> model
 */
function modelRatios (cases, { ids, s, workers, ttlS, staleS }) {
  const out = new Map()
  for (const c of cases) {
    const key = `${c.lru}/${c.dist}/${c.rps}`
    if (out.has(key)) continue
    const dist = /** @type {'uniform'|'zipf'} */ (c.dist)
    const rate = c.rps / workers
    out.set(key, {
      lru: lruHitRatio({ n: ids, c: c.lru, dist, s }),
      ttl: ttlHitRatio({ n: ids, dist, s, rate, ttlS }),
      workingSet: distinctIds({ n: ids, dist, s, rate, seconds: ttlS + staleS })
    })
  }
  return out
}

/**
 * @param {Record<string, any>} m the log part
 * @returns {string[]}
 */
function logMarkdown (m) {
  const s = logSummary(m)
  const r = m.roller
  const rssRange = r.rssMiB.length ? `${Math.min(...r.rssMiB)}–${Math.max(...r.rssMiB)} MiB` : '–'
  return [
    '## Log part',
    '',
    `${fmt(m.rows)} access-log entries (${m.stoppedEarly ? `**stopped at the write budget**, of ${fmt(m.requestedRows)} asked; ` : ''}` +
      `ids 1..${fmt(m.logIds)}) spread over ${m.day} (UTC), written through the HBase sink with its rollup marker ` +
      `(batches of ${m.batchSize ?? 500}) into \`${m.table ?? 'beacon_access_log'}\`, made as \`hbase:up\` makes the access log ` +
      '(GZ, 16 buckets, 8 regions, TTL 90 days).',
    '',
    '| step | figure |',
    '|---|---:|',
    `| write: rows/s (sink → HBase acknowledged) | ${fmt(s.writeRowsPerSec)} |`,
    `| write: HBase CPU µs/row; writer (node) CPU µs/row | ${fmt(s.writeHBaseUsPerRow, 1)}; ${fmt(s.writerUsPerRow, 1)} |`,
    `| WAL written meanwhile, bytes/row | ${fmt(s.walBytesPerRow, 1)} |`,
    `| **bytes/row on disk** after the flush (HFiles of \`l\`) | **${fmt(s.bytesPerRowFlushed, 1)}** |`,
    `| **bytes/row on disk** after a major compaction | **${fmt(s.bytesPerRowCompacted, 1)}** |`,
    `| major compaction: s; HBase CPU µs/row | ${fmt(s.compactionSeconds, 1)}; ${fmt(s.compactionHBaseUsPerRow, 1)} |`,
    `| rollup table, bytes per log row (its HFiles, after the job) | ${fmt(s.rollupBytesPerRow, 2)} |`,
    `| rollup job catching up: minutes; rows; wall s | ${fmt(r.minutesRolled)}; ${fmt(r.rowsCounted)}; ${fmt(r.wallSeconds, 1)} |`,
    `| rollup job: rows/s; CPU µs/row; cores busy on average; peak RSS MiB | ${fmt(s.rollerRowsPerSec)}; ` +
      `${fmt(s.rollerCpuUsPerRow, 2)}; ${fmt(s.rollerCores, 2)}; ${fmt(s.rollerPeakRssMiB)} |`,
    `| rollup job: HBase CPU µs/row meanwhile | ${fmt(s.rollerHBaseUsPerRow, 1)} |`,
    `| \`log count\` of the day from the rollups: ms (minutes from rollups / scanned) | ${fmt(s.countRollupsMs)} ` +
      `(${fmt(m.countFromRollups.rollupMinutes)} / ${fmt(m.countFromRollups.scannedMinutes)}) |`,
    `| \`log count --scan\` of the day from the raw rows: s; rows/s | ${fmt(s.countRawSeconds, 1)}; ${fmt(s.countRawRowsPerSec)} |`,
    `| \`log scan\` of the first ${fmt(m.scan.minutes)} minutes: rows; rows/s | ${fmt(m.scan.rows)}; ${fmt(s.scanRowsPerSec)} |`,
    `| \`log erase\` of id ${m.erase.id} over the day: rows deleted; minutes recounted; s | ${fmt(m.erase.deleted)}; ` +
      `${fmt(m.erase.minutes)}; ${fmt(s.eraseSeconds, 1)} |`,
    '',
    `Counts: ${fmt(m.countFromRollups.total)} from the rollups, ${fmt(m.countFromRaw.total)} from the raw rows ` +
      `(${fmt(m.rows)} written); after the erase the day counts ${fmt(m.erase.dayAfter)} and id ${m.erase.id} ` +
      `${fmt(m.erase.idRowsAfter)}. The rollup job ran as the server's rollup process runs it (a run of at most ` +
      `${fmt(m.rollerMinutesPerRun ?? 30)} minutes, then ${fmt((m.rollerIntervalMs ?? 5000) / 1000, 1)} s, then the next), ` +
      `in a process of its own; its RSS every second: ${rssRange}.`,
    ''
  ]
}

/**
 * @param {Record<string, any>} part the config part
 * @param {number} s the Zipf exponent
 * @returns {string[]}
 */
function configMarkdown (part, s) {
  const short = part.requestedIds > part.ids
    ? ` (**${fmt(part.requestedIds)} asked: the seed budget ran out**; the load draws over the ids seeded)`
    : ''
  const p = { ids: part.ids, s, workers: part.workers || 2, ttlS: part.ttlS || 30, staleS: part.staleS || 300 }
  const model = modelRatios(part.cases, p)
  const m = (c) => model.get(`${c.lru}/${c.dist}/${c.rps}`)
  const rows = part.cases.map((c) => `| ${fmt(c.lru)} | ${c.endpoint} | ${c.dist} | ${fmt(c.rps)} | ${fmt(c.hitRatio, 4)} | ` +
    `${fmt(m(c).lru, 4)} | ${fmt(m(c).ttl, 4)} | ${fmt(m(c).workingSet)} | ${fmt(c.fromMemoryRatio, 4)} | ${fmt(c.storeReadsPerSec)} | ` +
    `${fmt(c.configRpcsPerSec)} | ${fmt(c.lookupsSinceStart)} | ${fmt(c.p50, 2)} | ${fmt(c.p99, 2)} | ${c.rssMiB.join(' + ')} | ` +
    `${(c.rssAtStartMiB || []).join(' + ')} | ${fmt(c.appCpuUsPerReq)} | ${fmt(c.hbaseCpuUsPerReq)} | ${fmt(c.errors + c.non2xx)} | ` +
    `${fmt(c.loadAverage, 1)} |`)
  return [
    '## Config part',
    '',
    `${fmt(part.ids)} ids seeded in \`beacon_config\` (Multi puts of 2,000 rows, 4 in flight, in the store's format) in ` +
      `${fmt(part.seeded.seconds, 0)} s, ${fmt(part.seeded.rows / part.seeded.seconds)} rows/s${short}.`,
    '',
    '| LRU entries | endpoint | ids | req/s | hit ratio | model: size only | model: TTL only | ids a worker sees in TTL + stale | ' +
      'from memory | store reads/s | config RPCs/s | ' +
      'lookups since start | p50 ms | p99 ms | RSS MiB after (primary + workers) | RSS MiB at start | app CPU µs/req | ' +
      'HBase CPU µs/req | failed | load avg |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    '- **hit ratio**: lookups answered fresh from the worker\'s LRU (`beacon_config_lookups_total{outcome="hit"}` over every ' +
      'outcome, all workers); **from memory** adds stale answers (served at once while a refresh reads HBase) and cached absences; ' +
      '**store reads/s**: misses plus stale refreshes, ids read from HBase per second; **config RPCs/s**: the multi-gets that ' +
      'carried them (`beacon_hbase_rpcs_total{kind="config"}`).',
    '- **model: size only**: Che\'s approximation for an LRU of that size under independent draws and no TTL; **model: TTL ' +
      'only**: no size limit, an entry fresh for the TTL (30 s) after each read, at one worker\'s share of the rate (an id ' +
      'asked λ times a second hits λ·30 / (1 + λ·30) of its lookups); the cache hits at most the lower of the two. **ids a ' +
      'worker sees in TTL + stale**: distinct ids among one worker\'s lookups of 330 s (30 s fresh + 300 s served stale), ' +
      'what its LRU must hold for the TTL alone to decide; a bigger LRU adds nothing. A cache starts empty: it holds at most ' +
      'the ids asked for since the server started (**lookups since start**, all workers).',
    '- **p50/p99** from each request\'s due time (open loop); **RSS** per process of the server cluster after the window ' +
      '(each worker has its own LRU per endpoint); **load avg**: the machine\'s 1-minute load average after the window ' +
      '(2 cores: above 2, processes waited for a core, and the latencies with them).',
    '',
    ...(part.fullCache ? fullCacheMarkdown(part.fullCache) : [])
  ]
}

/**
 * @param {Array<{ entries: number, size: number, heapMiB: number, rssMiB: number, bytesPerEntry: number }>} sizes
 * @returns {string[]}
 */
function fullCacheMarkdown (sizes) {
  return [
    'A full cache (./cache-memory.js: the data plane\'s LRU filled with that many entries as the HBase source builds them, ' +
      'in a process of its own, after a full GC), per endpoint and per worker:',
    '',
    '| LRU entries | heap MiB | RSS MiB | heap bytes per entry |',
    '|---:|---:|---:|---:|',
    ...sizes.map((c) => `| ${fmt(c.entries)} | ${fmt(c.heapMiB)} | ${fmt(c.rssMiB)} | ${fmt(c.bytesPerEntry)} |`),
    ''
  ]
}

/**
 * What failed or did not check out, first: a part that failed, a case, a count.
 * @param {Record<string, any>} report
 * @returns {string[]}
 */
function problemsMarkdown (report) {
  const all = [
    ...(report.failures || []).map((f) => f.split('\n')[0]),
    ...((report.log && report.log.problems) || []).map((p) => `log part: ${p}`),
    ...((report.config && report.config.problems) || []).map((p) => `config part: ${p}`)
  ]
  return all.length ? ['## Problems', '', ...all.map((p) => `- ${p}`), ''] : []
}

/**
 * @param {Record<string, any>} report
 * @returns {string}
 */
function markdown (report) {
  const p = report.parameters
  return [
    `# Scale — ${report.date}`,
    '',
    `\`${p.command}\` on HBase ${p.hbaseVersion} standalone (JVM profile \`${p.jvm}\`, heap ${p.heap}) of its own, ` +
      `${report.machine.cores} cores (${report.machine.cpuModel}), node ${report.machine.node}; ` +
      `wall time ${fmt(report.seconds / 60, 1)} min; 1-minute load average ` +
      `${report.loadAverage ? report.loadAverage.join(' → ') : '–'} ` +
      `(start → end; on ${report.machine.cores} cores, more means processes waited for one).`,
    '',
    ...problemsMarkdown(report),
    ...(report.log ? logMarkdown(report.log) : []),
    ...(report.config ? configMarkdown(report.config, p.s) : [])
  ].join('\n')
}

module.exports = { parseLookups, configCase, logSummary, modelRatios, markdown, fmt }
