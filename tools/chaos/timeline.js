'use strict'

/**
 * Reading the watcher's looks (watch.js) against the driver's actions, pure: when the cluster was
 * settled (every region served exactly once, none in transition, every live server answering),
 * when each action's effect was over (its "reassignment" time), and the windows during which a
 * region was in transition.
 */

/**
 * @typedef {import('./watch').Look} Look
 * @typedef {{ n: number, kind: string, target: string|null, at: number, doneAt: number|null, error: string|null,
 *   detail: Record<string, any>, steps: Array<{ what: string, at: number, ms: number|null, error?: string }> }} Action
 */

/**
 * "table,startKey,regionId.encoded." (or hbase:meta's "hbase:meta,,1.1588230740").
 * @param {string} name
 * @returns {{ table: string, startKey: string, encoded: string }}
 */
function parseRegionName (name) {
  const m = /^([^,]+),(.*),(\d+)\.(?:([0-9a-f]{32})\.|(\d+))$/.exec(name)
  if (!m) return { table: name.split(',')[0], startKey: '', encoded: name }
  return { table: m[1], startKey: m[2], encoded: m[4] || m[5] }
}

/**
 * Regions served per table in one look (reachable servers only).
 * @param {Look} look
 * @returns {Record<string, number>}
 */
function tableCounts (look) {
  /** @type {Record<string, number>} */
  const counts = {}
  for (const s of look.servers || []) {
    for (const name of s.regions || []) {
      const { table } = parseRegionName(name)
      counts[table] = (counts[table] || 0) + 1
    }
  }
  return counts
}

/**
 * @param {Look} look
 * @param {Record<string, number>} expected regions per table
 * @returns {boolean} the master answers, nothing is in transition, every live server answers, and
 *   every table has exactly its expected regions online, each on one server
 */
function isSettled (look, expected) {
  if (!look || look.error || look.rit !== 0) return false
  if ((look.servers || []).some((s) => s.unreachable !== undefined)) return false
  const names = (look.servers || []).flatMap((s) => s.regions || [])
  if (new Set(names).size !== names.length) return false
  const counts = tableCounts(look)
  return Object.entries(expected).every(([table, n]) => counts[table] === n)
}

/**
 * Regions expected online at time `t`: the first look's counts, plus one access-log region per
 * split that had completed by then.
 * @param {Record<string, number>} base
 * @param {Action[]} actions
 * @param {string} logTable
 * @param {number} t
 * @returns {Record<string, number>}
 */
function expectedAt (base, actions, logTable, t) {
  const splits = actions.filter((a) => a.kind === 'split-region' && !a.error && a.doneAt !== null && a.doneAt <= t).length
  return { ...base, [logTable]: (base[logTable] || 0) + splits }
}

/**
 * Whether `look` shows the action's own effect over (beyond the cluster being settled).
 * @param {Action} a
 * @param {Look} look
 * @returns {boolean}
 */
function effectOver (a, look) {
  if (a.error || a.doneAt === null) return a.doneAt !== null && look.at >= a.doneAt
  const servers = look.servers || []
  switch (a.kind) {
    case 'kill-rs': // the killed instance is no longer counted live
      return !servers.some((s) => s.server === a.target && s.startCode === a.detail.startCode)
    case 'restart-rs': // a new instance is live on the same address
      return servers.some((s) => s.server === a.target && s.startCode !== a.detail.startCode)
    case 'kill-master':
      return Boolean(look.active) && look.active !== a.target
    default: // move, split, restore: the master's procedure returned
      return look.at >= a.doneAt
  }
}

/**
 * For every action, the first look at or after it that is settled with its effect over.
 * @param {Action[]} actions
 * @param {Look[]} looks
 * @param {{ logTable: string }} tables
 * @returns {Array<{ n: number, reassignedAt: number|null, reassignedMs: number|null }>}
 */
function recoveries (actions, looks, { logTable }) {
  const base = looks.length ? tableCounts(looks.find((l) => !l.error) || looks[0]) : {}
  return actions.map((a) => {
    const look = looks.find((l) => l.at >= a.at && effectOver(a, l) && isSettled(l, expectedAt(base, actions, logTable, l.at)))
    return { n: a.n, reassignedAt: look ? look.at : null, reassignedMs: look ? look.at - a.at : null }
  })
}

/**
 * Periods in which a region was in transition or the cluster otherwise not settled: each action
 * from its start to its reassignment (or the last look), and each run of unsettled looks (e.g. the
 * balancer moving regions by itself) from the last settled look before it to the first after;
 * both stretched by `graceMs` (a request that started inside may end up to a deadline later).
 * @param {Action[]} actions
 * @param {Look[]} looks
 * @param {{ logTable: string, graceMs: number }} options
 * @returns {Array<{ from: number, to: number, cause: string }>}
 */
function transitionWindows (actions, looks, { logTable, graceMs }) {
  const last = looks.length ? looks[looks.length - 1].at : Date.now()
  const rec = recoveries(actions, looks, { logTable })
  const windows = actions.map((a, i) => ({ from: a.at, to: (rec[i].reassignedAt ?? last) + graceMs, cause: `#${a.n} ${a.kind}` }))
  const base = looks.length ? tableCounts(looks.find((l) => !l.error) || looks[0]) : {}
  let open = null
  let lastSettled = looks.length ? looks[0].at : 0
  for (const look of looks) {
    const settled = isSettled(look, expectedAt(base, actions, logTable, look.at))
    if (!settled && open === null) open = lastSettled
    if (settled) {
      if (open !== null) windows.push({ from: open, to: look.at + graceMs, cause: 'unsettled (seen by the watcher)' })
      open = null
      lastSettled = look.at
    }
  }
  if (open !== null) windows.push({ from: open, to: last + graceMs, cause: 'unsettled until the end' })
  return windows
}

/**
 * A test of whether the region serving a row of `table` was offline (not served by an answering
 * server, or in transition) in any look between two times; a look without an answer from the
 * master counts as offline (it cannot tell). Region boundaries are the start keys seen in any look.
 * @param {Look[]} looks
 * @param {string} table
 * @returns {(row: string, from: number, to: number) => boolean}
 */
function regionOffline (looks, table) {
  const ofTable = (names) => (names || []).map(parseRegionName).filter((r) => r.table === table)
  const starts = [...new Set(looks.flatMap((l) => (l.servers || []).flatMap((s) => ofTable(s.regions).map((r) => r.startKey))))].sort()
  return (row, from, to) => {
    const start = starts.filter((k) => k <= row).pop()
    return looks.some((look) => {
      if (look.at < from || look.at > to) return false
      if (look.error) return true
      const online = (look.servers || []).some((s) => ofTable(s.regions).some((r) => r.startKey === start))
      return !online || ofTable(look.ritRegions).some((r) => r.startKey === start)
    })
  }
}

module.exports = { parseRegionName, tableCounts, isSettled, expectedAt, effectOver, recoveries, transitionWindows, regionOffline }
