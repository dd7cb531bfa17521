'use strict'

/**
 * What a chaos run proved, pure (tested without a JVM): the load's answers per endpoint, each
 * action's recovery as the load and HBase's Java client saw it, every sample2 failure checked
 * against the windows in which a region was in transition, and the access-log rows dumped by
 * HBase's Java client matched one to one with sample5's 2xx answers by their unique User-Agent.
 */

const { recoveries, transitionWindows, regionOffline } = require('./timeline')

/**
 * @typedef {import('./timeline').Action} Action
 * @typedef {import('./watch').Look} Look
 * @typedef {{ endpoint: string, id: string, mark?: string, sent: number, done: number, status: number, error?: string }} LoadRecord
 *   one request of the load: status 0 = no answer (error says why); times in epoch ms
 */

/**
 * @param {LoadRecord} r
 * @returns {boolean}
 */
const failed = (r) => r.status !== 200

/**
 * Answers per endpoint.
 * @param {LoadRecord[]} records
 * @returns {Record<string, { requests: number, ok: number, statuses: Record<string, number>, errors: number, maxMs: number }>}
 */
function countAnswers (records) {
  /** @type {Record<string, { requests: number, ok: number, statuses: Record<string, number>, errors: number, maxMs: number }>} */
  const out = {}
  for (const r of records) {
    const c = (out[r.endpoint] ??= { requests: 0, ok: 0, statuses: {}, errors: 0, maxMs: 0 })
    c.requests++
    if (r.status >= 200 && r.status < 300) c.ok++
    if (r.status === 0) c.errors++
    else c.statuses[r.status] = (c.statuses[r.status] || 0) + 1
    c.maxMs = Math.max(c.maxMs, Math.round(r.done - r.sent))
  }
  return out
}

/**
 * Matches the access-log rows (the Java client's dump: "rowkey TAB entry JSON" lines) with the
 * requests that got a 2xx, by the unique mark each request carried as its User-Agent.
 * @param {LoadRecord[]} records sample5's, each with its mark
 * @param {Iterable<string>} dumpLines
 * @param {string} markPrefix marks of this run start with it
 * @returns {{ ok: number, rowsFound: number, duplicates: number, missing: number, extra: number, otherRows: number,
 *   missingMarks: string[], duplicateMarks: string[] }}
 *   rowsFound: rows carrying one of this run's marks; duplicates: rows beyond the first per mark;
 *   missing: 2xx answers without a row; extra: rows of requests that got no 2xx; otherRows: rows
 *   without this run's mark
 */
function matchAccessLog (records, dumpLines, markPrefix) {
  const seen = new Map()
  let otherRows = 0
  for (const line of dumpLines) {
    if (!line) continue
    let ua = null
    try {
      ua = JSON.parse(line.slice(line.indexOf('\t') + 1)).ua
    } catch {}
    if (typeof ua !== 'string' || !ua.startsWith(markPrefix)) {
      otherRows++
      continue
    }
    seen.set(ua, (seen.get(ua) || 0) + 1)
  }
  const okMarks = new Set(records.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.mark))
  let rowsFound = 0
  let duplicates = 0
  const duplicateMarks = []
  let extra = 0
  for (const [mark, n] of seen) {
    rowsFound += n
    if (n > 1) {
      duplicates += n - 1
      duplicateMarks.push(mark)
    }
    if (!okMarks.has(mark)) extra++
  }
  const missingMarks = [...okMarks].filter((m) => !seen.has(m))
  return {
    ok: okMarks.size,
    rowsFound,
    duplicates,
    missing: missingMarks.length,
    extra,
    otherRows,
    missingMarks: missingMarks.slice(0, 20),
    duplicateMarks: duplicateMarks.slice(0, 20)
  }
}

/**
 * The failures the load saw after each action and before the next one.
 * @param {Action[]} actions in start order
 * @param {LoadRecord[]} records
 * @returns {{ before: number,
 *   perAction: Array<{ count: number, byEndpoint: Record<string, number>, firstMs: number|null, lastMs: number|null }> }}
 */
function failuresPerAction (actions, records) {
  const perAction = actions.map(() => ({ count: 0, byEndpoint: {}, firstMs: null, lastMs: null }))
  let before = 0
  for (const r of records.filter(failed)) {
    let i = actions.length - 1
    while (i >= 0 && actions[i].at > r.done) i--
    if (i < 0) {
      before++
      continue
    }
    const f = perAction[i]
    const offset = r.done - actions[i].at
    f.count++
    f.byEndpoint[r.endpoint] = (f.byEndpoint[r.endpoint] || 0) + 1
    f.firstMs = f.firstMs === null ? offset : Math.min(f.firstMs, offset)
    f.lastMs = f.lastMs === null ? offset : Math.max(f.lastMs, offset)
  }
  return { before, perAction }
}

/**
 * Every sample2 answer that was not a 200: must be a 503, within `deadlineMs`, and inside a window
 * in which a region was in transition. Also says how many had their own region offline meanwhile
 * and how many failed for another region's sake (the source's breaker fails every read for a moment).
 * @param {LoadRecord[]} records sample2's
 * @param {ReturnType<typeof transitionWindows>} windows
 * @param {(row: string, from: number, to: number) => boolean} offline regionOffline() of the config table
 * @param {{ deadlineMs: number, lookSlackMs: number }} options lookSlackMs: how far around a request a look still tells
 */
function checkSample2 (records, windows, offline, { deadlineMs, lookSlackMs }) {
  const failures = records.filter(failed)
  const inside = (r) => windows.some((w) => r.done >= w.from && r.sent <= w.to)
  const notServiceUnavailable = failures.filter((r) => r.status !== 503)
  const overDeadline = failures.filter((r) => r.done - r.sent > deadlineMs)
  const outside = failures.filter((r) => !inside(r))
  const own = failures.filter((r) => offline(r.id, r.sent - lookSlackMs, r.done + lookSlackMs)).length
  const brief = (r) => ({ id: r.id, sent: Math.round(r.sent), ms: Math.round(r.done - r.sent), status: r.status, error: r.error })
  return {
    failures: failures.length,
    served503: failures.length - notServiceUnavailable.length,
    maxMs: failures.reduce((m, r) => Math.max(m, Math.round(r.done - r.sent)), 0),
    notServiceUnavailable: notServiceUnavailable.slice(0, 20).map(brief),
    overDeadline: overDeadline.slice(0, 20).map(brief),
    outsideWindows: outside.slice(0, 20).map(brief),
    outsideCount: outside.length,
    ownRegionOffline: own,
    otherRegionOnly: failures.length - own
  }
}

/**
 * The whole verdict of one run.
 * @param {{ actions: Action[], looks: Look[], records: LoadRecord[], dumpLines: Iterable<string>, markPrefix: string,
 *   deadlineMs: number, logTable: string, configTable: string, lookIntervalMs: number }} run
 */
function analyzeChaos ({ actions: given, looks, records, dumpLines, markPrefix, deadlineMs, logTable, configTable, lookIntervalMs }) {
  // In time order (an action's time is when it struck, which a slow first step can delay).
  const actions = [...given].sort((a, b) => a.at - b.at)
  const byEndpoint = (name) => records.filter((r) => r.endpoint === name)
  const rec = recoveries(actions, looks, { logTable })
  const { before, perAction } = failuresPerAction(actions, records)
  const windows = transitionWindows(actions, looks, { logTable, graceMs: deadlineMs })
  return {
    answers: countAnswers(records),
    cachedFailures: ['sample3', 'sample5'].flatMap((e) => byEndpoint(e).filter(failed)).slice(0, 20),
    accessLog: matchAccessLog(byEndpoint('sample5'), dumpLines, markPrefix),
    sample2: checkSample2(byEndpoint('sample2'), windows, regionOffline(looks, configTable), {
      deadlineMs,
      lookSlackMs: lookIntervalMs * 2
    }),
    failuresBeforeChaos: before,
    actions: actions.map((a, i) => ({ ...a, failures: perAction[i], reassignedMs: rec[i].reassignedMs })),
    windows
  }
}

module.exports = { analyzeChaos, countAnswers, matchAccessLog, failuresPerAction, checkSample2 }
