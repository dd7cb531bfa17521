'use strict'

/**
 * Types the HBase sink's modules share (JSDoc only; nothing runs here).
 *
 * @typedef {(obj: object, msg?: string) => void} LogFn
 * @typedef {{ error: LogFn, warn: LogFn, info: LogFn }} Logger the ops logger the sink reports to
 *   (a pino logger, ../logger.js; tests pass a stub)
 */

module.exports = {}
