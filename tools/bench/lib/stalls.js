'use strict'

/**
 * Where a step's slow requests came from, as the server saw it: each process's event-loop delay
 * (`beacon_event_loop_delay_seconds{process}`, api/metrics/event-loop.js), the GC pauses
 * (`beacon_nodejs_gc_duration_seconds{kind}`, summed over the processes) and the waits for HBase,
 * read from the admin /metrics before and after the step and diffed, beside the generator's own
 * count of slow answers (open-loop.js `slow`) and its own event-loop delay (load-worker.js).
 */

// Histogram families and the label each is kept by.
const HISTOGRAMS = {
  beacon_event_loop_delay_seconds: ['loop', 'process'],
  beacon_nodejs_gc_duration_seconds: ['gc', 'kind'],
  beacon_hbase_rpc_duration_seconds: ['rpc', 'method']
}
const HELD = 'beacon_event_loop_held_seconds_total'
const LOOKUPS = 'beacon_config_lookups_total'
// Config lookups that waited for HBase (a miss, or a request joined to a miss in flight).
const WAITED = ['miss', 'coalesced']
const SAMPLE = /^(\w+?)(_bucket|_sum|_count|)\{([^}]*)\} (\S+)$/gm
const LABEL = /(\w+)="([^"]*)"/g
const THRESHOLDS_MS = [5, 10, 50]

/**
 * @typedef {{ buckets: Map<number, number>, sum: number, count: number }} Histogram cumulative
 *   counts by upper bound in seconds (Infinity for +Inf)
 * @typedef {{ loop: Record<string, Histogram>, gc: Record<string, Histogram>, rpc: Record<string, Histogram>,
 *   held: Record<string, { busy: number, waiting: number }>, waited: number, lookups: Record<string, number> }} Snapshot
 *   loop: by process tag; gc: by kind; rpc: HBase RPC latency by method; held: the hold-ups'
 *   seconds by process tag and part; waited: config lookups that waited for HBase, all endpoints;
 *   lookups: every config lookup by "<endpoint> <outcome>"
 */

/**
 * The stall histograms and counters of one /metrics text.
 * @param {string} text
 * @returns {Snapshot}
 */
function parseStalls (text) {
  /** @type {Snapshot} */
  const out = { loop: {}, gc: {}, rpc: {}, held: {}, waited: 0, lookups: {} }
  for (const [, name, suffix, labelText, value] of text.matchAll(SAMPLE)) {
    const part = suffix.slice(1)
    if (!part && name !== HELD && name !== LOOKUPS) continue
    if (part && !HISTOGRAMS[name]) continue
    const labels = Object.fromEntries([...labelText.matchAll(LABEL)].map(([, k, v]) => [k, v]))
    const n = Number(value)
    if (name === HELD) {
      if (labels.part === 'busy' || labels.part === 'waiting') (out.held[labels.process] ??= { busy: 0, waiting: 0 })[labels.part] = n
    } else if (name === LOOKUPS) {
      if (WAITED.includes(labels.outcome)) out.waited += n
      out.lookups[`${labels.endpoint} ${labels.outcome}`] = n
    } else {
      const [group, by] = HISTOGRAMS[name]
      const h = (out[group][labels[by]] ??= { buckets: new Map(), sum: 0, count: 0 })
      if (part === 'bucket') h.buckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), n)
      else h[part] = n
    }
  }
  return out
}

/**
 * The server's stall histograms now.
 * @param {string} metricsUrl the admin port's /metrics
 * @returns {Promise<Snapshot>}
 */
async function scrapeStalls (metricsUrl) {
  const res = await fetch(metricsUrl)
  if (!res.ok) throw new Error(`stalls: ${metricsUrl} answered ${res.status}`)
  return parseStalls(await res.text())
}

/**
 * One histogram's window: what it recorded between two snapshots.
 * @param {Histogram} after
 * @param {Histogram} [before]
 */
function windowOf (after, before) {
  const buckets = [...after.buckets].sort((a, b) => a[0] - b[0]).map(([le, n]) => [le, n - (before?.buckets.get(le) || 0)])
  const count = after.count - (before?.count || 0)
  const over = Object.fromEntries(THRESHOLDS_MS.map((ms) => {
    const within = buckets.find(([le]) => le >= ms / 1000)
    return [ms, within ? count - within[1] : 0]
  }))
  // The smallest bound holding every sample: the longest one lies at or under it (past the last
  // finite bound, only that it was longer).
  const top = count > 0 ? buckets.find(([, n]) => n === count) : undefined
  const beyond = top !== undefined && top[0] === Infinity
  const lastFinite = buckets.filter(([le]) => le !== Infinity).pop()
  return {
    count,
    ms: round((after.sum - (before?.sum || 0)) * 1000, 1),
    over,
    longestUpToMs: top === undefined || beyond ? null : round(top[0] * 1000, 1),
    ...(beyond && lastFinite ? { longestOverMs: round(lastFinite[0] * 1000, 1) } : {})
  }
}

/**
 * What happened between two snapshots: per process, the delay samples, how many were over 5,
 * 10 and 50 ms, the bucket bound of the longest and the hold-ups' busy and waiting ms; the GC
 * pauses, per kind and in all; the config lookups that waited for HBase and the HBase RPCs by
 * method (a request that waited for one of those over 50 ms was slow without any stall).
 * @param {Snapshot} before
 * @param {Snapshot} after
 */
function stallsDelta (before, after) {
  const loop = {}
  for (const [tag, h] of Object.entries(after.loop)) {
    const w = windowOf(h, before.loop[tag])
    if (w.count === 0) continue
    const heldNow = after.held?.[tag]
    const heldThen = before.held?.[tag] || { busy: 0, waiting: 0 }
    const ms = (part) => round((heldNow[part] - heldThen[part]) * 1000, 1)
    loop[tag] = heldNow ? { ...w, heldMs: { busy: ms('busy'), waiting: ms('waiting') } } : w
  }
  const windows = (group) => {
    const out = {}
    for (const [key, h] of Object.entries(after[group] || {})) {
      const w = windowOf(h, before[group]?.[key])
      if (w.count > 0) out[key] = w
    }
    return out
  }
  const gcKinds = windows('gc')
  const kinds = Object.values(gcKinds)
  const longest = kinds.map((k) => k.longestUpToMs).filter((v) => v !== null)
  const beyond = kinds.map((k) => k.longestOverMs).filter((v) => v !== undefined)
  return {
    loop,
    gc: {
      count: kinds.reduce((n, k) => n + k.count, 0),
      ms: round(kinds.reduce((n, k) => n + k.ms, 0), 1),
      over: Object.fromEntries(THRESHOLDS_MS.map((ms) => [ms, kinds.reduce((n, k) => n + k.over[ms], 0)])),
      longestUpToMs: beyond.length || !longest.length ? null : Math.max(...longest),
      ...(beyond.length ? { longestOverMs: Math.max(...beyond) } : {}),
      kinds: gcKinds
    },
    hbase: {
      waited: (after.waited || 0) - (before.waited || 0),
      lookups: lookupsDelta(before.lookups || {}, after.lookups || {}),
      rpcs: windows('rpc')
    }
  }
}

/**
 * The config lookups made between two snapshots, by "<endpoint> <outcome>" (none: left out).
 * @param {Record<string, number>} before
 * @param {Record<string, number>} after
 * @returns {Record<string, number>}
 */
function lookupsDelta (before, after) {
  /** @type {Record<string, number>} */
  const out = {}
  for (const [key, n] of Object.entries(after)) if (n > (before[key] || 0)) out[key] = n - (before[key] || 0)
  return out
}

/**
 * A markdown table: per step, the generator's slow answers beside where a request could have
 * waited: the generator's own event loop, each server process's, the GC pauses, HBase.
 * @param {Record<string, { slow?: { overMs: number, count: number, afterSend: number, firstOnConnection?: number },
 *   p99?: number, max?: number, fromSend?: { p99: number, max: number },
 *   generatorLoop?: ReturnType<typeof windowOf>|null, stalls?: ReturnType<typeof stallsDelta>|null }>} rows
 *   case name → step
 * @returns {string[]}
 */
function stallsTable (rows) {
  const longest = (w) => {
    if (w.longestOverMs !== undefined) return `> ${w.longestOverMs}`
    return w.longestUpToMs === null ? '' : `≤ ${w.longestUpToMs}`
  }
  const heldOf = (w) => (w.heldMs && w.over[10] > 0 ? ` (busy ${w.heldMs.busy} / waiting ${w.heldMs.waiting} ms)` : '')
  const loopOf = (w) => `${w.over[10]} / ${w.over[50]}, ${longest(w)}${heldOf(w)}`
  const lines = [
    '| case | p99 / max ms | from send: p99 / max ms | answers > 50 ms (after send / first on a connection) | generator loop | ' +
      'server loops | GC pauses | waited for HBase |',
    '|---|---:|---:|---:|---|---|---|---|'
  ]
  for (const [name, r] of Object.entries(rows)) {
    const s = r.stalls
    const slow = r.slow ? `${r.slow.count} (${r.slow.afterSend} / ${r.slow.firstOnConnection ?? ''})` : ''
    const generator = r.generatorLoop ? loopOf(r.generatorLoop) : ''
    const loop = s ? Object.entries(s.loop).map(([tag, w]) => `${tag}: ${loopOf(w)}`).join('; ') : 'not read'
    const gc = s ? `${s.gc.count}, ${s.gc.ms} ms, ${s.gc.over[5]} / ${s.gc.over[50]}, ${longest(s.gc)}` : ''
    const rpcs = s ? Object.entries(s.hbase.rpcs).map(([method, w]) => `${method} ${w.count} (${w.over[10]} / ${w.over[50]})`) : []
    const hbase = s ? [`${s.hbase.waited} lookups`, ...rpcs].join('; ') : ''
    const fromSend = r.fromSend ? `${r.fromSend.p99} / ${r.fromSend.max}` : ''
    lines.push(`| ${name} | ${r.p99 ?? ''} / ${r.max ?? ''} | ${fromSend} | ${slow} | ${generator} | ${loop} | ${gc} | ${hbase} |`)
  }
  return lines
}

/** How the columns of stallsTable read, for the report. */
const STALLS_LEGEND = 'Latency from the due time (as in the table below), then from the send (the server\'s and the ' +
  'network\'s part, without the generator\'s own lateness on a shared core). Answers over 50 ms as the ' +
  'generator timed them (from the due time); in brackets, those over 50 ms from their send (the rest ' +
  'waited in the generator: its own loop, or behind a slow answer on their connection) and those that ' +
  'were the first on their connection (its connect and the server\'s accept included). Then where a ' +
  'request could have waited over the same step. Loops (the generator\'s, and each server process\'s: w1, ' +
  'w2, rollup): samples of a timer due every 10 ms that ran over 10 / over 50 ms late, the bucket bound ' +
  'of the longest, and for the hold-ups over 10 ms how much of them the process was busy (its own work ' +
  'or GC) or waiting (the machine ran other processes). GC: pauses of all server processes, total, over ' +
  '5 / over 50 ms, the longest. HBase: config lookups that waited for it (misses and the requests ' +
  'joined to them), then RPCs by method (over 10 / over 50 ms; Multi holds access-log batches too).'

function round (n, digits) {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

module.exports = { parseStalls, scrapeStalls, stallsDelta, stallsTable, STALLS_LEGEND }
