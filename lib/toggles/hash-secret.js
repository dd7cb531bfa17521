'use strict'

const crypto = require('node:crypto')
const { ERRORS } = require('../errors')

/** Length of the stored secret: 256 bits, the strength of the HMAC-SHA256 it keys. */
const SECRET_BYTES = 32

/**
 * @typedef {{ read: () => Promise<Buffer> }} SecretSource where the secret of hashed access-log
 *   addresses comes from; read() resolves the same bytes on every host that shares the source
 */

/**
 * The secret kept in the config table (toggle store, row `!privacy:ip-hash`), so that every
 * host and every worker hashes an address to the same value on a given day (the daily keys
 * derive from it: logging/privacy.js createHashKeys).
 *
 * read(): the stored secret; when none is stored yet, 32 random bytes are stored only if still
 * absent (HBase's check-and-put, so when hosts start together exactly one write wins), and the
 * row is read back, so every host ends with the winner's bytes whichever call won, even when
 * a retried check-and-put reports false for a write of its own that landed.
 *
 * @param {object} options
 * @param {{ readHashSecret: () => Promise<Buffer|null>,
 *   createHashSecret: (secret: Buffer) => Promise<boolean> }} options.store
 * @param {(size: number) => Buffer} [options.randomBytes] tests pass their own
 * @returns {SecretSource}
 */
function createHashSecretSource ({ store, randomBytes = crypto.randomBytes }) {
  return {
    async read () {
      let secret = await store.readHashSecret()
      if (secret === null) {
        await store.createHashSecret(randomBytes(SECRET_BYTES))
        secret = await store.readHashSecret()
      }
      // The length only: the bytes themselves never go into a message.
      if (secret === null || secret.length !== SECRET_BYTES) {
        const found = secret === null ? 'missing' : `${secret.length} bytes`
        throw new ERRORS.INTERNAL(`the stored access-log hash secret is ${found}, not ${SECRET_BYTES} bytes`)
      }
      return secret
    }
  }
}

/**
 * Reads the secret now and, while that fails (HBase unreachable at start), again every
 * `retryMs` until it is read; `onSecret` gets it once. Failures are logged when they start and
 * when they end, never with the secret.
 * @param {object} options
 * @param {SecretSource} options.source
 * @param {(secret: Buffer) => void} options.onSecret
 * @param {number} [options.retryMs]
 * @param {{ warn: Function, info: Function }} [options.logger]
 * @returns {{ ready: Promise<void>, stop: () => void }} ready: the first attempt is done, read
 *   or failed; never rejects
 */
function loadHashSecret ({ source, onSecret, retryMs = 5000, logger }) {
  /** @type {NodeJS.Timeout|undefined} */
  let timer
  let stopped = false
  let failing = false
  async function attempt () {
    try {
      const secret = await source.read()
      if (stopped) return
      onSecret(secret)
      if (failing && logger) logger.info('access-log hash secret read: hashed addresses are stored again')
    } catch (err) {
      if (!failing && logger) {
        logger.warn(
          { code: /** @type {NodeJS.ErrnoException} */ (err).code, message: /** @type {Error} */ (err).message },
          'cannot read the access-log hash secret; hashed addresses are stored as null until it is read'
        )
      }
      failing = true
      if (stopped) return
      timer = setTimeout(attempt, retryMs)
      timer.unref()
    }
  }
  return {
    ready: attempt(),
    stop () {
      stopped = true
      clearTimeout(timer)
    }
  }
}

module.exports = { createHashSecretSource, loadHashSecret, SECRET_BYTES }
