'use strict'

const { startPoller } = require('./poller')

const RETAIN_MS = 10 * 60 * 1000

/**
 * The config change feed: tells other app hosts which ids an admin changed, so their caches
 * drop those ids within a poll interval instead of waiting out the cache TTL. The host that
 * makes a change invalidates its own workers at once (cluster broadcast); this is for everyone
 * else. The feed is a reserved row of the config table (toggle store); its cells carry the
 * RegionServer's timestamps, so hosts compare HBase's clock, not their own.
 */

/**
 * Records a change; entries older than `retainMs` are pruned on the way.
 * @param {{ recordChange: (id: string, retainMs: number) => Promise<void> }} store
 * @param {string} id
 * @param {number} [retainMs]
 * @returns {Promise<void>}
 */
function publishChange (store, id, retainMs = RETAIN_MS) {
  return store.recordChange(id, retainMs)
}

/**
 * Polls the feed and invalidates changed ids. The first read only sets the watermark: a
 * process that just started has nothing stale to drop.
 * @param {object} options
 * @param {{ readChanges: () => Promise<Array<{ id: string, at: number }>> }} options.store
 * @param {(id: string, at: number) => void} options.invalidate given when the change was recorded
 *   (the RegionServer's timestamp, epoch ms)
 * @param {number} options.intervalMs
 * @param {{ warn: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, stop: () => void }}
 */
function watchChangeFeed ({ store, invalidate, intervalMs, logger }) {
  /** @type {number|null} */
  let watermark = null
  let failing = false

  async function poll () {
    try {
      const changes = await store.readChanges()
      let newest = watermark ?? 0
      for (const { id, at } of changes) {
        if (watermark !== null && at > watermark) invalidate(id, at)
        if (at > newest) newest = at
      }
      watermark = newest
      failing = false
    } catch (err) {
      if (!failing && logger) {
        logger.warn({
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
          message: /** @type {Error} */ (err).message
        }, 'cannot read the config change feed; cached configs expire by their TTL')
      }
      failing = true
    }
  }

  return startPoller(poll, intervalMs)
}

module.exports = { publishChange, watchChangeFeed }
