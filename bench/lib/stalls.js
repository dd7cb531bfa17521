'use strict'

/**
 * Where a step's slow requests came from, as the server saw it: each process's event-loop delay
 * (`beacon_event_loop_delay_seconds{process}`, api/event-loop-metrics.js) and the GC pauses
 * (`beacon_nodejs_gc_duration_seconds{kind}`, summed over the processes), read from the admin
 * /metrics before and after the step and diffed, beside the generator's own count of slow
 * answers (open-loop.js `slow`).
 */

const LOOP = 'beacon_event_loop_delay_seconds'
const GC = 'beacon_nodejs_gc_duration_seconds'
const SAMPLE = /^(\w+)_(bucket|sum|count)\{([^}]*)\} (\S+)$/gm
const LABEL = /(\w+)="([^"]*)"/g
const THRESHOLDS_MS = [5, 10, 50]

/**
 * @typedef {{ buckets: Map<number, number>, sum: number, count: number }} Histogram cumulative
 *   counts by upper bound in seconds (Infinity for +Inf)
 * @typedef {{ loop: Record<string, Histogram>, gc: Record<string, Histogram> }} Snapshot
 *   loop: by process tag; gc: by kind
 */

/**
 * The stall histograms of one /metrics text.
 * @param {string} text
 * @returns {Snapshot}
 */
function parseStalls (text) {
  /** @type {Snapshot} */
  const out = { loop: {}, gc: {} }
  for (const [, name, part, labelText, value] of text.matchAll(SAMPLE)) {
    if (name !== LOOP && name !== GC) continue
    const labels = Object.fromEntries([...labelText.matchAll(LABEL)].map(([, k, v]) => [k, v]))
    const key = name === LOOP ? labels.process : labels.kind
    const group = name === LOOP ? out.loop : out.gc
    const h = (group[key] ??= { buckets: new Map(), sum: 0, count: 0 })
    const n = Number(value)
    if (part === 'bucket') h.buckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), n)
    else h[part] = n
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
 * 10 and 50 ms and the bucket bound of the longest; the GC pauses, per kind and in all.
 * @param {Snapshot} before
 * @param {Snapshot} after
 */
function stallsDelta (before, after) {
  const loop = {}
  for (const [tag, h] of Object.entries(after.loop)) {
    const w = windowOf(h, before.loop[tag])
    if (w.count > 0) loop[tag] = w
  }
  const gcKinds = {}
  for (const [kind, h] of Object.entries(after.gc)) {
    const w = windowOf(h, before.gc[kind])
    if (w.count > 0) gcKinds[kind] = w
  }
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
    }
  }
}

/**
 * A markdown table: per step, the generator's slow answers beside each process's event-loop
 * hold-ups and the GC pauses.
 * @param {Record<string, { slow?: { overMs: number, count: number, afterSend: number }, max?: number,
 *   stalls?: ReturnType<typeof stallsDelta>|null }>} rows case name → step
 * @returns {string[]}
 */
function stallsTable (rows) {
  const longest = (w) => {
    if (w.longestOverMs !== undefined) return `> ${w.longestOverMs}`
    return w.longestUpToMs === null ? '' : `≤ ${w.longestUpToMs}`
  }
  const lines = [
    '| case | max ms | answers > 50 ms (slow after send) | event-loop delay per process: samples > 10 / > 50 ms, longest ms | ' +
      'GC pauses: count, total ms, > 5 / > 50 ms, longest ms |',
    '|---|---:|---:|---|---|'
  ]
  for (const [name, r] of Object.entries(rows)) {
    const s = r.stalls
    const slow = r.slow ? `${r.slow.count} (${r.slow.afterSend})` : ''
    const loop = s
      ? Object.entries(s.loop).map(([tag, w]) => `${tag}: ${w.over[10]} / ${w.over[50]}, ${longest(w)}`).join('; ')
      : 'not read'
    const gc = s ? `${s.gc.count}, ${s.gc.ms}, ${s.gc.over[5]} / ${s.gc.over[50]}, ${longest(s.gc)}` : ''
    lines.push(`| ${name} | ${r.max ?? ''} | ${slow} | ${loop} | ${gc} |`)
  }
  return lines
}

function round (n, digits) {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

module.exports = { parseStalls, scrapeStalls, stallsDelta, stallsTable }
