'use strict'

const { flagsOf } = require('./flags')
const { reasonOf, evaluateAll, evaluateOne, disabledItems, disabledItem } = require('./evaluate')
const { renderBulk } = require('./responses')

/**
 * One endpoint's OFREP answers per config version: what the HTTP wiring calls once it has the
 * id's ConfigEntry (lib/toggles/entry.js) from the endpoint's `lookup`.
 *
 * The flags of an entry, and its rendered bulk answer (body and ETag), are computed on the
 * first request that needs them and kept in a WeakMap keyed by the entry: the cache hands out
 * the same frozen entry for a version until it changes, so, like the JSONP answer, a config is
 * mapped and serialized once per version, not per request; an entry the cache drops is
 * collected with its flags. (An endpoint without a cache gets a new entry per read, and pays
 * the mapping per request, as it pays the HBase read.)
 */

/**
 * @typedef {object} FlagSetOptions
 * @property {string} name the endpoint's name (flag-set metadata)
 * @property {string} source the endpoint's config source: 'fixed' or 'hbase'
 * @property {unknown} disabledConfig whose keys a disabled endpoint answers DISABLED for: its
 *   defaultConfig (for a fixed endpoint, the fixed value every id gets)
 * @property {import('./flags').FlagLimits} [limits]
 *
 * @typedef {object} EntryFlags
 * @property {ReadonlyArray<Readonly<import('./flags').Flag>>} flags
 * @property {string} reason
 * @property {Readonly<import('./responses').RenderedBulk>|null} bulk null until a bulk request needs it
 */

/**
 * @param {FlagSetOptions} options
 * @returns {{ bulk: (entry: import('../../lib/toggles/entry').ConfigEntry) => Readonly<import('./responses').RenderedBulk>,
 *   flag: (entry: import('../../lib/toggles/entry').ConfigEntry, key: string) => import('./evaluate').EvaluationItem|null,
 *   disabledBulk: () => Readonly<import('./responses').RenderedBulk>,
 *   disabledFlag: (key: string) => import('./evaluate').EvaluationItem }}
 */
function createFlagSets ({ name, source, disabledConfig, limits }) {
  /** @type {WeakMap<object, EntryFlags>} */
  const byEntry = new WeakMap()
  /** @type {Readonly<import('./responses').RenderedBulk>|null} */
  let disabled = null

  /** @returns {EntryFlags} */
  function of (entry) {
    let kept = byEntry.get(entry)
    if (kept === undefined) {
      // entry.json is the script-safe JSON of the config: still JSON, and `__proto__`-free.
      const flags = flagsOf(JSON.parse(entry.json), limits)
      const reason = reasonOf(source, entry.found)
      kept = { flags, reason, bulk: null }
      byEntry.set(entry, kept)
    }
    return kept
  }

  return {
    // Rendered on the first bulk request only: server providers ask one flag at a time.
    bulk (entry) {
      const kept = of(entry)
      if (kept.bulk === null) kept.bulk = renderBulk(evaluateAll(kept.flags, kept.reason), { endpoint: name, version: entry.version })
      return kept.bulk
    },
    flag (entry, key) {
      const { flags, reason } = of(entry)
      return evaluateOne(flags, key, reason)
    },
    // Switching an endpoint off and on is a runtime toggle: its DISABLED answer is built on the
    // first request that needs it, then kept (the config it lists is settings, fixed at start).
    disabledBulk () {
      if (disabled === null) disabled = renderBulk(disabledItems(disabledConfig, limits), { endpoint: name })
      return disabled
    },
    disabledFlag: disabledItem
  }
}

module.exports = { createFlagSets }
