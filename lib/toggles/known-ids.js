'use strict'

const { createBloomFilter } = require('./bloom')

const DEFAULT_FALSE_POSITIVE_RATE = 0.01
const DEFAULT_MIN_CAPACITY = 100000
// A scan takes at most this share of the time between two, so a big table costs HBase little.
const MAX_SCAN_SHARE = 0.1

/**
 * Which ids have a row of their own in the config table, so that a lookup of any other id is
 * answered the endpoint's default without an HBase read: a flood of new visitor ids or random
 * bot ids then costs HBase nothing. Kept in a Bloom filter (./bloom.js): an id it holds may still
 * have no row (about `falsePositiveRate` of the others; those are read, as before), an id it
 * does not hold has none.
 *
 * The filter is filled by a keys-only scan of the table, again every `rescanMs` (and never more
 * often than a scan takes ten times over), and an id whose config changes through beacon is
 * added at once (`add`, from the change propagation: this host's broadcast and other hosts' change
 * feed), also while a scan runs. So a row written through beacon is read from its first lookup,
 * and one written around it (HBase shell, a bulk load) from the end of the next scan. Until the
 * first scan is done every id is read; a failed scan keeps the last filter.
 *
 * @param {object} options
 * @param {{ scanIds: () => AsyncIterable<string[]> }} options.store the toggle store (./store.js)
 * @param {number} options.rescanMs time from the end of one scan to the start of the next
 * @param {number} [options.falsePositiveRate] of ids with no row, the share still read (default 0.01)
 * @param {number} [options.minCapacity] ids the filter is first sized for (default 100,000)
 * @param {{ warn: Function, info: Function }} [options.logger]
 * @param {() => number} [options.now] monotonic ms clock (tests)
 */
function createKnownIds ({
  store, rescanMs, falsePositiveRate = DEFAULT_FALSE_POSITIVE_RATE, minCapacity = DEFAULT_MIN_CAPACITY, logger,
  now = performance.now.bind(performance)
}) {
  /** @type {ReturnType<typeof createBloomFilter>|null} */
  let filter = null
  /** @type {Set<string>|null} ids added while a scan runs: the scan may have passed their rows */
  let addedDuringScan = null
  /** @type {Promise<void>|null} */
  let scanning = null
  /** @type {NodeJS.Timeout|null} */
  let timer = null
  let stopped = false
  let failing = false
  const counts = { skipped: 0, scans: 0, scanFailures: 0, lastScanMs: 0, lastScanIds: 0, lastScanAt: -1 }

  async function fill () {
    const started = now()
    addedDuringScan = new Set()
    const next = createBloomFilter({ capacity: Math.max(minCapacity, 2 * counts.lastScanIds), falsePositiveRate })
    let ids = 0
    try {
      for await (const page of store.scanIds()) {
        if (stopped) return
        for (const id of page) next.add(id)
        ids += page.length
      }
      for (const id of addedDuringScan) next.add(id)
      filter = next
      Object.assign(counts, {
        scans: counts.scans + 1,
        lastScanMs: now() - started,
        lastScanIds: ids,
        lastScanAt: now()
      })
      if (failing && logger) logger.info({ ids }, 'config ids scanned again')
      failing = false
    } catch (err) {
      counts.scanFailures++
      if (!failing && logger) {
        logger.warn({
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
          message: /** @type {Error} */ (err).message
        }, filter
          ? 'cannot scan the config ids; keeping the last scan'
          : 'cannot scan the config ids; reading every id')
      }
      failing = true
    } finally {
      addedDuringScan = null
    }
  }

  function scan () {
    if (!scanning) scanning = fill().finally(() => { scanning = null })
    return scanning
  }

  function scheduleNext () {
    if (stopped) return
    timer = setTimeout(() => scan().then(scheduleNext), Math.max(rescanMs, counts.lastScanMs / MAX_SCAN_SHARE))
    timer.unref()
  }

  return {
    /**
     * False only when `id` has no row (as of the last scan and the changes since).
     * @param {string} id
     * @returns {boolean}
     */
    mayExist (id) {
      if (filter === null || filter.has(id)) return true
      counts.skipped++
      return false
    },
    /**
     * An id whose config changed through beacon: read from its next lookup on.
     * @param {string} id
     */
    add (id) {
      if (filter) filter.add(id)
      if (addedDuringScan) addedDuringScan.add(id)
    },
    /** One scan now (a scan already running is joined). @returns {Promise<void>} never rejects */
    scan,
    /** Scans now and then every `rescanMs`. @returns {Promise<void>} the first scan is done (or failed) */
    start () {
      return scan().then(scheduleNext)
    },
    /** Stops rescanning; a scan under way ends at its next page. @returns {Promise<void>} */
    async stop () {
      stopped = true
      if (timer) clearTimeout(timer)
      await scanning
    },
    stats: () => ({
      ready: filter !== null,
      ids: filter ? filter.size() : 0,
      bytes: filter ? filter.bytes() : 0,
      ...counts,
      ageMs: counts.lastScanAt < 0 ? null : now() - counts.lastScanAt
    })
  }
}

module.exports = { createKnownIds }
