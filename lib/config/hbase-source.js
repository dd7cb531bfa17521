'use strict'

const { configEntry, contentVersion } = require('./entry')
const { findCell, HBaseError } = require('../hbase')
const { createCircuitBreaker } = require('./breaker')

const MAX_IDS_PER_MULTI_GET = 500
const DEFAULT_MAX_IN_FLIGHT = 2

/**
 * Config source reading one JSON cell per id from HBase. Lookups made in the same turn of the
 * event loop are coalesced into one multi-get (one RPC per RegionServer) instead of one RPC
 * each, and an id asked for twice in that turn is read once. At most `maxInFlight` reads are
 * out at a time: under load, ids queue while they are, so batches grow with the load (fewer,
 * larger RPCs), while a lone request at low load is sent at once.
 *
 * An absent id resolves to the endpoint's default entry (found: false). A cell that is not a
 * JSON object is a data problem, not a client one: it is reported through `onInvalid` and the
 * default is served. Store errors reject (the cache layer decides whether stale data can serve).
 *
 * @param {object} options
 * @param {import('../hbase').HBaseClient} options.client
 * @param {string} options.table
 * @param {string} options.family
 * @param {string} options.qualifier
 * @param {object} options.defaultConfig value for absent ids
 * @param {number} [options.timeoutMs] deadline for one lookup, retries included
 * @param {(id: string, reason: string) => void} [options.onInvalid]
 * @param {number} [options.maxInFlight] concurrent store reads (default 2)
 * @param {ReturnType<typeof createCircuitBreaker>} [options.breaker] fails reads fast while the
 *   store keeps failing (default: opens after 3 failed reads in a row, for 1 s)
 * @param {(event: { ids: number, rpcs: number }) => void} [options.onBatch]
 * @returns {{ kind: 'hbase', lookup: (id: string) => Promise<import('./entry').ConfigEntry>, close: () => Promise<void> }}
 */
function createHBaseSource ({ client, table, family, qualifier, defaultConfig, timeoutMs, onInvalid, onBatch, maxInFlight = DEFAULT_MAX_IN_FLIGHT, breaker = createCircuitBreaker() }) {
  const defaultEntry = configEntry(defaultConfig, contentVersion('d', defaultConfig), false)
  const column = [`${family}:${qualifier}`]
  let queue = new Map() // id → [{ resolve, reject }]
  let scheduled = false
  let inFlight = 0

  function toEntry (id, row) {
    const cell = findCell(row, family, qualifier)
    if (!cell) return defaultEntry
    let value
    try {
      value = JSON.parse(cell.value.toString('utf8'))
    } catch {
      value = undefined
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      if (onInvalid) onInvalid(id, 'stored config is not a JSON object')
      return defaultEntry
    }
    return configEntry(value, 'h' + cell.timestamp.toString(36), true)
  }

  function settle (waiters, id, result) {
    if (result instanceof Error) {
      for (const w of waiters) w.reject(result)
      return
    }
    let entry
    try {
      entry = toEntry(id, result)
    } catch (err) {
      for (const w of waiters) w.reject(err)
      return
    }
    for (const w of waiters) w.resolve(entry)
  }

  function done () {
    inFlight--
    if (queue.size > 0 && !scheduled) schedule()
  }

  function schedule () {
    scheduled = true
    setImmediate(flush)
  }

  function flush () {
    scheduled = false
    if (queue.size === 0) return
    if (inFlight >= maxInFlight) return // done() sends the queue when a read comes back
    const batch = queue
    queue = new Map()
    const ids = [...batch.keys()]
    let rpcs = 0
    for (let from = 0; from < ids.length; from += MAX_IDS_PER_MULTI_GET) {
      const chunk = ids.slice(from, from + MAX_IDS_PER_MULTI_GET)
      if (!breaker.allow()) {
        const open = new HBaseError('HBASE_CIRCUIT_OPEN', 'config reads are failing fast: the store failed repeatedly and is being probed', { retryable: true })
        for (const id of chunk) settle(batch.get(id), id, open)
        continue
      }
      rpcs++
      inFlight++
      if (chunk.length === 1) {
        const id = chunk[0]
        client.get(table, id, { columns: column, timeout: timeoutMs })
          .then((row) => {
            breaker.success()
            settle(batch.get(id), id, row)
          }, (err) => {
            if (err.retryable) breaker.failure()
            settle(batch.get(id), id, err)
          })
          .finally(done)
      } else {
        client.multiGet(table, chunk, { columns: column, timeout: timeoutMs })
          .then((rows) => {
            if (rows.some((row) => row instanceof Error && row.retryable)) breaker.failure()
            else breaker.success()
            rows.forEach((row, i) => settle(batch.get(chunk[i]), chunk[i], row))
          }, (err) => chunk.forEach((id) => settle(batch.get(id), id, err)))
          .finally(done)
      }
    }
    if (onBatch) onBatch({ ids: ids.length, rpcs })
  }

  return {
    kind: 'hbase',
    defaultEntry,
    breaker,
    lookup (id) {
      return new Promise((resolve, reject) => {
        const waiters = queue.get(id)
        if (waiters) waiters.push({ resolve, reject })
        else queue.set(id, [{ resolve, reject }])
        if (!scheduled) schedule()
      })
    },
    close: async () => {}
  }
}

module.exports = { createHBaseSource }
