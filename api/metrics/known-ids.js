'use strict'

const client = require('prom-client')

/**
 * The known-id filter's series (lib/toggles/known-ids.js), read from its stats at scrape time:
 * the lookups it answered without an HBase read, its scans, and how many ids it holds. The
 * cluster primary sums each process's samples, except the age, where the oldest counts.
 * @param {client.Registry} register
 * @param {{ stats: () =>
 *   ReturnType<ReturnType<typeof import('../../lib/toggles/known-ids').createKnownIds>['stats']> }} knownIds
 */
function registerKnownIds (register, knownIds) {
  /** @param {string} name @param {string} help @param {(s: ReturnType<typeof knownIds.stats>) => number} read */
  const counter = (name, help, read) => {
    let last = 0
    new client.Counter({ // eslint-disable-line no-new -- registered, read at scrape time
      name,
      help,
      registers: [register],
      collect () {
        const n = read(knownIds.stats())
        this.inc(Math.max(0, n - last))
        last = n
      }
    })
  }
  counter('beacon_config_reads_skipped_total',
    'Config lookups answered the default without an HBase read: the id has no row, as the known-id filter says',
    (s) => s.skipped)
  counter('beacon_config_id_scans_total', 'Keys-only scans of the config table that filled the known-id filter',
    (s) => s.scans)
  counter('beacon_config_id_scan_failures_total', 'Scans of the config ids that failed (the last filter is kept)',
    (s) => s.scanFailures)
  new client.Gauge({ // eslint-disable-line no-new -- registered, read at scrape time
    name: 'beacon_config_known_ids',
    help: 'Ids in the known-id filter: those with a row at the last scan, and those changed through beacon since',
    registers: [register],
    collect () {
      this.set(knownIds.stats().ids)
    }
  })
  new client.Gauge({ // eslint-disable-line no-new -- registered, read at scrape time
    name: 'beacon_config_id_scan_age_seconds',
    help: 'Time since the last scan of the config ids ended (rows written around beacon are seen from the next); ' +
      '0 before the first',
    registers: [register],
    aggregator: 'max',
    collect () {
      const { ageMs } = knownIds.stats()
      if (ageMs !== null) this.set(ageMs / 1000)
    }
  })
}

module.exports = { registerKnownIds }
