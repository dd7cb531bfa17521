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
 *   staged: Buffer[], stagedBytes: number, sealed: boolean, kept: boolean, openedAt: number }} Segment
 *   bytes: written; lines, pending: staged ones included; staged: records the next commit() writes;
 *   kept: holds an entry that is nowhere else (keep())
 */

/**
 * The write-ahead log of an HBase sink in a durable mode: every accepted entry is written to a
 * local file *synchronously*, before its answer goes out, so a crash of the process (SIGKILL,
 * OOM) after a client saw its answer cannot lose the entry. The page cache is enough for that:
 * a killed process's written bytes survive it. The entries of one event-loop turn go out
 * together (stage() each, then one commit(): logging/group-commit.js), one write(2) per file;
 * append() stages and commits one.
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
 * @param {boolean} [options.sync] fdatasync each commit's files (durability 'host')
 * @param {typeof fs} [options.fs] the file system (tests inject a disk that fills up)
 */
function createWal (options) {
  const opts = { ...DEFAULTS, ...options }
  if (typeof opts.dir !== 'string' || !path.isAbsolute(opts.dir)) {
    throw new ERRORS.INVALID_OPTION('wal: dir must be an absolute path')
  }
  const io = opts.fs
  const release = holdWriter(opts.dir, opts.writerId)
  // Its records hold clients' addresses: private to this user whatever the umask.
  io.mkdirSync(opts.dir, { recursive: true, mode: 0o700 })
  let fileSeq = 0
  /** @type {Segment|null} */
  let active = null // segment being appended to
  /** @type {Set<Segment>} */
  const segments = new Set() // every segment with a file on disk
  /** @type {Segment[]} */
  const staging = [] // segments with staged records, in the order they were staged
  let appended = 0
  let writes = 0 // write(2) calls that took records (a commit makes one per file it writes to)
  let errors = 0
  let closed = false
  const unlinking = new Set() // deletions of done segments still in progress

  function open () {
    const file = path.join(opts.dir,
      `j-${opts.pid}-${opts.writerId}-${Date.now()}${String(fileSeq++).padStart(6, '0')}.ndjson`)
    const segment = {
      path: file,
      fd: io.openSync(file, 'a', 0o600),
      bytes: 0,
      lines: 0,
      pending: 0,
      staged: [],
      stagedBytes: 0,
      sealed: false,
      kept: false,
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
    const segment = stage(record)
    const failed = commit()
    if (failed) throw failed.error
    return segment
  }

  /**
   * Takes one record for the next commit(), which writes every record staged since the last one
   * in one write(2) per file. No I/O but opening a file when a new one is due.
   * @param {Buffer} record its line, newline included (record-bytes.js)
   * @returns {Segment} the segment it will be in, to hand back to done() once the entry is safe elsewhere
   */
  function stage (record) {
    if (closed) throw new Error('wal: closed')
    if (active !== null && Date.now() - active.openedAt >= opts.segmentMaxAgeMs) retire(active)
    if (active === null) active = open()
    const segment = active
    segment.staged.push(record)
    segment.stagedBytes += record.length
    segment.lines++
    segment.pending++
    if (segment.staged.length === 1) staging.push(segment) // its first record since the last commit
    if (segment.lines >= opts.segmentLines) retire(segment)
    return segment
  }

  /**
   * The active segment takes no more records: it is sealed at once, or once its staged records
   * are written.
   * @param {Segment} segment
   */
  function retire (segment) {
    if (active === segment) active = null
    if (segment.staged.length === 0) seal(segment)
  }

  /**
   * Writes what stage() took since the last commit: one write(2) per file (a segment boundary
   * may fall within a group). A write that fails cuts its file back to whole records and seals
   * it; the records it and the later files of the group had are not durable.
   * @returns {{ error: NodeJS.ErrnoException, entries: number }|null} null: every record is written
   */
  function commit () {
    /** @type {{ error: NodeJS.ErrnoException, entries: number }|null} */
    let failed = null
    for (const segment of staging.splice(0)) {
      const records = segment.staged
      segment.staged = []
      const bytes = segment.stagedBytes
      segment.stagedBytes = 0
      if (failed === null) {
        const error = writeAll(segment, records.length === 1 ? records[0] : Buffer.concat(records, bytes)) ??
          syncOf(segment)
        if (error === null) {
          segment.bytes += bytes
          appended += records.length
          writes++
        } else {
          failed = { error, entries: 0 }
        }
      }
      if (failed !== null) {
        failed.entries += records.length
        errors += records.length
        if (active === segment) active = null
      }
      if (active !== segment && !segment.sealed) seal(segment)
    }
    return failed
  }

  /**
   * With `sync` (durability 'host'): the written records reach the device before the answers go
   * out, so a power loss keeps them too. Their bytes are in the file either way.
   * @param {Segment} segment
   * @returns {NodeJS.ErrnoException|null}
   */
  function syncOf (segment) {
    if (!opts.sync) return null
    try {
      io.fdatasyncSync(/** @type {number} */ (segment.fd))
      return null
    } catch (err) {
      return /** @type {NodeJS.ErrnoException} */ (err)
    }
  }

  /**
   * @param {Segment} segment
   * @param {Buffer} chunk whole records
   * @returns {NodeJS.ErrnoException|null} the error, the file cut back to its whole records
   */
  function writeAll (segment, chunk) {
    let done = 0
    try {
      // write(2) may take part of a chunk (a disk that fills up): write the rest, or fail.
      while (done < chunk.length) {
        const n = io.writeSync(/** @type {number} */ (segment.fd), chunk, done, chunk.length - done) // not sealed: open
        if (!(n > 0)) throw Object.assign(new Error('write(2) wrote nothing'), { code: 'EIO' })
        done += n
      }
      return null
    } catch (err) {
      // Cut a partial write back off, so the file holds whole records only; if even that
      // fails, the replay skips the cut line and quarantines the file.
      if (done > 0) {
        try {
          io.ftruncateSync(/** @type {number} */ (segment.fd), segment.bytes)
        } catch {}
      }
      return /** @type {NodeJS.ErrnoException} */ (err)
    }
  }

  /**
   * One entry of `segment` is written to HBase or durable in the spill journal.
   * @param {Segment} segment from append()
   */
  function done (segment) {
    segment.pending--
    if (segment.pending !== 0 || !segments.has(segment)) return
    // The active file too: an idle log leaves no file whose records are all elsewhere already
    // (a crash would have them replayed for nothing).
    if (segment === active) retire(segment) // sealed, so dropped
    else if (segment.sealed) drop(segment)
  }

  /**
   * `segment` stays on disk whatever happens to its other entries, even at a close that
   * discards the rest: one of its entries is nowhere else.
   * @param {Segment} segment from append() or stage()
   */
  function keep (segment) {
    segment.kept = true // its entry is never done(): the file stays while this log runs too
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
    commit() // what a group staged and nobody committed yet: a failure is counted in stats()
    closed = true
    for (const segment of [...segments]) {
      if (segment.fd !== null) {
        io.closeSync(segment.fd)
        segment.fd = null
      }
      segment.sealed = true
      // Synchronously: once close() returns, what is left on disk is exactly what needs a replay.
      if ((discard && !segment.kept) || segment.pending === 0) drop(segment, true)
    }
    active = null
    release()
    await Promise.all(unlinking)
  }

  function stats () {
    let pending = 0
    for (const s of segments) pending += s.pending
    return { walAppended: appended, walWrites: writes, walPending: pending, walFiles: segments.size, walErrors: errors }
  }

  return { append, appendLine, stage, commit, done, keep, close, stats }
}

module.exports = { createWal }
