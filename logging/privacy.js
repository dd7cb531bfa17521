'use strict'

const crypto = require('node:crypto')
const { truncateAddress, hashAddress } = require('./ip-address')
const { ERRORS } = require('../lib/errors')

/**
 * What the access log stores of a client, per sink (`logSinks.<name>.privacy`): the address in
 * full, cut to its network, hashed with a daily key, or not at all; the user agent or not; and
 * nothing of either for a request that opted out (`Sec-GPC: 1`, `DNT: 1`) when the operator
 * honours that. The row itself is always written, so counts stay exact.
 *
 * Entries are shared by every sink of an endpoint, so nothing here changes one: a sink whose
 * settings keep less gets a copy, made once per distinct policy (groupSinks, writeEntry).
 * When every sink keeps everything (the default) there is no policy at all and the request
 * path does one null check. What is stored is a pure function of (ip, ua, opt-out, the entry's
 * ts), so it can as well run before an entry is encoded.
 */

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * @typedef {{ ip: 'full'|'truncate'|'hash'|'none', userAgent: 'full'|'none', honorOptOut: boolean }} PrivacySettings
 * @typedef {{ keyFor: (ts: number) => Buffer|null }} HashKeys
 * @typedef {object} PrivacyPolicy
 * @property {string} key the settings it applies, one policy per distinct key
 * @property {(ip: string|null, ts: number, optOut: boolean) => string|null} ip what is stored of an address
 * @property {(ua: string|null, optOut: boolean) => string|null} ua what is stored of a user agent
 * @property {<T extends { ip: string|null, ua: string|null, ts: number }>(entry: T, optOut: boolean) => T} apply
 *   a copy of the entry (same keys, same order) with what is stored
 * @typedef {{ policy: PrivacyPolicy|null, sinks: Array<{ write: (entry: object) => void }> }} SinkGroup
 */

/**
 * @param {PrivacySettings|undefined} settings
 * @returns {boolean} the sink stores entries as they are
 */
function keepsEverything (settings) {
  return !settings || (settings.ip === 'full' && settings.userAgent === 'full' && !settings.honorOptOut)
}

/**
 * @param {PrivacySettings|undefined} settings one sink's
 * @param {{ hashKeys?: HashKeys }} [deps] hashKeys: needed when `ip` is `hash`
 * @returns {PrivacyPolicy|null} null: store entries as they are
 */
function createPrivacyPolicy (settings, { hashKeys } = {}) {
  if (keepsEverything(settings)) return null
  const { ip: ipMode, userAgent, honorOptOut } = /** @type {PrivacySettings} */ (settings)
  if (ipMode === 'hash' && !hashKeys) throw new ERRORS.INVALID_OPTION('privacy.ip "hash" needs hashKeys')
  const maskIp = addressMask(ipMode, hashKeys)
  const keepUa = userAgent === 'full'
  /** @type {PrivacyPolicy['ip']} */
  const ip = (address, ts, optOut) => (honorOptOut && optOut ? null : maskIp(address, ts))
  /** @type {PrivacyPolicy['ua']} */
  const ua = (agent, optOut) => (keepUa && !(honorOptOut && optOut) ? agent : null)
  return {
    key: `${ipMode}/${userAgent}/${honorOptOut}`,
    ip,
    ua,
    apply (entry, optOut) {
      const stored = { ...entry }
      stored.ip = ip(entry.ip, entry.ts, optOut)
      stored.ua = ua(entry.ua, optOut)
      return stored
    }
  }
}

/**
 * @param {PrivacySettings['ip']} mode
 * @param {HashKeys|undefined} hashKeys
 * @returns {(ip: string|null, ts: number) => string|null}
 */
function addressMask (mode, hashKeys) {
  switch (mode) {
    case 'truncate': return (ip) => truncateAddress(ip)
    case 'hash': {
      const keys = /** @type {HashKeys} */ (hashKeys) // createPrivacyPolicy() throws without them
      return (ip, ts) => hashAddress(ip, keys.keyFor(ts))
    }
    case 'none': return () => null
    default: return (ip) => (ip == null ? null : ip)
  }
}

/**
 * The policy of each sink, one object per distinct setting (so groupSinks can tell them apart).
 * @param {Record<string, { privacy?: PrivacySettings }>} sinkSettings name → settings
 * @param {{ hashKeys?: HashKeys }} [deps]
 * @returns {Map<string, PrivacyPolicy|null>} sink name → its policy (null: keeps everything)
 */
function createSinkPolicies (sinkSettings, deps) {
  const byKey = new Map()
  const policies = new Map()
  for (const [name, spec] of Object.entries(sinkSettings)) {
    let policy = createPrivacyPolicy(spec.privacy, deps)
    if (policy !== null) {
      if (!byKey.has(policy.key)) byKey.set(policy.key, policy)
      policy = byKey.get(policy.key)
    }
    policies.set(name, policy)
  }
  return policies
}

/**
 * @param {Record<string, { privacy?: PrivacySettings }>} sinkSettings
 * @returns {boolean} some sink hashes addresses (the daily keys' secret must be loaded)
 */
function needsHashKeys (sinkSettings) {
  return Object.values(sinkSettings).some((spec) => spec.privacy && spec.privacy.ip === 'hash')
}

/**
 * An endpoint's sinks grouped by policy, for writeEntry.
 * @param {Array<{ write: (entry: object) => void }>} sinks
 * @param {Array<PrivacyPolicy|null>} policies the policy of each sink, in the same order
 * @returns {SinkGroup[]|null} null when every sink keeps everything: write the entry as it is
 */
function groupSinks (sinks, policies) {
  if (policies.every((p) => p === null)) return null
  /** @type {Map<PrivacyPolicy|null, SinkGroup>} */
  const groups = new Map()
  sinks.forEach((sink, i) => {
    const policy = policies[i]
    if (!groups.has(policy)) groups.set(policy, { policy, sinks: [] })
    const group = /** @type {SinkGroup} */ (groups.get(policy)) // set just above if it was not
    group.sinks.push(sink)
  })
  return [...groups.values()]
}

/**
 * @param {Record<string, string|string[]|undefined>} headers request headers (lower-case names)
 * @returns {boolean} the client asked not to be tracked: `Sec-GPC: 1` (Global Privacy Control)
 *   or `DNT: 1` (Do Not Track)
 */
function optedOut (headers) {
  return headers['sec-gpc'] === '1' || headers.dnt === '1'
}

/**
 * Hands an entry to an endpoint's sinks. With no privacy policy among them (`groups` null, the
 * default) that is one check and the loop: nothing is read from the headers, nothing allocated.
 * Otherwise each group gets what its policy stores, built once for the group.
 * @param {Array<{ write: (entry: object) => void }>} sinks all of them
 * @param {SinkGroup[]|null|undefined} groups the same sinks, from groupSinks
 * @param {{ ip: string|null, ua: string|null, ts: number }} entry
 * @param {Record<string, string|string[]|undefined>} headers the request's
 * @returns {void}
 */
function writeEntry (sinks, groups, entry, headers) {
  if (!groups) {
    for (let i = 0; i < sinks.length; i++) sinks[i].write(entry)
    return
  }
  const optOut = optedOut(headers)
  for (let g = 0; g < groups.length; g++) {
    const { policy, sinks: own } = groups[g]
    const stored = policy === null ? entry : policy.apply(entry, optOut)
    for (let i = 0; i < own.length; i++) own[i].write(stored)
  }
}

/**
 * The daily keys of hashed addresses: HMAC-SHA256(secret, UTC day of the entry's ts). Every
 * host holding the secret derives the same key for a day with no coordination at midnight,
 * and a day's key tells nothing of another day's. Only the current day's key is held; until
 * setSecret is called keyFor gives null (hashed addresses are stored as null meanwhile).
 * Neither the secret nor a key is ever logged or shown: nothing here reports them.
 * @returns {HashKeys & { setSecret: (secret: Buffer) => void }}
 */
function createHashKeys () {
  /** @type {Buffer|null} */
  let secret = null
  let day = NaN
  /** @type {Buffer|null} */
  let key = null
  return {
    setSecret (value) {
      if (!Buffer.isBuffer(value) || value.length < 16) {
        throw new ERRORS.INVALID_OPTION('the hash secret must be a Buffer of at least 16 bytes')
      }
      secret = value
      day = NaN
      key = null
    },
    keyFor (ts) {
      // Outside Date's range (±8.64e15 ms) a day has no name: no key rather than a throw.
      if (secret === null || !(Math.abs(ts) <= 8.64e15)) return null
      const d = Math.floor(ts / DAY_MS)
      if (d !== day) {
        const name = new Date(d * DAY_MS).toISOString().slice(0, 10) // 2026-11-25
        key = crypto.createHmac('sha256', secret).update('beacon access-log ip key ' + name).digest()
        day = d
      }
      return key
    }
  }
}

module.exports = {
  createPrivacyPolicy,
  createSinkPolicies,
  needsHashKeys,
  groupSinks,
  writeEntry,
  optedOut,
  createHashKeys
}
