'use strict'

const { OFREP_LIMITS } = require('./limits')

/**
 * How an id's config becomes OpenFeature flags (docs/openfeature.md, "How beacon maps a config
 * to flags"). Every member of the config object is a flag under its own name; a member whose
 * value is an object is an object flag, and its members are flags too, under dotted keys, down
 * to `maxDepth` segments:
 *
 *   {"features":{"search":true,"ui":{"theme":"dark"}}}
 *   → features (object), features.search (boolean), features.ui (object), features.ui.theme (string)
 *
 * Values are served as the config holds them. `null` is a flag without a value: OFREP's
 * code-default flag, for which the client uses the default written in its code (an explicit
 * `null` would be a TYPE_MISMATCH for every type but object).
 *
 * Two paths can give the same key (a member literally named "features.search" beside the
 * features object). The shorter path wins, so a literal key beats a derived one; between paths
 * of the same length the first in config order wins. A key that loses is not a flag, and
 * neither is anything below it: a shadowed object is not expanded.
 *
 * Not flags: members named "" (the single-flag path cannot name them) or "__proto__" (beacon
 * never serves them, see lib/toggles/script-json.js), keys over `maxKeyLength`, and anything
 * past `maxFlags`. The config is walked a level at a time, so when the cap cuts, the flags kept
 * are those nearest the top. The walk is iterative and never throws, whatever JSON it gets; a
 * config that is not an object (an array, a string, null) has no flags.
 */

/**
 * A flag: its key and value; `value` undefined means "use the code default".
 * @typedef {{ key: string, value: unknown }} Flag
 * @typedef {{ maxDepth?: number, maxFlags?: number, maxKeyLength?: number }} FlagLimits
 */

/**
 * Whether a JSON value is an object (not an array, not null): what has members to expand.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject (value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * The flags of a config, in config order with every object flag before the flags below it.
 * @param {unknown} config an id's config (parsed JSON)
 * @param {FlagLimits} [limits] defaults: api/public/ofrep/limits.js
 * @returns {ReadonlyArray<Readonly<Flag>>} frozen
 */
function flagsOf (config, limits = {}) {
  const {
    maxDepth = OFREP_LIMITS.maxDepth,
    maxFlags = OFREP_LIMITS.maxFlags,
    maxKeyLength = OFREP_LIMITS.maxKeyLength
  } = limits
  /** @type {Map<string, { flag: Readonly<Flag>, path: number[] }>} key → flag and its position */
  const kept = new Map()
  if (!isObject(config)) return Object.freeze([])
  // Breadth first: a key met earlier is on a path at most as long, so "first wins" is the rule.
  /** @type {{ prefix: string, value: Record<string, unknown>, path: number[] }[]} */
  let level = [{ prefix: '', value: config, path: [] }]
  for (let depth = 1; depth <= maxDepth && level.length > 0; depth++) {
    const next = []
    for (const parent of level) {
      const names = Object.keys(parent.value)
      for (let i = 0; i < names.length; i++) {
        const name = names[i]
        if (name === '' || name === '__proto__') continue
        const key = parent.prefix + name
        if (key.length > maxKeyLength || kept.has(key)) continue
        if (kept.size >= maxFlags) return ordered(kept)
        const value = parent.value[name]
        const path = [...parent.path, i]
        kept.set(key, { flag: Object.freeze({ key, value: value === null ? undefined : value }), path })
        if (isObject(value)) next.push({ prefix: key + '.', value, path })
      }
    }
    level = next
  }
  return ordered(kept)
}

/**
 * The kept flags in depth-first order: by their path of member positions, so a parent (a
 * prefix of its children's paths) comes right before its own leaves.
 * @param {Map<string, { flag: Readonly<Flag>, path: number[] }>} kept
 * @returns {ReadonlyArray<Readonly<Flag>>}
 */
function ordered (kept) {
  const entries = [...kept.values()].sort((a, b) => comparePaths(a.path, b.path))
  return Object.freeze(entries.map((e) => e.flag))
}

/** @param {number[]} a @param {number[]} b @returns {number} */
function comparePaths (a, b) {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

// One index per flag list, built on the first lookup: a list is frozen and shared per config
// version (the caller keeps it), so the single-flag path pays a Map lookup, not a scan.
/** @type {WeakMap<ReadonlyArray<Readonly<Flag>>, Map<string, Readonly<Flag>>>} */
const INDEXES = new WeakMap()

/**
 * The flag of `key` in a list from flagsOf.
 * @param {ReadonlyArray<Readonly<Flag>>} flags
 * @param {string} key
 * @returns {Readonly<Flag>|undefined}
 */
function findFlag (flags, key) {
  let index = INDEXES.get(flags)
  if (index === undefined) {
    index = new Map(flags.map((flag) => [flag.key, flag]))
    INDEXES.set(flags, index)
  }
  return index.get(key)
}

module.exports = { flagsOf, findFlag, isObject }
