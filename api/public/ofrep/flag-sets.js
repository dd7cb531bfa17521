'use strict'

const { flagsOf } = require('./flags')
const { reasonOf, evaluateAll, evaluateOne, disabledItems, disabledItem } = require('./evaluate')
const { renderBulk, withEventStreams } = require('./responses')

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
 *
 * A bulk answer with a change stream also names the id (and a keyed endpoint's token) in its
 * `eventStreams`, so the last such answer is kept beside the entry's: an entry is one id's
 * version, so it is the one asked for again, and the unknown ids that share the default entry
 * cost a string join and a hash each.
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
 * @property {string|null} variant the rollout variant the entry is
 * @property {Readonly<import('./responses').RenderedBulk>|null} bulk null until a bulk request needs it
 * @property {Linked|null} linked the last answer with eventStreams
 *
 * @typedef {{ streams: string, rendered: Readonly<import('./responses').RenderedBulk> }} Linked
 */

/**
 * @param {FlagSetOptions} options
 * @returns {{ bulk: (entry: import('../../../lib/toggles/entry').ConfigEntry, streams?: string|null) =>
 *     Readonly<import('./responses').RenderedBulk>,
 *   flag: (entry: import('../../../lib/toggles/entry').ConfigEntry, key: string) =>
 *     import('./evaluate').EvaluationItem|null,
 *   disabledBulk: (streams?: string|null) => Readonly<import('./responses').RenderedBulk>,
 *   disabledFlag: (key: string) => import('./evaluate').EvaluationItem }}
 */
function createFlagSets ({ name, source, disabledConfig, limits }) {
  /** @type {WeakMap<object, EntryFlags>} */
  const byEntry = new WeakMap()
  /** @type {Readonly<import('./responses').RenderedBulk>|null} */
  let disabled = null
  /** @type {Linked|null} */
  let disabledLinked = null

  /**
   * @param {import('../../../lib/toggles/entry').ConfigEntry} entry
   * @returns {EntryFlags}
   */
  function of (entry) {
    let kept = byEntry.get(entry)
    if (kept === undefined) {
      // entry.json is the script-safe JSON of the config: still JSON, and `__proto__`-free.
      const flags = flagsOf(JSON.parse(entry.json), limits)
      const variant = entry.variant ?? null
      const reason = reasonOf(source, entry.found, variant)
      kept = { flags, reason, variant, bulk: null, linked: null }
      byEntry.set(entry, kept)
    }
    return kept
  }

  /**
   * @param {Readonly<import('./responses').RenderedBulk>} rendered
   * @param {string|null} streams the eventStreams JSON (api/public/ofrep/stream-link.js)
   * @param {Linked|null} last
   * @param {(linked: Linked) => void} keep
   */
  function linked (rendered, streams, last, keep) {
    if (streams === null) return rendered
    if (last !== null && last.streams === streams) return last.rendered
    const next = { streams, rendered: withEventStreams(rendered, streams) }
    keep(next)
    return next.rendered
  }

  return {
    // Rendered on the first bulk request only: server providers ask one flag at a time.
    bulk (entry, streams = null) {
      const kept = of(entry)
      if (kept.bulk === null) {
        kept.bulk = renderBulk(evaluateAll(kept.flags, kept.reason, kept.variant), { endpoint: name, version: entry.version })
      }
      return linked(kept.bulk, streams, kept.linked, (next) => { kept.linked = next })
    },
    flag (entry, key) {
      const { flags, reason, variant } = of(entry)
      return evaluateOne(flags, key, reason, variant)
    },
    // Switching an endpoint off and on is a runtime toggle: its DISABLED answer is built on the
    // first request that needs it, then kept (the config it lists is settings, fixed at start).
    disabledBulk (streams = null) {
      if (disabled === null) disabled = renderBulk(disabledItems(disabledConfig, limits), { endpoint: name })
      return linked(disabled, streams, disabledLinked, (next) => { disabledLinked = next })
    },
    disabledFlag: disabledItem
  }
}

module.exports = { createFlagSets }
