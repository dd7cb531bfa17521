'use strict'

const path = require('node:path')
const { createHBaseClientFrom } = require('../config/hbase-client')
const { createRollers } = require('../logging')
const { sinkSettingsInUse } = require('./public/endpoints')
const { createMetrics } = require('./metrics')

/** @typedef {ReturnType<typeof import('../logging/rollup/roller').createRoller>} Roller */

/**
 * Whether these settings keep rollups: some sink in use is an HBase sink with rollups on. Then
 * the primary forks the rollup process (server.js).
 * @param {import('../config/load').Settings} settings
 * @returns {boolean}
 */
function keepsRollups (settings) {
  return Object.values(sinkSettingsInUse(settings)).some((spec) => spec.type === 'hbase' && spec.rollups !== false)
}

/**
 * The rollup process's root factory: the rollup job (logging/rollup/roller.js) of every HBase
 * sink in use that keeps rollups, on an HBase client of its own, with its metrics. server.js
 * runs it in one process per host, apart from the workers that serve (their sinks mark the
 * minutes, this counts them); tests build it the same way. Any number of them at once give the
 * same counts (logging/rollup/layout.js), so a host's replacement racing one that is dying is
 * harmless.
 *
 * @param {import('../config/load').Settings} settings validated settings (config/)
 * @param {object} deps
 * @param {import('pino').Logger} deps.logger the app (ops) logger
 * @param {import('@beacon/hbase-client').HBaseClient} [deps.client] owned from here on (closed by
 *   close()); default: a client on settings.hbase.bootstrap whose cells travel in cell blocks
 *   (a scan's rows decode at about half the CPU: docs/access-log.md, "Rollups")
 * @param {ReturnType<typeof createMetrics>} [deps.metrics] default: a fresh registry
 * @param {{ now(): number }} [deps.clock]
 */
function createRollupJob (settings, deps) {
  const { logger, clock } = deps
  const metrics = deps.metrics || createMetrics()
  const client = deps.client || createHBaseClientFrom(settings, { cellBlocks: true, onRpc: metrics.hooks.onRpc })
  const { maxGroups, maxAttempts } = settings.rollupJob
  const counting = { maxGroups, maxAttempts, spillDir: path.join(settings.stateDir, 'rollup-spill') }
  const rollers = createRollers(sinkSettingsInUse(settings), { client, logger, clock, counting })
  metrics.watchRollers(rollers)
  metrics.watchHBaseTraffic(client)
  /** @type {Promise<void>|null} */
  let closing = null

  return {
    metrics,
    /** sink name → its roller */
    rollers,

    /** Starts the periodic runs of every roller. */
    start () {
      for (const roller of rollers.values()) roller.start()
    },

    /**
     * One run of every roller now, one after the other.
     * @returns {Promise<number>} minutes counted
     */
    async runOnce () {
      let minutes = 0
      for (const roller of rollers.values()) minutes += await roller.runOnce()
      return minutes
    },

    /** @returns {Record<string, ReturnType<Roller['stats']>>} each roller's stats, by sink name */
    stats: () => Object.fromEntries([...rollers].map(([name, roller]) => [name, roller.stats()])),

    /**
     * Stops the runs and ends the HBase calls in flight at once: a minute cut short keeps its
     * marks and is counted again (by the next rollup process), so nothing waits for it, and the
     * shutdown budget goes to the workers' access logs. Idempotent.
     * @returns {Promise<void>}
     */
    close () {
      closing ||= (async () => {
        await Promise.all([...rollers.values()].map((roller) => roller.close()))
        await client.destroy()
      })()
      return closing
    }
  }
}

module.exports = { createRollupJob, keepsRollups }
