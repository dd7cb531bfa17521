'use strict'

const fs = require('node:fs')

/**
 * How much history the file sink's rotated files still hold, checked after each rotation's
 * cleanup: `keepFiles` files of one `rotateFrequency` period each promise that many periods. A
 * flood rotates on size many times a period, and the cleanup then deletes files long before
 * their time. It still does (the disk budget, keepFiles + 1 files of rotateSize, holds), but never
 * silently: each such rotation is counted, logged and shown in /readyz until the history is
 * long again (docs/access-log.md, "The file log's history").
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
  // The oldest kept file was last written when the one after it began: one period younger than
  // the promise, in the steady state of one file a period.
  const expectedMs = (keepFiles - 1) * periodMs
  let earlyRotations = 0
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
    short = kept.length > keepFiles && keptMs < expectedMs
    if (!short) return
    earlyRotations++
    onShort({ keptMs, promisedMs: keepFiles * periodMs, files: kept.length })
  }

  return {
    check,
    /** @returns {{ keptMs: number|null, promisedMs: number, earlyRotations: number, short: boolean }} */
    stats: () => ({ keptMs, promisedMs: keepFiles * periodMs, earlyRotations, short })
  }
}

module.exports = { createFileHistory }
