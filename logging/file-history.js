'use strict'

const fs = require('node:fs')

/**
 * How much history the file sink's files still hold, checked after each rotation's cleanup.
 * pino-roll keeps `keepFiles` files besides the one being written (one fewer when its cleanup
 * already sees the new file): files of one `rotateFrequency` period each promise keepFiles - 1
 * whole periods at the least. A flood rotates on size many times a period, and the cleanup then
 * deletes files long before their time. It still does (the disk budget, keepFiles + 1 files of
 * rotateSize, holds), but never silently: each such rotation is counted, logged and shown in
 * /readyz until the history is long again (docs/access-log.md, "The file log's history").
 */

const PERIOD_MS = Object.freeze({ daily: 86400000, hourly: 3600000 })

/**
 * @param {object} options
 * @param {() => string[]} options.files the sink's files, oldest (by modification time) first
 * @param {number} options.keepFiles rotated files kept besides the one being written
 * @param {'daily'|'hourly'|number} options.rotateFrequency or a period in ms
 * @param {() => number} [options.now] epoch ms
 * @param {(fields: object) => void} [options.onShort] a rotation left less than promised
 */
function createFileHistory ({ files, keepFiles, rotateFrequency, now = Date.now, onShort = () => {} }) {
  const periodMs = typeof rotateFrequency === 'number' ? rotateFrequency : PERIOD_MS[rotateFrequency] || PERIOD_MS.daily
  // In the steady state of one file a period, the oldest kept file was last written when the
  // next began, keepFiles - 2 periods ago at the least.
  const expectedMs = Math.max(0, keepFiles - 2) * periodMs
  const promisedMs = (keepFiles - 1) * periodMs
  let earlyRotations = 0
  /** @type {number|null} */
  let keptMs = null
  let short = false

  /** After a cleanup: the kept files' span, and whether a full set spans less than promised. */
  function check () {
    const kept = files()
    if (kept.length === 0) return
    let oldest
    try {
      oldest = fs.statSync(kept[0]).mtimeMs
    } catch {
      return // rotated away meanwhile: the next cleanup checks again
    }
    keptMs = Math.max(0, now() - oldest)
    // Fewer files than keepFiles: nothing was deleted yet, a young history is only a young log.
    short = kept.length >= keepFiles && keptMs < expectedMs
    if (!short) return
    earlyRotations++
    onShort({ keptMs, promisedMs, files: kept.length })
  }

  return {
    check,
    /** @returns {{ keptMs: number|null, promisedMs: number, earlyRotations: number, short: boolean }} */
    stats: () => ({ keptMs, promisedMs, earlyRotations, short })
  }
}

module.exports = { createFileHistory }
