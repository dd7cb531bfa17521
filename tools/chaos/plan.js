'use strict'

/**
 * The seeded side of the chaos run, pure so that it is tested without a JVM: the random number
 * generator, the choice of the next action, and where to split an access-log region.
 *
 * Like HBase's ChaosMonkey, one action at a time on a schedule; unlike its uniformly random
 * picks, each round deals the five kinds in a seeded shuffled order (a kind that cannot run now
 * stays in the deck for later), so that a short run still covers every kind.
 */

const { tables: { bucketPrefix } } = require('../../index.js')

/** What the driver can do (see driver.js for how each one runs). */
const KINDS = Object.freeze(['kill-rs', 'restart-rs', 'move-region', 'split-region', 'kill-master'])

/**
 * mulberry32: a small, fast 32-bit generator; the same seed gives the same sequence.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
function createRandom (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * @param {{ seed: number, minGapMs?: number, maxGapMs?: number }} options gaps between the starts
 *   of two actions, drawn uniformly
 * @returns {{ random: () => number, gap: () => number, between: (min: number, max: number) => number,
 *   choose: <T>(list: T[]) => T, pick: (eligible: Set<string>) => string|null }}
 */
function createPlan ({ seed, minGapMs = 10000, maxGapMs = 20000 }) {
  if (!Number.isInteger(seed)) throw new TypeError(`chaos: seed must be an integer (got ${seed})`)
  if (!(minGapMs > 0 && maxGapMs >= minGapMs)) throw new RangeError('chaos: need 0 < minGapMs <= maxGapMs')
  const random = createRandom(seed)
  const between = (min, max) => min + Math.floor(random() * (max - min + 1))
  /** @type {string[]} */
  let deck = []
  return {
    random,
    between,
    gap: () => between(minGapMs, maxGapMs),
    choose (list) {
      if (list.length === 0) throw new RangeError('chaos: nothing to choose from')
      return list[Math.floor(random() * list.length)]
    },
    /**
     * The next kind: the first eligible one of this round's deck (a new shuffled deck when the
     * round is over), else any eligible kind; null when none is.
     */
    pick (eligible) {
      if (deck.length === 0) deck = shuffle([...KINDS], random)
      const i = deck.findIndex((k) => eligible.has(k))
      if (i !== -1) return deck.splice(i, 1)[0]
      const any = KINDS.filter((k) => eligible.has(k))
      return any.length ? any[Math.floor(random() * any.length)] : null
    }
  }
}

function shuffle (list, random) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

/**
 * A row to split an access-log region at: the middle bucket boundary inside it when it spans
 * more than one salt bucket, else (within one bucket) the bucket prefix + the current time, so
 * that older entries stay below and new ones land above. Null when neither falls strictly inside.
 * @param {{ startKey: string, endKey: string }} region keys as strings ('' = open end)
 * @param {number} buckets salt buckets of the table (keys start with bucketPrefix(0..buckets-1))
 * @param {number} now epoch ms
 * @returns {string|null}
 */
function splitPoint ({ startKey, endKey }, buckets, now) {
  const bucketOf = (key) => parseInt(key.slice(0, 2), 16)
  // Bucket boundaries strictly inside (startKey, endKey).
  const lo = startKey ? bucketOf(startKey) + 1 : 1
  const hi = !endKey ? buckets - 1 : endKey.length > 2 ? bucketOf(endKey) : bucketOf(endKey) - 1
  if (lo <= hi) return bucketPrefix(Math.floor((lo + hi) / 2))
  const key = bucketPrefix(startKey ? bucketOf(startKey) : 0) + String(now).padStart(13, '0')
  return key > startKey && (!endKey || key < endKey) ? key : null
}

module.exports = { KINDS, createRandom, createPlan, splitPoint }
