'use strict'

/**
 * Rounds of packages/hbase-client/bench/run.js → medians, ranges and paired differences, and the markdown
 * report. A run compares variants (cell blocks off/on, or the node/java client) or has one.
 */

const FIGURES = ['hbaseCpuUsPerOp', 'hbaseNetCpuUsPerOp', 'hbaseRpcCpuUsPerOp', 'clientCpuUsPerOp']

function median (values) {
  const s = values.filter((v) => v != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : +((s[s.length / 2 - 1] + s[s.length / 2]) / 2).toFixed(2)
}

function spread (values) {
  const v = values.filter((x) => x != null)
  return { median: median(v), min: v.length ? Math.min(...v) : null, max: v.length ? Math.max(...v) : null }
}

/**
 * 'onMinusOff', 'javaMinusNode': the key of the paired difference, second variant minus first.
 * @param {string[]} variants
 */
function diffKey ([a, b]) {
  return `${b}Minus${a[0].toUpperCase()}${a.slice(1)}`
}

/**
 * Per workload and variant: median and range over the rounds of each figure; with two variants,
 * the paired difference (second minus first within each round, so drift and load cancel out).
 * @param {Array<Record<string, any>>} rounds
 * @param {string[]} names workloads
 * @param {string[]} variants
 * @returns {Record<string, Record<string, any>>}
 */
function summarizeRounds (rounds, names, variants) {
  /** @type {Record<string, Record<string, any>>} */
  const out = {}
  for (const name of names) {
    out[name] = {}
    for (const v of variants) {
      const runs = rounds.map((r) => r[v][name])
      out[name][v] = Object.fromEntries([...FIGURES, 'opsPerSec', 'entriesPerSec'].map((key) => [key, spread(runs.map((x) => x[key]))]))
      const groups = new Set(runs.flatMap((x) => Object.keys(x.hbaseThreadsUsPerOp || {})))
      // A group absent from a round ran for less than 0.01 µs/op in it.
      out[name][v].hbaseThreadsUsPerOp = Object.fromEntries(
        [...groups].map((g) => [g, spread(runs.map((x) => (x.hbaseThreadsUsPerOp ? x.hbaseThreadsUsPerOp[g] || 0 : null)))])
      )
    }
    if (variants.length > 1) {
      const [a, b] = variants
      const diff = (key) => {
        const d = rounds
          .map((r) => (r[b][name][key] != null && r[a][name][key] != null ? +(r[b][name][key] - r[a][name][key]).toFixed(2) : null))
          .filter((x) => x != null)
        return { ...spread(d), lower: d.filter((x) => x < 0).length, of: d.length }
      }
      out[name][diffKey(variants)] = Object.fromEntries(FIGURES.map((key) => [key, diff(key)]))
    }
  }
  return out
}

const fmt = (s) => s.median == null ? '–' : `${s.median} (${s.min}–${s.max})`

/**
 * @param {Record<string, any>} report as packages/hbase-client/bench/run.js writes it (variants, axis, summary, rounds…)
 * @param {Record<string, string>} labels workload → label
 * @returns {string}
 */
function markdown (report, labels) {
  const { workloads: names, variants, axis, parameters: N } = report
  const [a, b] = variants
  const lines = [
    `# HBase client benchmark${variants.length > 1 ? `: ${axis.title}` : ''} — ${report.date}`,
    '',
    `Machine: ${report.machine.cores} cores, ${report.machine.cpuModel}, node ${report.machine.node}; ` +
      `HBase ${report.machine.hbaseVersion} standalone on ${report.bootstrap.join(', ')}` +
      ` (JVM pid ${report.hbasePid ?? 'unknown'}${N.ownHBase ? ', an instance of its own' : ''}).`,
    ...(axis.note ? [axis.note] : []),
    `Warm-up: ${N['warmup-seconds']} s of gets, multi-gets and log multi-puts per client before measuring; ${N.rounds} round(s)` +
      (variants.length > 1 ? `, ${variants.join(' then ')} in odd rounds and the other way round in even ones.` : '.'),
    'CPU per op: the HBase JVM\'s (utime+stime from /proc, to the µs from its threads\' schedstat), that of its RPC threads alone ' +
      '(RpcServer.* handlers and RS-EventLoopGroup netty loops: they decode, run and answer the calls; no compactions, flushes, GC or ' +
      `chores) and the client's (${axis.clientCpu}), divided by the ops (entries for multi-puts, rows for multi-gets).`,
    '',
    `| workload | ${axis.column} | ops/s (entries/s) | HBase CPU µs/op | HBase, less idle, µs/op | HBase RPC threads µs/op | client ` +
      'CPU ' +
      'µs/op |',
    '|---|---|---:|---:|---:|---:|---:|'
  ]
  for (const name of names) {
    for (const v of variants) {
      const s = report.summary[name][v]
      const rate = s.entriesPerSec.median != null ? s.entriesPerSec : s.opsPerSec
      lines.push(`| ${labels[name]} | ${v} | ${fmt(rate)} | ${fmt(s.hbaseCpuUsPerOp)} | ` +
        `${fmt(s.hbaseNetCpuUsPerOp)} | ${fmt(s.hbaseRpcCpuUsPerOp)} | ${fmt(s.clientCpuUsPerOp)} |`)
    }
  }
  lines.push('', 'Medians over the rounds, (min–max) in brackets.', '')
  if (variants.length > 1) {
    lines.push(`Paired within each round, ${b} minus ${a} (negative: ${b} costs less); "lower in" counts the rounds where ${b} was ` +
      'lower:', '',
      `| workload | HBase CPU µs/op, ${b} − ${a} | lower in | HBase less idle | lower in | HBase RPC threads | lower in | client CPU ` +
        'µs/op | lower in |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    const cell = (d) => `${fmt(d)} | ${d.lower}/${d.of}`
    for (const name of names) {
      const d = report.summary[name][diffKey(variants)]
      lines.push(`| ${labels[name]} | ${FIGURES.map((key) => cell(d[key])).join(' | ')} |`)
    }
    lines.push('')
  }
  lines.push(...threadTable(report, labels))
  if (report.idleHBaseCpuUsPerSec != null) {
    lines.push(`The HBase JVM idle (no client sending) spent ${report.idleHBaseCpuUsPerSec} µs CPU per second before the rounds, ` +
      `${report.rounds.map((r) => r.idleHBaseCpuUsPerSec).join(', ')} before each round ` +
      '(2 s each); "less idle" subtracts that rate over each workload\'s duration.', '')
  }
  if (N.rounds > 1 || variants.length > 1) {
    for (const [key, what] of [['hbaseCpuUsPerOp', 'HBase JVM'], ['hbaseRpcCpuUsPerOp', 'HBase RPC threads']]) {
      lines.push(
        `Each round (order in brackets), ${what} CPU µs/op:`,
        '',
        `| round | ${names.flatMap((n) => variants.map((v) => `${n} ${v}`)).join(' | ')} |`,
        `|---|${names.flatMap(() => variants.map(() => '---:')).join('|')}|`
      )
      report.rounds.forEach((r, i) => lines.push(`| ${i + 1} (${r.order.join(', ')}) | ` +
        `${names.flatMap((n) => variants.map((v) => r[v][n][key] ?? '–')).join(' | ')} |`))
      lines.push('')
    }
  }
  return lines.join('\n')
}

const TOP_GROUPS = 8

/** The HBase JVM's CPU by thread group: the groups that cost most, the rest as "other". */
function threadTable (report, labels) {
  const { workloads: names, variants, summary } = report
  const cells = names.flatMap((n) => variants.map((v) => [n, v, summary[n][v].hbaseThreadsUsPerOp || {}]))
  const total = {}
  for (const [, , groups] of cells) for (const [g, s] of Object.entries(groups)) total[g] = (total[g] || 0) + (s.median || 0)
  const top = Object.keys(total).sort((a, b) => total[b] - total[a]).slice(0, TOP_GROUPS)
  if (!top.length) return []
  const lines = ['Where the HBase JVM\'s CPU went, by thread group (threads named alike, less their number), median µs/op over the ' +
    'rounds:', '',
    `| workload | ${report.axis.column} | ${top.join(' | ')} | other |`, `|---|---|${top.map(() => '---:').join('|')}|---:|`]
  for (const [n, v, groups] of cells) {
    const other = Object.entries(groups).filter(([g]) => !top.includes(g)).reduce((sum, [, s]) => sum + (s.median || 0), 0)
    lines.push(`| ${labels[n]} | ${v} | ${top.map((g) => groups[g] ? groups[g].median : '–').join(' | ')} | ${+other.toFixed(2)} |`)
  }
  return [...lines, '']
}

module.exports = { median, summarizeRounds, markdown }
