'use strict'

const { flagsOf, findFlag } = require('./flags')

/**
 * Evaluation results (OFREP items `{key, value?, reason}`) from an id's flags, and the reason
 * each case gets (docs/openfeature.md, "Responses"):
 *
 * - TARGETING_MATCH: the id has a config of its own: its flags were chosen for it.
 * - DEFAULT: the id has none and gets the endpoint's `defaultConfig`. OpenFeature's meaning
 *   ("the value fell back to a pre-configured value"), as in OFREP's ADR-0006 example; the 0.3.0
 *   `reason` enum does not list it, but the JS providers pass any reason through, and STATIC
 *   would claim the value is the same for every id, which the next config write can change.
 * - STATIC: the endpoint's config is fixed (`source: fixed`): every id gets the same flags.
 * - DISABLED: the endpoint is switched off. The item has no value, so the client keeps the
 *   default written in its code, with reason DISABLED and no error.
 *
 * Never CACHED: beacon's cache is an implementation detail behind a fresh answer, and the web
 * provider sets CACHED itself when it answers from its own storage.
 */

const REASONS = Object.freeze({
  TARGETING_MATCH: 'TARGETING_MATCH',
  DEFAULT: 'DEFAULT',
  STATIC: 'STATIC',
  DISABLED: 'DISABLED'
})

/**
 * @typedef {{ key: string, value?: unknown, reason: string }} EvaluationItem
 */

/**
 * The reason of an enabled endpoint's answer.
 * @param {string} source the endpoint's config source: 'fixed' or 'hbase'
 * @param {boolean} found whether the id has a config of its own (ConfigEntry.found)
 * @returns {string}
 */
function reasonOf (source, found) {
  if (source === 'fixed') return REASONS.STATIC
  return found ? REASONS.TARGETING_MATCH : REASONS.DEFAULT
}

/**
 * @param {Readonly<import('./flags').Flag>} flag
 * @param {string} reason
 * @returns {EvaluationItem} without `value` for a code-default flag
 */
function itemOf (flag, reason) {
  return flag.value === undefined ? { key: flag.key, reason } : { key: flag.key, value: flag.value, reason }
}

/**
 * Every flag of a config, evaluated: the items of a bulk answer.
 * @param {ReadonlyArray<Readonly<import('./flags').Flag>>} flags from flagsOf
 * @param {string} reason from reasonOf
 * @returns {EvaluationItem[]}
 */
function evaluateAll (flags, reason) {
  return flags.map((flag) => itemOf(flag, reason))
}

/**
 * One flag, evaluated: the item of a single-flag answer, or null when the config has no such key.
 * @param {ReadonlyArray<Readonly<import('./flags').Flag>>} flags from flagsOf
 * @param {string} key the decoded key (request.js parseFlagKey)
 * @param {string} reason from reasonOf
 * @returns {EvaluationItem|null}
 */
function evaluateOne (flags, key, reason) {
  const flag = findFlag(flags, key)
  return flag === undefined ? null : itemOf(flag, reason)
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
