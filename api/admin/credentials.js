'use strict'

const crypto = require('node:crypto')
const { ERRORS } = require('../../lib/errors')
const { isSafeName } = require('../../lib/names')
const { MIN_TOKEN_CHARS } = require('../../config/schema')

/** The name of the single token of BEACON_ADMIN_TOKEN (or its file): the actor of its changes. */
const DEFAULT_ACTOR = 'default'
const MAX_ACTOR = 64

/**
 * The admin API's credentials: the single token of today (BEACON_ADMIN_TOKEN, its file or the
 * state dir's, named `default`) and the named tokens of BEACON_ADMIN_TOKENS
 * (`name:token,name:token`: one per person or tool, several during a rotation). A request's
 * actor is the name of the token it carried; the audit trail records it.
 *
 * The check hashes the given token once and compares it with every credential's hash in
 * constant time, whichever matches, so neither the lengths nor which token matched leak.
 *
 * @param {{ token: string|null, named: string|null }} options named: the raw BEACON_ADMIN_TOKENS
 * @returns {{ any: boolean, names: string[], actorOf: (header: string|undefined) => string|null }}
 *   any: at least one credential (else the admin API is off); actorOf: the actor of an
 *   Authorization header, null when it carries no valid token
 * @throws {InstanceType<typeof ERRORS.INVALID_OPTION>} a malformed BEACON_ADMIN_TOKENS, a name used twice, a
 *   token shorter than 32 characters
 */
function createCredentials ({ token, named }) {
  /** @type {Array<[string, string]>} name, token */
  const pairs = token ? [[DEFAULT_ACTOR, token]] : []
  for (const part of (named || '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const colon = part.indexOf(':')
    const name = part.slice(0, colon)
    if (colon < 1 || colon === part.length - 1 || !isSafeName(name, MAX_ACTOR)) {
      throw new ERRORS.INVALID_OPTION('BEACON_ADMIN_TOKENS must be name:token pairs separated by commas ' +
        `(names 1-${MAX_ACTOR} of A-Z a-z 0-9 _ -)`)
    }
    if (pairs.some(([n]) => n === name)) {
      throw new ERRORS.INVALID_OPTION(`BEACON_ADMIN_TOKENS names ${name} twice` +
        (name === DEFAULT_ACTOR ? ` (${DEFAULT_ACTOR} is BEACON_ADMIN_TOKEN's)` : ''))
    }
    if (part.length - colon - 1 < MIN_TOKEN_CHARS) {
      throw new ERRORS.INVALID_OPTION(`BEACON_ADMIN_TOKENS: the token of ${name} is shorter than ${MIN_TOKEN_CHARS} characters`)
    }
    pairs.push([name, part.slice(colon + 1)])
  }
  const hashed = pairs.map(([name, value]) => ({ name, hash: sha256(value) }))
  return {
    any: hashed.length > 0,
    names: hashed.map((c) => c.name),
    actorOf (header) {
      const match = typeof header === 'string' && /^Bearer (.+)$/.exec(header)
      const given = sha256(match ? match[1] : '')
      let actor = null
      for (const c of hashed) if (crypto.timingSafeEqual(given, c.hash) && match) actor = c.name
      return actor
    }
  }
}

/** @param {string} text @returns {Buffer} */
function sha256 (text) {
  return crypto.createHash('sha256').update(text).digest()
}

module.exports = { createCredentials, DEFAULT_ACTOR }
