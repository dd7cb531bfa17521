'use strict'

/**
 * What the server cluster sent to HBase during a run, by kind, from the counters of its admin
 * /metrics (api/metrics/hbase-traffic.js; the primary sums the workers): scraped before and
 * after each run of the cpu scenario, then per request and per second beside the CPU, so a
 * change to the access log's batching shows in frames and bytes as well as in µs.
 */

const { round, fmt } = require('./report')

const KIND_SAMPLE = /^beacon_hbase_(rpcs|request_bytes)_total\{kind="([^"]*)"(?:,method="(\w+)")?\} (\S+)$/gm
const SOCKET_SAMPLE = /^beacon_hbase_socket_writes_total\{[^}]*\} (\S+)$/gm
const WRITTEN_SAMPLE = /^beacon_access_log_entries_total\{sink="[^"]*",state="written"\} (\S+)$/gm
const ROLLUP_ROWS_SAMPLE = /^beacon_access_rollup_rows_total\{sink="[^"]*"\} (\S+)$/gm
const ROLLUP_CPU_SAMPLE = /^beacon_cluster_process_cpu_seconds_total\{process="rollup"\} (\S+)$/gm

/**
 * @typedef {{ rpcs: number, methods: Record<string, number>, requestBytes: number }} KindCounts
 * @typedef {{ kinds: Record<string, KindCounts>, socketWrites: number, logWritten: number,
 *   rollupRows: number, rollupCpuSeconds: number }} Counts
 *   logWritten: access-log entries the HBase sinks wrote; rollupRows: raw rows the rollup job
 *   counted; rollupCpuSeconds: the CPU time of the rollup job's process
 */

/**
 * The HBase traffic counters of one /metrics text.
 * @param {string} text
 * @returns {Counts}
 */
function parseTraffic (text) {
  /** @type {Counts} */
  const out = { kinds: {}, socketWrites: 0, logWritten: 0, rollupRows: 0, rollupCpuSeconds: 0 }
  for (const [, what, kind, method, value] of text.matchAll(KIND_SAMPLE)) {
    const k = (out.kinds[kind] ??= { rpcs: 0, methods: {}, requestBytes: 0 })
    const n = Number(value)
    if (what === 'rpcs') {
      k.rpcs += n
      k.methods[method] = (k.methods[method] || 0) + n
    } else {
      k.requestBytes += n
    }
  }
  for (const [, value] of text.matchAll(SOCKET_SAMPLE)) out.socketWrites += Number(value)
  for (const [, value] of text.matchAll(WRITTEN_SAMPLE)) out.logWritten += Number(value)
  for (const [, value] of text.matchAll(ROLLUP_ROWS_SAMPLE)) out.rollupRows += Number(value)
  for (const [, value] of text.matchAll(ROLLUP_CPU_SAMPLE)) out.rollupCpuSeconds += Number(value)
  return out
}

/**
 * The server's counters now.
 * @param {string} metricsUrl the admin port's /metrics
 * @returns {Promise<Counts>}
 */
async function scrapeTraffic (metricsUrl) {
  const res = await fetch(metricsUrl)
  if (!res.ok) throw new Error(`hbase traffic: ${metricsUrl} answered ${res.status}`)
  return parseTraffic(await res.text())
}

/**
 * What happened between two scrapes (kinds that did nothing are left out).
 * @param {Counts} before
 * @param {Counts} after
 * @returns {Counts}
 */
function trafficDelta (before, after) {
  /** @type {Counts} */
  const out = {
    kinds: {},
    socketWrites: after.socketWrites - before.socketWrites,
    logWritten: after.logWritten - before.logWritten,
    rollupRows: after.rollupRows - before.rollupRows,
    rollupCpuSeconds: after.rollupCpuSeconds - before.rollupCpuSeconds
  }
  for (const [kind, a] of Object.entries(after.kinds)) {
    const b = before.kinds[kind] || { rpcs: 0, methods: {}, requestBytes: 0 }
    if (a.rpcs === b.rpcs) continue
    /** @type {Record<string, number>} */
    const methods = {}
    for (const [m, n] of Object.entries(a.methods)) if (n > (b.methods[m] || 0)) methods[m] = n - (b.methods[m] || 0)
    out.kinds[kind] = { rpcs: a.rpcs - b.rpcs, methods, requestBytes: a.requestBytes - b.requestBytes }
  }
  return out
}

/**
 * One run's traffic per request.
 * @param {Counts} delta
 * @param {number} requests answered in the run
 * @returns {Record<string, any>|null} null when nothing was answered
 */
function trafficRun (delta, requests) {
  if (!(requests > 0)) return null
  const per = (n) => round(n / requests, 4)
  const kinds = {}
  let frames = 0
  for (const [kind, k] of Object.entries(delta.kinds)) {
    frames += k.rpcs
    kinds[kind] = { ...k, framesPerReq: per(k.rpcs), bytesPerFrame: k.rpcs ? round(k.requestBytes / k.rpcs, 0) : null }
  }
  return {
    kinds,
    frames,
    socketWrites: delta.socketWrites,
    framesPerReq: per(frames),
    socketWritesPerReq: per(delta.socketWrites),
    framesPerWrite: delta.socketWrites ? round(frames / delta.socketWrites, 2) : null,
    logWritten: delta.logWritten,
    // The access log's batch size as it went: entries written per Multi of the log's kind.
    entriesPerLogFrame: delta.kinds.log && delta.kinds.log.rpcs ? round(delta.logWritten / delta.kinds.log.rpcs, 1) : null
  }
}

/**
 * Median (min–max) over a case's runs of each traffic figure.
 * @param {Array<{ hbase?: Record<string, any>|null }>} runs
 * @param {(values: Array<number|null|undefined>, digits?: number) => any} stats cpu-report.js's
 * @returns {Record<string, any>|null}
 */
function summarizeTraffic (runs, stats) {
  const measured = runs.map((r) => r.hbase).filter(Boolean)
  if (!measured.length) return null
  const column = (read, digits = 4) => stats(measured.map(read), digits)
  const kinds = {}
  for (const kind of new Set(measured.flatMap((m) => Object.keys(m.kinds)))) {
    const of = (key) => (m) => (m.kinds[kind] ? m.kinds[kind][key] : 0)
    kinds[kind] = {
      methods: [...new Set(measured.flatMap((m) => Object.keys(m.kinds[kind] ? m.kinds[kind].methods : {})))].sort(),
      framesPerReq: column(of('framesPerReq')),
      bytesPerFrame: column((m) => (m.kinds[kind] ? m.kinds[kind].bytesPerFrame : null), 0)
    }
  }
  return {
    kinds,
    framesPerReq: column((m) => m.framesPerReq),
    socketWritesPerReq: column((m) => m.socketWritesPerReq),
    framesPerWrite: column((m) => m.framesPerWrite, 2),
    entriesPerLogFrame: column((m) => m.entriesPerLogFrame, 1)
  }
}

/**
 * The cpu scenario's HBase traffic tables, one per load shape: per case and kind the frames per
 * request and bytes per frame, beside the case's app CPU.
 * @param {Record<string, Record<string, any>>} cases summarized (summarizeCases), each with `hbase`
 * @param {(s: any) => string} spread cpu-report.js's "median (min–max)"
 * @param {number} rate the fixed rate's req/s
 * @returns {string[]} markdown lines (none when no case has traffic figures)
 */
function trafficTables (cases, spread, rate) {
  const rows = Object.entries(cases).filter(([, c]) => c.hbase)
  if (!rows.length) return []
  const lines = ['## HBase traffic per request', '',
    'From the server\'s own counters (`beacon_hbase_*_total` on the admin /metrics, every worker), scraped before and after each ' +
    'run: the RPCs of each kind (one request frame each), their bytes, and the buffers handed to the sockets (the RPCs of one ' +
    'tick share one, and the access log\'s those of one loop iteration). A kind\'s figures include whatever it did ' +
    'during the run whatever started it: the rollup job counts a minute\'s rows a minute after they were logged, so ' +
    'its reads land in whichever case runs then. Median (min–max) over the rounds.',
    '']
  const shapes = [['rate', `At ${fmt(rate)} req/s (open loop)`], ['saturation', 'At saturation (closed loop)']]
  for (const [shape, title] of shapes) {
    const ofShape = rows.filter(([, c]) => c.shape === shape)
    if (!ofShape.length) continue
    lines.push(`### ${title}`, '',
      '| case | app CPU µs/req | socket writes/req | frames/write | entries/log batch | kind (methods) | frames/req | bytes/frame |',
      '|---|---:|---:|---:|---:|---|---:|---:|')
    for (const [key, c] of ofShape) {
      const h = c.hbase
      const head = `| ${key} | ${spread(c.appUsPerReq)} | ${spread(h.socketWritesPerReq)} | ${spread(h.framesPerWrite)} ` +
        `| ${spread(h.entriesPerLogFrame)} `
      const kinds = Object.entries(h.kinds).sort(([, a], [, b]) => (b.framesPerReq?.median || 0) - (a.framesPerReq?.median || 0))
      if (!kinds.length) lines.push(`${head}| (none) | | |`)
      kinds.forEach(([kind, k], i) => {
        const first = i === 0 ? head : '| | | | | '
        lines.push(`${first}| ${kind} (${k.methods.join(', ')}) | ${spread(k.framesPerReq)} | ${spread(k.bytesPerFrame)} |`)
      })
    }
    lines.push('')
  }
  return lines
}

/**
 * The scenario's whole HBase traffic by kind, per access-log row written meanwhile: what the log,
 * its rollup marks and the rollup job cost per logged row, wherever their work fell.
 * @param {(Counts & { seconds: number })|undefined} total
 * @returns {string[]} markdown lines
 */
function totalLines (total) {
  if (!total) return []
  const rows = total.logWritten
  const per = (n, digits) => (rows > 0 ? String(round(n / rows, digits)) : '')
  const lines = ['### Over the whole scenario', '',
    `${total.seconds} s, warm-ups and cache sweeps included: ${fmt(rows)} access-log rows written, ${fmt(total.socketWrites)} socket ` +
      'writes. Per kind, and per logged row (the rollups\' and the log\'s work belongs to the logged requests, whenever it ran):', '',
    '| kind (methods) | frames | bytes sent | frames per logged row | bytes sent per logged row |',
    '|---|---:|---:|---:|---:|']
  const kinds = Object.entries(total.kinds).sort(([, a], [, b]) => b.rpcs - a.rpcs)
  for (const [kind, k] of kinds) {
    const methods = Object.keys(k.methods).sort().join(', ')
    lines.push(`| ${kind} (${methods}) | ${fmt(k.rpcs)} | ${fmt(k.requestBytes)} | ${per(k.rpcs, 4)} | ${per(k.requestBytes, 1)} |`)
  }
  lines.push('', ...rollupJobLines(total))
  return [...lines, '']
}

/**
 * The rollup job's CPU (its own process) per raw row it counted, and per access-log row written.
 * @param {Counts} total
 * @returns {string[]}
 */
function rollupJobLines (total) {
  if (!(total.rollupRows > 0)) return ['The rollup job counted no rows meanwhile.']
  const us = total.rollupCpuSeconds * 1e6
  const perLogged = total.logWritten > 0 ? `, ${round(us / total.logWritten, 2)} µs per access-log row written` : ''
  return [`The rollup job (its own process): ${round(total.rollupCpuSeconds, 3)} s of CPU for ${fmt(total.rollupRows)} raw rows ` +
    `counted, **${round(us / total.rollupRows, 2)} µs per row counted**${perLogged}.`]
}

module.exports = {
  parseTraffic, scrapeTraffic, trafficDelta, trafficRun, summarizeTraffic, trafficTables, totalLines, rollupJobLines
}
