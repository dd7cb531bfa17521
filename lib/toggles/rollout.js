'use strict'

const crypto = require('node:crypto')
const { isSafeName } = require('../names')
const { configEntry } = require('./entry')

/**
 * A percentage rollout: for the ids of an endpoint that have no config row of their own, named
 * variants with weights and a config each.
 *
 * An id's variant is chosen by weighted rendezvous hashing: each variant scores the id with
 * -ln(u) / weight, u a uniform number from sha256(salt, variant name, id), and the lowest score
 * wins. So the choice is the same on every worker, host and restart (it depends on the rollout
 * and the id only); a variant gets a share of the ids equal to its share of the weights; and an
 * id moves from variant X to Y only when Y's weight grew against X's. Raising one variant's
 * weight (the others giving it their share) therefore never moves an id out of it: an id in B
 * at 10% is still in B at 20%. Adding a variant only takes ids into it; removing one spreads its
 * ids over the others. A cumulative split of one hash (`bucket < 90` is A) keeps that promise for
 * the last variant only: raising a middle one shifts every variant after it.
 *
 * sha256 rather than a fast non-cryptographic hash: the choice must not be steerable by picking
 * ids, and one choice per variant costs about a microsecond, paid only by ids without a row.
 *
 * @typedef {{ name: string, weight: number, config: Record<string, unknown> }} Variant
 * @typedef {{ salt: string, variants: Variant[] }} Rollout
 * @typedef {object} ActiveRollout a rollout as an endpoint serves it
 * @property {Rollout} rollout
 * @property {number|null} at when it was stored (epoch ms); null: from settings
 * @property {(id: string) => import('./entry').ConfigEntry} entryFor the entry an id without a row gets
 */

const MAX_SALT = 128
const MAX_VARIANTS = 32
const MAX_VARIANT_NAME = 64
/** Weights are percentages: their sum is 100, to within float rounding. */
const TOTAL_WEIGHT = 100
const WEIGHT_SLACK = 1e-9
/** u comes from the digest's first 48 bits: exact in a double, never 0 (ln 0) thanks to the + 1. */
const UNIFORM_BITS = 2 ** 48

/**
 * Checks a rollout as an operator wrote it and returns it normalized (only the known fields).
 * @param {unknown} value
 * @param {(config: unknown, path: string) => string|null} validateConfig the check every stored
 *   config passes (lib/toggles/validate.js): its first problem, or null
 * @returns {{ rollout: Rollout } | { error: string }} error: the first problem, naming the field
 */
function parseRollout (value, validateConfig) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'a rollout must be a JSON object' }
  const { salt, variants } = /** @type {Record<string, unknown>} */ (value)
  const extra = Object.keys(value).filter((k) => k !== 'salt' && k !== 'variants')
  if (extra.length) return { error: `a rollout has only salt and variants (not ${extra.join(', ')})` }
  if (typeof salt !== 'string' || salt.length === 0 || salt.length > MAX_SALT) {
    return { error: `salt must be a string of 1-${MAX_SALT} characters` }
  }
  if (!Array.isArray(variants) || variants.length === 0 || variants.length > MAX_VARIANTS) {
    return { error: `variants must be a list of 1-${MAX_VARIANTS} variants` }
  }
  /** @type {Variant[]} */
  const out = []
  const names = new Set()
  for (const [i, v] of variants.entries()) {
    const at = `variants[${i}]`
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: `${at} must be an object with name, weight and config` }
    const { name, weight, config } = v
    if (!isSafeName(name, MAX_VARIANT_NAME)) return { error: `${at}.name must be 1-${MAX_VARIANT_NAME} of A-Z a-z 0-9 _ -` }
    if (names.has(name)) return { error: `${at}.name ${name} is used twice` }
    names.add(name)
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0 || weight > TOTAL_WEIGHT) {
      return { error: `${at}.weight must be a number from 0 to ${TOTAL_WEIGHT} (a percentage)` }
    }
    const problem = validateConfig(config, `${at}.config`)
    if (problem) return { error: problem }
    out.push({ name, weight, config })
  }
  const total = out.reduce((sum, v) => sum + v.weight, 0)
  if (Math.abs(total - TOTAL_WEIGHT) > WEIGHT_SLACK) {
    return { error: `the variants' weights add up to ${total}, not ${TOTAL_WEIGHT}` }
  }
  return { rollout: { salt, variants: out } }
}

/**
 * @param {string} salt
 * @param {string} name the variant's
 * @param {string} id
 * @returns {number} uniform in (0, 1]
 */
function uniform (salt, name, id) {
  // Names and ids are safe names (no NUL), so the joined text is unambiguous.
  const digest = crypto.createHash('sha256').update(salt + '\0' + name + '\0' + id).digest()
  return (digest.readUIntBE(0, 6) + 1) / UNIFORM_BITS
}

/**
 * The variant of `id` under `rollout`: the same answer for the same rollout and id, anywhere.
 * @param {Rollout} rollout a parsed one (parseRollout)
 * @param {string} id
 * @returns {Variant|null} null only for a rollout whose weights are all 0 (parseRollout refuses those)
 */
function chooseVariant (rollout, id) {
  let best = null
  let bestScore = Infinity
  for (const v of rollout.variants) {
    if (v.weight === 0) continue
    const score = -Math.log(uniform(rollout.salt, v.name, id)) / v.weight
    if (score < bestScore) {
      bestScore = score
      best = v
    }
  }
  return best
}

/**
 * A rollout ready to serve: one entry per variant, made once (its config serialized, its ETag
 * `"<version>-<variant>"`), so an answer costs the choice only.
 * @param {Rollout} rollout a parsed one
 * @param {{ at: number|null, version?: string }} made at: when it was stored (epoch ms), null for
 *   one from settings; version: default `r<at in base 36>`
 * @returns {ActiveRollout}
 */
function activateRollout (rollout, { at, version = 'r' + (at ?? 0).toString(36) }) {
  const entries = new Map(rollout.variants.map((v) => [v.name, configEntry(v.config, `${version}-${v.name}`, false, v.name)]))
  return Object.freeze({
    rollout,
    at,
    entryFor: (id) => /** @type {import('./entry').ConfigEntry} */ (entries.get(/** @type {Variant} */ (chooseVariant(rollout, id)).name))
  })
}

module.exports = { parseRollout, chooseVariant, activateRollout, MAX_VARIANTS }
