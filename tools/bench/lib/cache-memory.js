'use strict'

/**
 * What a full config cache weighs: the data plane's own LRU (lib/toggles/cache.js) filled with
 * `entries` entries as the HBase source builds them (lib/toggles/entry.js, from the toggles the
 * setup tool seeds: tools/dev-hbase/sample-data.js), in a fresh process of its own, its heap and RSS
 * measured before and after (after a full GC). The scale bench's load cases cannot fill a cache
 * of a million entries in minutes; this says what one costs when it is full.
 *
 *   node --expose-gc tools/bench/lib/cache-memory.js <entries>   → one JSON line
 */

const path = require('node:path')
const { spawn } = require('node:child_process')
const { toggles: { createConfigCache, configEntry } } = require('../../../index.js')
const { sampleConfig } = require('../../dev-hbase')
const { firstJsonLine, jsonJobMain } = require('./processes')

const MIB = 2 ** 20

/**
 * Fills a cache of `entries` entries in this process.
 * @param {number} entries
 * @returns {Promise<{ entries: number, size: number, heapMiB: number, rssMiB: number, bytesPerEntry: number }>}
 *   heapMiB / rssMiB: growth over the empty cache; bytesPerEntry: the heap's growth per entry
 */
async function fill (entries) {
  const gc = /** @type {any} */ (global).gc || (() => {})
  const stamp = Date.now()
  const source = { lookup: async (id) => configEntry(sampleConfig(Number(id)), 'h' + (stamp + Number(id)).toString(36), true) }
  const cache = createConfigCache({
    source, max: entries, ttlMs: 30000, staleWhileRevalidateMs: 300000, maxStaleMs: 3600000, negativeTtlMs: 5000
  })
  gc()
  const before = process.memoryUsage()
  for (let id = 1; id <= entries; id += 1000) {
    const lookups = []
    for (let k = id; k < Math.min(entries + 1, id + 1000); k++) lookups.push(cache.lookup(String(k)))
    await Promise.all(lookups)
  }
  gc()
  const after = process.memoryUsage()
  const heap = after.heapUsed - before.heapUsed
  return {
    entries,
    size: cache.stats().size,
    heapMiB: Math.round(heap / MIB),
    rssMiB: Math.round((after.rss - before.rss) / MIB),
    bytesPerEntry: Math.round(heap / entries)
  }
}

/**
 * Measures each size in a process of its own.
 * @param {number[]} sizes
 * @returns {Promise<Array<Awaited<ReturnType<typeof fill>>>>}
 */
async function cacheMemory (sizes) {
  const out = []
  for (const entries of sizes) {
    const child = spawn(process.execPath, ['--expose-gc', path.join(__dirname, 'cache-memory.js'), String(entries)],
      { stdio: ['ignore', 'pipe', 'inherit'] })
    out.push(await firstJsonLine(child, 300000, `cache memory (${entries})`))
  }
  return out
}

jsonJobMain(module, 'cache-memory', fill)

module.exports = { cacheMemory, fill }
