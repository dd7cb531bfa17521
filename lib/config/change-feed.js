'use strict'

const { startPoller } = require('./poller')

// One reserved row (ids are [A-Za-z0-9_-], never '!') with a cell per recently changed id. The
// cell's timestamp is set by the RegionServer, so hosts compare HBase's clock, not their own.
const CHANGES_ROW = '!changes'

/**
 * Tells other app hosts which ids an admin changed, so their caches drop those ids within a
 * poll interval instead of waiting out the cache TTL. The host that makes a change invalidates
 * its own workers at once (cluster broadcast); this is for everyone else.
 *
 * @param {object} options
 * @param {import('../hbase').HBaseClient} options.client
 * @param {string} options.table the config table
 * @param {string} options.family its column family
 * @param {number} [options.timeoutMs]
 * @param {number} [options.retainMs] how long a change stays in the row (pruned on publish)
 */
function createChangeFeed ({ client, table, family, timeoutMs, retainMs = 10 * 60 * 1000 }) {
  async function readRow () {
    const row = await client.get(table, CHANGES_ROW, { families: [family], timeout: timeoutMs })
    return row ? row.cells : []
  }

  return {
    /**
     * Records that `id` changed; prunes entries older than `retainMs`.
     * @param {string} id
     */
    async publish (id) {
      await client.put(table, CHANGES_ROW, { [family]: { [id]: '1' } }, { timeout: timeoutMs })
      const cells = await readRow()
      const newest = Math.max(...cells.map((c) => Number(c.timestamp)))
      const old = cells.filter((c) => Number(c.timestamp) < newest - retainMs).map((c) => `${family}:${c.qualifier}`)
      if (old.length) await client.delete(table, CHANGES_ROW, { columns: old, timeout: timeoutMs })
    },

    /**
     * Ids changed after `watermark` (an HBase cell timestamp).
     * @param {number} watermark
     * @returns {Promise<{ ids: string[], watermark: number }>}
     */
    async since (watermark) {
      const ids = []
      let newest = watermark
      for (const cell of await readRow()) {
        const ts = Number(cell.timestamp)
        if (ts > watermark) ids.push(cell.qualifier)
        if (ts > newest) newest = ts
      }
      return { ids, watermark: newest }
    }
  }
}

/**
 * Polls the change feed and invalidates changed ids. The first read only sets the watermark:
 * a process that just started has nothing stale to drop.
 * @param {object} options
 * @param {ReturnType<typeof createChangeFeed>} options.feed
 * @param {(id: string) => void} options.invalidate
 * @param {number} options.intervalMs
 * @param {{ warn: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, stop: () => void }}
 */
function watchChangeFeed ({ feed, invalidate, intervalMs, logger }) {
  let watermark = null
  let failing = false

  async function poll () {
    try {
      const first = watermark === null
      const { ids, watermark: next } = await feed.since(first ? 0 : watermark)
      if (!first) for (const id of ids) invalidate(id)
      watermark = next
      failing = false
    } catch (err) {
      if (!failing && logger) logger.warn({ code: err.code, message: err.message }, 'cannot read the config change feed; cached configs expire by their TTL')
      failing = true
    }
  }

  return startPoller(poll, intervalMs)
}

module.exports = { createChangeFeed, watchChangeFeed, CHANGES_ROW }
