'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { formatRecord, holdWriter } = require('./files')
const { ERRORS } = require('../../../lib/errors')
const { SINK_INTERNALS } = require('../../../config/defaults')

const DEFAULTS = Object.freeze({ ...SINK_INTERNALS.wal, pid: process.pid, fs })

/**
 * One file of the log: entries are appended until it is sealed; deleted once none is pending.
 * @typedef {{ path: string, fd: number|null, bytes: number, lines: number, pending: number,
 *   sealed: boolean, openedAt: number }} Segment
 */

/**
 * The write-ahead log of an HBase sink in durable mode: every accepted entry is written to a
 * local file *synchronously*, before the request handler answers, so a crash of the process
 * (SIGKILL, OOM) after a client saw its answer cannot lose the entry. The page cache is
 * enough for that: a killed process's written bytes survive it; only a machine crash
 * would need fsync, which is the bench's measured trade-off left out on purpose.
 *
 * Files use the spill journal's names and record format (`j-<pid>-<writerId>-<seq>.ndjson`,
 * `{"k":…,"v":…}` per line) in the same directory. While the writer runs, nobody touches them:
 * its segments are deleted once every entry in them is written to HBase (or safely in the
 * spill journal). When the process dies, they are orphans like any journal file: the next
 * sink to start (the replacement worker) claims and replays them. A replayed entry keeps its
 * row key, so an entry that had reached HBase is overwritten, never counted twice.
 *
 * @param {object} options
 * @param {string} options.dir absolute; the sink's journal directory
 * @param {string} options.writerId [A-Za-z0-9_-]{1,64}
 * @param {number} [options.segmentLines] entries per file before a new one is started
 * @param {number} [options.segmentMaxAgeMs] age of a file after which a new one is started
 * @param {typeof fs} [options.fs] the file system (tests inject a disk that fills up)
 */
function createWal (options) {
  const opts = { ...DEFAULTS, ...options }
  if (typeof opts.dir !== 'string' || !path.isAbsolute(opts.dir)) {
    throw new ERRORS.INVALID_OPTION('wal: dir must be an absolute path')
  }
  const io = opts.fs
  const release = holdWriter(opts.dir, opts.writerId)
  io.mkdirSync(opts.dir, { recursive: true })
  let fileSeq = 0
  /** @type {Segment|null} */
  let active = null // segment being appended to
  /** @type {Set<Segment>} */
  const segments = new Set() // every segment with a file on disk
  let appended = 0
  let errors = 0
  let closed = false
  const unlinking = new Set() // deletions of done segments still in progress

  function open () {
    const file = path.join(opts.dir,
      `j-${opts.pid}-${opts.writerId}-${Date.now()}${String(fileSeq++).padStart(6, '0')}.ndjson`)
    const segment = {
      path: file,
      fd: io.openSync(file, 'a'),
      bytes: 0,
      lines: 0,
      pending: 0,
      sealed: false,
      openedAt: Date.now()
    }
    segments.add(segment)
    return segment
  }

  /** @param {Segment} segment */
  function seal (segment) {
    segment.sealed = true
    if (segment.fd !== null) {
      io.closeSync(segment.fd)
      segment.fd = null
    }
    if (segment.pending === 0) drop(segment)
  }

  /** @param {Segment} segment @param {boolean} [sync] */
  function drop (segment, sync = false) {
    segments.delete(segment)
    if (!sync) {
      const unlink = io.promises.unlink(segment.path).catch(() => {}) // gone already is fine
      unlinking.add(unlink)
      unlink.then(() => unlinking.delete(unlink))
      return
    }
    try {
      io.unlinkSync(segment.path)
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err
    }
  }

  /**
   * Writes one record now (a write(2) before returning). Throws on an I/O error: the caller
   * decides what an entry that is not durable means.
   * @param {string} key row key
   * @param {string} value the entry's JSON
   * @returns {Segment} the segment, to hand back to done() once the entry is safe elsewhere
   */
  function append (key, value) {
    return appendLine(Buffer.from(formatRecord(key, value) + '\n'))
  }

  /**
   * append() of a record already encoded (record-bytes.js): its line, newline included.
   * @param {Buffer} record
   * @returns {Segment} the segment, to hand back to done() once the entry is safe elsewhere
   */
  function appendLine (record) {
    if (closed) throw new Error('wal: closed')
    if (active !== null && Date.now() - active.openedAt >= opts.segmentMaxAgeMs) {
      seal(active)
      active = null
    }
    if (active === null) active = open()
    const segment = active
    let done = 0
    try {
      // write(2) may take part of a record (a disk that fills up): write the rest, or fail.
      while (done < record.length) {
        const n = io.writeSync(/** @type {number} */ (segment.fd), record, done, record.length - done) // active: open
        if (!(n > 0)) throw Object.assign(new Error('write(2) wrote nothing'), { code: 'EIO' })
        done += n
      }
    } catch (err) {
      errors++
      active = null
      // Cut a partial record back off, so the file holds whole records only; if even that
      // fails, the replay skips the cut line and quarantines the file. Start a new one.
      if (done > 0) {
        try {
          io.ftruncateSync(/** @type {number} */ (segment.fd), segment.bytes)
        } catch {}
      }
      seal(segment)
      throw err
    }
    segment.bytes += record.length
    segment.lines++
    segment.pending++
    appended++
    if (segment.lines >= opts.segmentLines) {
      active = null
      seal(segment)
    }
    return segment
  }

  /**
   * One entry of `segment` is written to HBase or durable in the spill journal.
   * @param {Segment} segment from append()
   */
  function done (segment) {
    segment.pending--
    if (segment.pending === 0 && segment.sealed && segments.has(segment)) drop(segment)
  }

  /**
   * Closes the files. With `discard`, deletes them (every entry is safe elsewhere); without,
   * leaves them for the next sink's orphan claim. Once it resolves, what is left on disk is
   * exactly what a replay needs.
   * @param {{ discard?: boolean }} [opts]
   * @returns {Promise<void>}
   */
  async function close ({ discard = false } = {}) {
    if (closed) return
    closed = true
    for (const segment of [...segments]) {
      if (segment.fd !== null) {
        io.closeSync(segment.fd)
        segment.fd = null
      }
      segment.sealed = true
      // Synchronously: once close() returns, what is left on disk is exactly what needs a replay.
      if (discard || segment.pending === 0) drop(segment, true)
    }
    active = null
    release()
    await Promise.all(unlinking)
  }

  function stats () {
    let pending = 0
    for (const s of segments) pending += s.pending
    return { walAppended: appended, walPending: pending, walFiles: segments.size, walErrors: errors }
  }

  return { append, appendLine, done, close, stats }
}

module.exports = { createWal }
