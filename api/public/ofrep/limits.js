'use strict'

const { OFREP_DEFAULTS } = require('../../../config/defaults')

/**
 * The default bounds of OFREP (api/public/ofrep/): those of an endpoint's `ofrep` settings, declared
 * and explained once in config/defaults.js (OFREP_DEFAULTS), where the wiring reads them per
 * endpoint. Every function that uses one takes it as a parameter; these are only what it falls
 * back to when called without (unit tests, tools).
 *
 * - maxBodyBytes: the largest request body read; a larger one is refused unread (413).
 * - maxKeyLength: the longest flag key served or looked up.
 * - maxDepth: how many dotted segments a derived key may have (`a.b.c` has 3). Deeper members
 *   are still inside their ancestors' object flags, they just get no key of their own.
 * - maxFlags: at most this many flags per config; the flags nearest the top are the ones kept.
 */
const OFREP_LIMITS = Object.freeze({
  maxBodyBytes: OFREP_DEFAULTS.maxBodyBytes,
  maxKeyLength: OFREP_DEFAULTS.maxKeyLength,
  maxDepth: OFREP_DEFAULTS.maxDepth,
  maxFlags: OFREP_DEFAULTS.maxFlags
})

module.exports = { OFREP_LIMITS }
