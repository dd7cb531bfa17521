'use strict'

const { flagsOf, findFlag } = require('./flags')

/**
 * Evaluation results (OFREP items `{key, value?, reason}`) from an id's flags, and the reason
 * each case gets (docs/openfeature.md, "Responses"):
 *
 * - TARGETING_MATCH: the id has a config of its own: its flags were chosen for it.
 * - SPLIT: the id has none and the endpoint's rollout chose a variant for it (lib/toggles/rollout.js);
 *   the item names the variant (`variant`).
 * - STATIC: the id has none and there is no rollout: it gets the endpoint's `defaultConfig`, the
 *   value every id without a row gets; or the endpoint's config is fixed (`source: fixed`):
 *   every id gets the same flags. (OpenFeature's DEFAULT is not in OFREP's reason enum.)
 * - DISABLED: the endpoint is switched off. The item has no value, so the client keeps the
 *   default written in its code, with reason DISABLED and no error.
 *
 * Never CACHED: beacon's cache is an implementation detail behind a fresh answer, and the web
 * provider sets CACHED itself when it answers from its own storage.
 */

const REASONS = Object.freeze({
  TARGETING_MATCH: 'TARGETING_MATCH',
  SPLIT: 'SPLIT',
  STATIC: 'STATIC',
  DISABLED: 'DISABLED'
})

/**
 * @typedef {{ key: string, value?: unknown, reason: string, variant?: string }} EvaluationItem
 */

/**
 * The reason of an enabled endpoint's answer.
 * @param {string} source the endpoint's config source: 'fixed' or 'hbase'
 * @param {boolean} found whether the id has a config of its own (ConfigEntry.found)
 * @param {string|null} [variant] the rollout variant it got (ConfigEntry.variant)
 * @returns {string}
 */
function reasonOf (source, found, variant = null) {
  if (source === 'fixed') return REASONS.STATIC
  if (found) return REASONS.TARGETING_MATCH
  return variant === null ? REASONS.STATIC : REASONS.SPLIT
}

/**
 * @param {Readonly<import('./flags').Flag>} flag
 * @param {string} reason
 * @param {string|null} variant the rollout variant, named in the item when there is one
 * @returns {EvaluationItem} without `value` for a code-default flag
 */
function itemOf (flag, reason, variant) {
  /** @type {EvaluationItem} */
  const item = flag.value === undefined ? { key: flag.key, reason } : { key: flag.key, value: flag.value, reason }
  if (variant !== null) item.variant = variant
  return item
}

/**
 * Every flag of a config, evaluated: the items of a bulk answer.
 * @param {ReadonlyArray<Readonly<import('./flags').Flag>>} flags from flagsOf
 * @param {string} reason from reasonOf
 * @param {string|null} [variant] the rollout variant (ConfigEntry.variant)
 * @returns {EvaluationItem[]}
 */
function evaluateAll (flags, reason, variant = null) {
  return flags.map((flag) => itemOf(flag, reason, variant))
}

/**
 * One flag, evaluated: the item of a single-flag answer, or null when the config has no such key.
 * @param {ReadonlyArray<Readonly<import('./flags').Flag>>} flags from flagsOf
 * @param {string} key the decoded key (request.js parseFlagKey)
 * @param {string} reason from reasonOf
 * @param {string|null} [variant] the rollout variant (ConfigEntry.variant)
 * @returns {EvaluationItem|null}
 */
function evaluateOne (flags, key, reason, variant = null) {
  const flag = findFlag(flags, key)
  return flag === undefined ? null : itemOf(flag, reason, variant)
}

/**
 * A disabled endpoint's bulk items: one `{key, reason: "DISABLED"}` for every flag of the config
 * its unknown ids would get (its defaultConfig; for a fixed endpoint, its fixed value), so a
 * client learns the keys and keeps its code defaults for all of them.
 * @param {unknown} config
 * @param {import('./flags').FlagLimits} [limits]
 * @returns {EvaluationItem[]}
 */
function disabledItems (config, limits) {
  return flagsOf(config, limits).map((flag) => disabledItem(flag.key))
}

/**
 * A disabled endpoint's answer to one key, whatever the key: a disabled endpoint reads no config.
 * @param {string} key
 * @returns {EvaluationItem}
 */
function disabledItem (key) {
  return { key, reason: REASONS.DISABLED }
}

module.exports = { REASONS, reasonOf, evaluateAll, evaluateOne, disabledItems, disabledItem }
