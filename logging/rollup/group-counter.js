'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')
const { PARTITIONS, partitionOfId } = require('./layout')
const { groupOfKey, qualifiersOf, OPEN_BRACKET } = require('./group-keys')

/**
 * Counts one minute's rows by group in bounded memory, whatever the number of distinct ids: at
 * most `maxGroups` keys are held at once. Past that they are spilled, as group qualifiers and
 * counts, to one file per partition (layout.js partitionOfId) in a folder of the process's own,
 * and each partition is then added up on its own; one too big for the bound is split again by
 * a hash of its groups, so a group is always added up in one place and the counts stay exact.
 * A minute that fits is counted in memory alone, as before partitions.
 */

const DEFAULT_MAX_GROUPS = 50000
// Depth at which a partition is added up whatever its size: only one group repeated over many
// spills is left by then, and it is one entry in memory.
const MAX_SPLITS = 3

/** The folder spills go to when the caller names none. */
const DEFAULT_SPILL_DIR = path.join(os.tmpdir(), 'beacon-rollup-spill')

/**
 * @typedef {object} PartitionCounts
 * @property {number} partition 0..PARTITIONS-1
 * @property {Map<string, number>} groups group qualifier → rows; a partition may come in
 *   several parts, each with groups no other part has
 */

/**
 * @param {{ maxGroups?: number, spillDir?: string, keep?: ((qualifier: string) => boolean)|null }} [options]
 *   keep: the groups the caller reads (default every one); the others go into the totals only,
 *   never to disk
 */
function createGroupCounter ({ maxGroups = DEFAULT_MAX_GROUPS, spillDir = DEFAULT_SPILL_DIR, keep = null } = {}) {
  /** @type {Map<string, number>} groupKeyOfValue() key → rows */
  let keys = new Map()
  /** @type {Map<string, number>} [endpoint, "*", class] → rows */
  const totals = new Map()
  /** @type {string|null} */
  let dir = null
  const lines = new Array(PARTITIONS).fill(0)
  let spills = 0

  /**
   * The held keys as group qualifiers, by partition; totals added up on the way.
   * @returns {Array<Map<string, number>>}
   */
  function byPartition () {
    const parts = Array.from({ length: PARTITIONS }, () => new Map())
    for (const [key, n] of keys) {
      const group = groupOfKey(key)
      const [qualifier, total] = qualifiersOf(group, key.charCodeAt(0) !== OPEN_BRACKET)
      totals.set(total, (totals.get(total) || 0) + n)
      if (keep !== null && !keep(qualifier)) continue
      const part = parts[partitionOfId(group.id)]
      part.set(qualifier, (part.get(qualifier) || 0) + n)
    }
    keys = new Map()
    return parts
  }

  /** Writes the held keys to the partitions' files and lets go of them. */
  async function spill () {
    const parts = byPartition()
    if (parts.every((part) => part.size === 0)) return
    if (!dir) {
      fs.mkdirSync(spillDir, { recursive: true, mode: 0o700 })
      dir = await fs.promises.mkdtemp(path.join(spillDir, `${process.pid}-`))
    }
    spills++
    for (let p = 0; p < PARTITIONS; p++) {
      if (parts[p].size === 0) continue
      await appendCounts(partitionFile(p), parts[p])
      lines[p] += parts[p].size
    }
  }

  /** @param {number} p @returns {string} */
  function partitionFile (p) {
    return path.join(/** @type {string} */ (dir), `p${p}`)
  }

  return {
    /**
     * @param {string} key a groupKeyOfValue() key
     * @param {number} [n]
     * @returns {Promise<void>|null} a spill to wait for (null: none was needed)
     */
    add (key, n = 1) {
      keys.set(key, (keys.get(key) || 0) + n)
      return keys.size >= maxGroups ? spill() : null
    },

    /** @returns {number} times the held keys went to disk */
    spills: () => spills,

    /**
     * The counts by partition, then the totals (complete once every partition has come).
     * Call once, after the last add().
     * @returns {AsyncGenerator<PartitionCounts>}
     */
    async * partitions () {
      if (!dir) {
        const parts = byPartition()
        for (let p = 0; p < PARTITIONS; p++) if (parts[p].size > 0) yield { partition: p, groups: parts[p] }
        return
      }
      await spill()
      for (let p = 0; p < PARTITIONS; p++) {
        if (lines[p] === 0) continue
        for await (const groups of addUp(partitionFile(p), lines[p], maxGroups, 0)) yield { partition: p, groups }
      }
    },

    /** @returns {Map<string, number>} the totals over ids, by endpoint and class */
    totals: () => totals,

    /** Removes the spill files (idempotent). */
    async close () {
      if (dir) await fs.promises.rm(dir, { recursive: true, force: true })
      dir = null
    }
  }
}

/**
 * One partition's file added up, split first by a hash of the group when it has more lines than
 * the bound.
 * @param {string} file
 * @param {number} lines
 * @param {number} maxGroups
 * @param {number} depth
 * @returns {AsyncGenerator<Map<string, number>>}
 */
async function * addUp (file, lines, maxGroups, depth) {
  if (lines <= maxGroups || depth >= MAX_SPLITS) {
    const groups = new Map()
    for await (const [qualifier, n] of readCounts(file)) groups.set(qualifier, (groups.get(qualifier) || 0) + n)
    yield groups
    return
  }
  const ways = Math.min(256, Math.ceil((2 * lines) / maxGroups))
  const parts = Array.from({ length: ways }, () => new Map())
  const counts = new Array(ways).fill(0)
  const flush = async () => {
    for (let w = 0; w < ways; w++) {
      if (parts[w].size === 0) continue
      await appendCounts(`${file}.${w}`, parts[w])
      counts[w] += parts[w].size
      parts[w] = new Map()
    }
  }
  let held = 0
  for await (const [qualifier, n] of readCounts(file)) {
    const part = parts[hashOf(qualifier, depth + 1) % ways]
    part.set(qualifier, (part.get(qualifier) || 0) + n)
    if (++held >= maxGroups) {
      await flush()
      held = 0
    }
  }
  await flush()
  await fs.promises.rm(file, { force: true })
  for (let w = 0; w < ways; w++) {
    if (counts[w] > 0) yield * addUp(`${file}.${w}`, counts[w], maxGroups, depth + 1)
  }
}

/**
 * @param {string} file
 * @param {Map<string, number>} counts qualifier → rows (a qualifier is JSON: no tab, no newline)
 */
async function appendCounts (file, counts) {
  let text = ''
  for (const [qualifier, n] of counts) text += `${qualifier}\t${n}\n`
  await fs.promises.appendFile(file, text, { mode: 0o600 })
}

/**
 * @param {string} file
 * @returns {AsyncGenerator<[string, number]>}
 */
async function * readCounts (file) {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })
  for await (const line of lines) {
    if (line === '') continue
    const tab = line.lastIndexOf('\t')
    yield [line.slice(0, tab), Number(line.slice(tab + 1))]
  }
}

/**
 * FNV-1a of a string, seeded: another split of the same groups at each depth.
 * @param {string} text @param {number} seed
 */
function hashOf (text, seed) {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/**
 * Removes the spill folders that processes no longer running left behind (a crash mid-count).
 * @param {string} [spillDir]
 */
function clearSpillLeftovers (spillDir = DEFAULT_SPILL_DIR) {
  let names = []
  try {
    names = fs.readdirSync(spillDir)
  } catch {
    return
  }
  for (const name of names) {
    const pid = Number(name.split('-')[0])
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      fs.rmSync(path.join(spillDir, name), { recursive: true, force: true })
    }
  }
}

/** @param {number} pid */
function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM'
  }
}

module.exports = { createGroupCounter, clearSpillLeftovers, DEFAULT_MAX_GROUPS, DEFAULT_SPILL_DIR }
