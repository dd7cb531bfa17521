'use strict'

const client = require('prom-client')

/**
 * The endpoints' config caches (lib/toggles/cache.js), read at scrape time: configs held, by
 * endpoint. The cluster primary sums the workers' samples, so the dashboard's count covers every
 * worker (an id two workers cache counts twice: that is what the host holds), where `/readyz`'s
 * `cachedConfigs` is the answering process's alone.
 * @param {client.Registry} register
 * @param {Map<string, { name: string, cache: { stats: () => { size: number } } | null }>} endpoints by path
 */
function registerConfigCaches (register, endpoints) {
  const cached = [...endpoints.values()].filter((endpoint) => endpoint.cache)
  if (cached.length === 0) return
  new client.Gauge({ // eslint-disable-line no-new -- registered, read at scrape time
    name: 'beacon_config_cache_entries',
    help: 'Configs (and remembered absent ids) held in the endpoint\'s LRU cache; the cluster\'s /metrics sums the workers',
    labelNames: ['endpoint'],
    registers: [register],
    collect () {
      for (const { name, cache } of cached) if (cache) this.set({ endpoint: name }, cache.stats().size)
    }
  })
}

module.exports = { registerConfigCaches }
