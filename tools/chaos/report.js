'use strict'

/**
 * A chaos run's result as markdown: the counts, then one row per action with its time and the
 * recovery it caused. Used by the bench report and printed by the fault test.
 */

const s = (ms) => (ms === null || ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`)

function describe (a) {
  const d = a.detail || {}
  switch (a.kind) {
    case 'kill-rs': return `SIGKILL RegionServer ${a.target} (${d.regions} regions${d.meta ? ' incl. hbase:meta' : ''}); started again ` +
      `after ${s(d.restartAfterMs)}, live again at +${s(d.backAt - a.at)}`
    case 'restart-rs': return `graceful restart of RegionServer ${a.target} (${d.regions} regions${d.meta ? ' incl. hbase:meta' : ''}); ` +
      `live again at +${s(d.backAt - a.at)}`
    case 'kill-master': return `SIGKILL active master ${a.target}; ${d.newActive || '?'} active at +${s(d.failoverAt - a.at)}; ` +
      `restarted, backup at +${s(d.backAt - a.at)}`
    case 'move-region': return `move ${d.table} region [${d.startKey || '(first)'}…) ${d.from} → ${d.to || '?'}`
    case 'split-region': return `split ${d.table} region [${d.startKey || '(first)'}…) at ${d.splitAt} on ${d.on}; ` +
      `${d.regionsAfter || '?'} regions after`
    default: return `${a.kind} ${a.target || ''}`
  }
}

/**
 * @param {Awaited<ReturnType<typeof import('./index').runChaos>>} r
 * @returns {string[]} markdown lines
 */
function chaosMarkdown (r) {
  const ans = r.answers
  const ep = (name) => ans[name] || { requests: 0, ok: 0, statuses: {}, errors: 0, maxMs: 0 }
  const statuses = (c) => Object.entries(c.statuses).filter(([k]) => k !== '200').map(([k, n]) => `${n} × ${k}`).join(', ') || 'none'
  const al = r.accessLog
  const lines = [
    `Seed ${r.seed}; actions for ${s(r.durationMs)}, load for ${s(r.loadMs)} (until ${s(r.deadlineMs + 2000)} ` +
      `after the cluster settled at +${s(r.settledAfterMs)}); request deadline ${s(r.deadlineMs)}; HBase's ` +
      `Java client looked ${r.looks} times (${r.lookErrors} without an answer from a master).`,
    '',
    '| endpoint | requests | 2xx | other answers | no answer | slowest |',
    '|---|---:|---:|---|---:|---:|',
    ...['sample2', 'sample3', 'sample5'].map(
      (n) => `| ${n} | ${ep(n).requests} | ${ep(n).ok} | ${statuses(ep(n))} | ${ep(n).errors} | ${ep(n).maxMs} ms |`
    ),
    '',
    `- **access log** (HBase's Java client, full scan after the pipeline drained): sample5 2xx ${al.ok}, rows found ${al.rowsFound}, ` +
      `duplicates ${al.duplicates}, missing ${al.missing}, rows of requests without a 2xx ${al.extra}, rows of anything else ` +
      `${al.otherRows}; entries spilled to the journal ${r.drained.spilled}, replayed ${r.drained.replayed}.`,
    `- **sample2**: ${r.sample2.failures} non-200 answers, ${r.sample2.served503} of them 503, slowest ${r.sample2.maxMs} ms (deadline ` +
      `${r.deadlineMs} ms); outside every window with a region in transition: ${r.sample2.outsideCount}. Their own config region was ` +
      `offline meanwhile for ${r.sample2.ownRegionOffline}; ${r.sample2.otherRegionOnly} failed while only another region was (the ` +
      'source\'s breaker: after 3 failed reads in a row it fails every read for 1 s).',
    `- **server**: worker deaths ${r.crashed.workerDeaths.length}, primary alive to the end ${r.crashed.primaryAlive}, exit code ` +
      `${r.crashed.exitCode}; failures before the first action ${r.failuresBeforeChaos}.`,
    '',
    '| # | at | action | failures seen by the load | first failure | last failure | reassigned after |',
    '|---:|---:|---|---|---:|---:|---:|'
  ]
  for (const a of r.actions) {
    const f = a.failures
    const by = f.count ? `${f.count} (${Object.entries(f.byEndpoint).map(([e, n]) => `${e} ${n}`).join(', ')})` : '0'
    const what = describe(a) + (a.error ? ` — **failed**: ${a.error}` : '')
    lines.push(
      `| ${a.n} | +${s(a.at - r.chaosStarted)} | ${what.replace(/\|/g, '\\|')} | ${by} | ` +
        `${f.firstMs === null ? '—' : `+${s(f.firstMs)}`} | ${f.lastMs === null ? '—' : `+${s(f.lastMs)}`} | ` +
        `${a.reassignedMs === null ? 'not seen' : s(a.reassignedMs)} |`
    )
  }
  lines.push(
    '',
    'Failures are counted from an action to the next one; "reassigned after" is when HBase\'s Java client first saw every region online ' +
      'exactly once, none in transition, every live server answering, and the action\'s own effect over (the killed server gone from the ' +
      'live list, the restarted one back, a new active master, the move or split done). Actions overlap (the next one starts 10–20 s ' +
      'after the previous one, whether or not the cluster has recovered), so an action followed closely by another is only "reassigned" ' +
      'once the cluster has settled from both.'
  )
  return lines
}

module.exports = { chaosMarkdown }
