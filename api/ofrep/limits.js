'use strict'

/**
 * The default bounds of OFREP (api/ofrep/), in one place until the HTTP wiring moves them into
 * the settings (config/defaults.js) with the rest of an endpoint's declaration. Every function
 * that uses one takes it as a parameter; these are only what it falls back to.
 *
 * - maxBodyBytes: a request body is `{"context":{...}}`; the JS providers send the page's
 *   evaluation context, a few hundred bytes. 8 KiB, the cap of the event bodies, leaves room
 *   for large contexts and keeps a flood of big bodies cheap to refuse.
 * - maxKeyLength: the longest flag key served or looked up. The spec sets no rule for keys;
 *   256 is far above any real key and bounds what an error body echoes in `key`.
 * - maxDepth: how many dotted segments a derived key may have (`a.b.c` has 3). Deeper members
 *   are still inside their ancestors' object flags, they just get no key of their own.
 * - maxFlags: at most this many flags per config, so a huge config costs a bounded amount of
 *   work and response bytes per request; the flags nearest the top are the ones kept.
 */
const OFREP_LIMITS = Object.freeze({
  maxBodyBytes: 8192,
  maxKeyLength: 256,
  maxDepth: 8,
  maxFlags: 1000
})

module.exports = { OFREP_LIMITS }
