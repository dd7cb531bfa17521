'use strict'

const pino = require('pino')

/**
 * The application (ops) logger: pino, JSON lines on stdout by default. Access logs never go
 * through it; they have their own sinks (logging/index.js).
 *
 * The destination is asynchronous (sonic-boom with `sync: false`) so a log call never waits
 * on a write(2) to a slow terminal or pipe. pino registers an exit hook that flushes it
 * synchronously when the process exits; `closeLogger` flushes it on a graceful stop.
 *
 * @param {{ level?: string, destination?: number|string|import('node:stream').Writable,
 *   base?: object|null, name?: string }} [options] destination: a file descriptor (1 = stdout),
 *   a file path, or any writable stream (tests pass one to capture lines)
 * @returns {import('pino').Logger}
 */
function createLogger ({ level = 'info', destination = 1, base, name } = {}) {
  const stream = typeof destination === 'object' && destination !== null
    ? destination
    : pino.destination({ dest: destination, sync: false, mkdir: typeof destination === 'string' })
  /** @type {import('pino').LoggerOptions} */
  const options = { level }
  if (base !== undefined) options.base = base
  if (name) options.name = name
  return pino(options, stream)
}

/**
 * Flushes what the logger has buffered; resolves once it is written (never rejects: a
 * logger that cannot write must not break shutdown).
 * @param {import('pino').Logger} logger
 * @returns {Promise<void>}
 */
function closeLogger (logger) {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve())
    } catch {
      resolve()
    }
  })
}

module.exports = { createLogger, closeLogger }
