'use strict'

/**
 * The flood bench's report (tools/bench/flood.js) as markdown: what ran with which limits, the real
 * visitors with and without the flood against the issue's bounds, refusals by source, the
 * greedy client's streams, and the access log's rows against the views answered.
 */

const P99_BOUND = 1.5
const HIT_POINTS_BOUND = 5

const ms = (v) => (v === null || v === undefined ? '–' : `${Math.round(v * 100) / 100} ms`)
const pct = (v) => (v === null || v === undefined ? '–' : `${Math.round(v * 1000) / 10} %`)
const int = (v) => Number(v || 0).toLocaleString('en-US')
const points = (v) => (v === null ? '–' : `${Math.abs(Math.round(v * 10) / 10)} points ${v > 0 ? 'lower' : 'higher'}`)

/**
 * The run without the flood and the run with it, each the mean of its rounds' phases (their
 * names start with `baseline` and `flood`).
 * @param {object} r
 * @returns {{ baseline: { p99: number|null, hitRatio: number|null }, flood: { p99: number|null, hitRatio: number|null } }}
 */
function sides (r) {
  const mean = (values) => {
    if (values.length === 0 || values.some((v) => v === null)) return null
    return values.reduce((a, b) => a + b, 0) / values.length
  }
  const side = (kind) => {
    const phases = r.phases.filter((p) => p.name.startsWith(kind))
    return { p99: mean(phases.map((p) => p.visitors.p99)), hitRatio: mean(phases.map((p) => p.hitRatio)) }
  }
  return { baseline: side('baseline'), flood: side('flood') }
}

/**
 * @param {object} r the report tools/bench/flood.js writes
 * @returns {{ p99Ratio: number|null, hitPoints: number|null, rowsEqual: boolean, pass: boolean }}
 */
function verdict (r) {
  const { baseline, flood } = sides(r)
  const p99Ratio = baseline.p99 > 0 && flood.p99 !== null ? flood.p99 / baseline.p99 : null
  const hitPoints = baseline.hitRatio !== null && flood.hitRatio !== null ? (baseline.hitRatio - flood.hitRatio) * 100 : null
  const rowsEqual = r.log.rows === r.log.answered
  const pass = p99Ratio !== null && p99Ratio <= P99_BOUND && hitPoints !== null && hitPoints <= HIT_POINTS_BOUND && rowsEqual
  return { p99Ratio, hitPoints, rowsEqual, pass }
}

/** @param {object} r @returns {string} */
function floodMarkdown (r) {
  const v = verdict(r)
  const { rateLimit, http, ofrep } = r.settings.limits
  const status = (c, s) => int(c && c.byStatus[s])
  const sources = ['visitors', 'bots', 'greedy'].filter((s) => r.counts[s])
  const lines = [
    '# Flood: real visitors beside a bot flood and a greedy client',
    '',
    `\`${r.command}\` at ${r.commit}; ${r.machine.cores} cores, ${r.machine.cpuModel}, node ${r.machine.node}. One \`server.js\` with ` +
      `${r.settings.workers} workers on the running HBase; ${int(r.settings.ids)} known ids; ${r.settings.rounds} rounds of a ` +
      `baseline and a flood, ${r.settings.seconds} s each, after a warm-up.`,
    '',
    `Limits (the defaults): ${rateLimit.perSecond} requests a second per address, endpoint and worker, bursts of ` +
      `${rateLimit.burst || 2 * rateLimit.perSecond}; ${int(http.maxConnectionsPerClient)} connections per address and worker; ` +
      `${int(http.maxRequestsPerSocket)} requests per connection; ${int(ofrep.maxStreamsPerClient)} of ${int(ofrep.maxStreams)} ` +
      'streams per address and worker. No trusted proxy.',
    '',
    `Load: visitors ${r.settings.rates.visitors} req/s (Zipf 1.1 over the known ids, 40 addresses, a browser's agent); ` +
      `bots ${r.settings.rates.bots} req/s (a new id each, 200 other addresses, a crawler's agent); the greedy client ` +
      `${r.settings.rates.greedy} req/s of new ids from one address, holding ${int(r.settings.greedyStreams)} streams.`,
    '',
    '## The real visitors',
    '',
    '| phase | req/s | p50 | p99 | max | hit ratio | errors | machine CPU busy | config RPCs (all sources) | reads skipped |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.phases.map((p) => `| ${p.name} | ${Math.round(p.visitors.rps)} | ${ms(p.visitors.p50)} | ${ms(p.visitors.p99)} | ` +
      `${ms(p.visitors.max)} | ${pct(p.hitRatio)} | ${p.visitors.errors} | ${pct(p.cpuBusy)} | ${int(p.configRpcs ?? 0)} | ` +
      `${int(p.readsSkipped ?? 0)} |`),
    '',
    `- p99 with the flood (the mean of its rounds): ${v.p99Ratio === null ? '–' : Math.round(v.p99Ratio * 100) / 100}× the ` +
      `baselines' mean (bound ${P99_BOUND}×): ` +
      `${v.p99Ratio !== null && v.p99Ratio <= P99_BOUND ? 'within' : 'OUT'}`,
    `- hit ratio with the flood: ${points(v.hitPoints)} than the baselines' mean (bound: ${HIT_POINTS_BOUND} lower): ` +
      `${v.hitPoints !== null && v.hitPoints <= HIT_POINTS_BOUND ? 'within' : 'OUT'}`,
    '',
    '## Refusals by source (every phase)',
    '',
    '| source | sent | 200 | 429 | other | no answer |',
    '|---|---:|---:|---:|---:|---:|',
    ...sources.map((s) => {
      const c = r.counts[s]
      const other = Object.entries(c.byStatus).filter(([k]) => !['200', '429', '0'].includes(k)).reduce((n, [, x]) => n + x, 0)
      return `| ${s} | ${int(c.sent)} | ${status(c, 200)} | ${status(c, 429)} | ${int(other)} | ${status(c, 0)} |`
    }),
    '',
    `The greedy client asked for ${int(r.streams.asked)} streams over the floods and held ${int(r.streams.opened)}; ` +
      `${int(r.streams.byStatus[429])} were refused with 429 (its share of requests and of streams).`,
    '',
    '## The access log',
    '',
    `- views answered (all sources, every phase, 429s excluded): ${int(r.log.answered)}; rows: ${int(r.log.rows)}: ` +
      `${v.rowsEqual ? 'every answered view a row' : 'DIFFERENT'}`,
    `- by bot: ${(r.log.byBot || []).map((g) => `${g.key} ${int(g.count)}`).join(', ')}`,
    `- rollups ${r.log.rollups.exact ? 'exact' : 'NOT exact'} ${Math.round(r.log.rollups.lagMs / 1000)} s after the load stopped ` +
      '(a minute is counted once it has ended and settled)',
    '',
    `**${v.pass ? 'Within every bound.' : 'Outside a bound: see above.'}**`,
    ''
  ]
  return lines.join('\n')
}

module.exports = { floodMarkdown, verdict, P99_BOUND, HIT_POINTS_BOUND }
