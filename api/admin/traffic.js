'use strict'

const express = require('express')
const { MINUTE_MS, minuteOf, parseGroup, partitionOfId } = require('../../logging/rollup/layout')
const { markedMinutes, rolledMinutes, rolledGroups } = require('../../logging/rollup/read')
const { sendError } = require('../error-body')
const { ERRORS } = require('../../lib/errors')

const HOUR_MINUTES = 60
const TOP_MINUTES = 15
const TOP_IDS = 10
// Many open dashboards cost one read of the rollups per interval, not one each.
const CACHE_MS = 5000
const UNAVAILABLE = Object.freeze(new ERRORS.LOG_UNAVAILABLE())

/**
 * @typedef {{ rollupTable: string, logTable: string, buckets: number }} TrafficSource
 * @typedef {{ id: string, count: number, bots: number, endpoints: Record<string, number> }} TopId
 * @typedef {{ enabled: true, now: number, logTable: string, from: number, to: number,
 *   minutes: { t: number, endpoints: Record<string, number>, bots: Record<string, number> }[],
 *   pending: number[], top: TopId[] }} TrafficBody
 */

/**
 * Fleet-wide traffic for the dashboard, read from the access-log rollups (logging/rollup/):
 * every host's requests, not this one's. `GET /dashboard/traffic` answers
 * `{ enabled: true, now, logTable, minutes: [{ t, endpoints: { <name>: count }, bots: { <name>: count } }],
 * pending: [t], top: [{ id, count, bots, endpoints }] }`: requests per minute per endpoint over
 * the last hour (from the totals rows: a few cells a minute), and of those the bots'
 * (logging/bot-agent.js), the minutes whose counts are not final yet (marked: the minute in
 * progress, or one a replay touched), and the ids with most requests over the last 15 minutes.
 * Without rollups it answers `{ enabled: false, reason }`. Its top ids are visitors' ids, so it
 * needs an admin token like /admin/*.
 *
 * @param {object} deps
 * @param {import('express').RequestHandler} deps.guard the token check (./bearer-guard.js adminGuard)
 * @param {import('@beacon/hbase-client').HBaseClient} deps.client
 * @param {TrafficSource|null} deps.source the
 *   rollups of the HBase access log, null when none is kept
 * @param {() => number} deps.now
 * @param {number} deps.timeoutMs per HBase call
 * @returns {import('express').Router}
 */
function createTrafficRouter ({ guard, client, source, now, timeoutMs }) {
  const router = express.Router()
  /** @type {{ at: number, body: Promise<TrafficBody> }|null} */
  let cached = null

  /** @returns {Promise<TrafficBody>} only called with a source (the route answers without one) */
  async function read () {
    const src = /** @type {TrafficSource} */ (source)
    /** @type {import('../../logging/rollup/read').RollupSource} */
    const rollups = { ...src, client, timeout: timeoutMs }
    const end = minuteOf(now()) + MINUTE_MS // the minute in progress included
    const from = end - HOUR_MINUTES * MINUTE_MS
    const minutes = []
    for await (const { minute, groups } of rolledMinutes(rollups, from, end, 't')) {
      /** @type {Record<string, number>} */
      const endpoints = {}
      /** @type {Record<string, number>} */
      const bots = {}
      for (const [group, n] of groups) {
        const { endpoint, bot } = parseGroup(group)
        endpoints[endpoint] = (endpoints[endpoint] || 0) + n
        if (bot) bots[endpoint] = (bots[endpoint] || 0) + n
      }
      minutes.push({ t: minute, endpoints, bots })
    }
    const top = await topIds(rollups, end - TOP_MINUTES * MINUTE_MS, end)
    const pending = [...await markedMinutes(rollups, from, end)].sort((a, b) => a - b)
    return { enabled: true, now: now(), logTable: src.logTable, from, to: end, minutes, pending, top }
  }

  /**
   * The ids with most requests over [from, to), read partition by partition (an id's groups are
   * all in one): once a partition is read its ids are complete, and only the best are kept, so
   * a minute of a million new visitors costs a partition's share of them at once.
   * @param {import('../../logging/rollup/read').RollupSource} rollups
   * @param {number} from
   * @param {number} to
   * @returns {Promise<TopId[]>}
   */
  async function topIds (rollups, from, to) {
    /** @type {Map<string, TopId>} */
    const byId = new Map()
    /** @type {TopId[]} */
    let best = []
    const keepBest = (/** @type {number|null} */ partition) => {
      for (const [id, row] of byId) {
        if (partition !== null && partitionOfId(id) !== partition) continue
        best.push(row)
        byId.delete(id)
      }
      best = best.sort((a, b) => b.count - a.count || (a.id < b.id ? -1 : 1)).slice(0, TOP_IDS)
    }
    let open = -1
    for await (const { partition, groups } of rolledGroups(rollups, from, to)) {
      if (partition !== open && open >= 0) keepBest(open)
      open = partition
      for (const [group, n] of groups) {
        const { endpoint, id, bot } = parseGroup(group)
        if (id === '') continue
        let row = byId.get(id)
        if (!row) byId.set(id, (row = { id, count: 0, bots: 0, endpoints: {} }))
        row.count += n
        if (bot) row.bots += n
        row.endpoints[endpoint] = (row.endpoints[endpoint] || 0) + n
      }
    }
    keepBest(null)
    return best
  }

  router.get('/dashboard/traffic', guard, (req, res) => {
    // Not an error for the page: this host's log keeps no rollups (or there is no HBase log).
    if (!source) {
      return res
        .set('Cache-Control', 'no-store')
        .json({ enabled: false, reason: 'no access-log rollups on this host (BEACON_ACCESS_ROLLUPS=1 keeps them)' })
    }
    if (!cached || now() - cached.at > CACHE_MS) {
      const body = read()
      cached = { at: now(), body }
      body.catch(() => { if (cached && cached.body === body) cached = null })
    }
    cached.body.then(
      (body) => res.set('Cache-Control', 'no-store').json(body),
      () => sendError(res, UNAVAILABLE)
    )
  })
  return router
}

module.exports = { createTrafficRouter }
