'use strict'

const fsp = require('node:fs/promises')
const path = require('node:path')
const { ERRORS } = require('../../../lib/errors')
const { SINK_DEFAULTS, SINK_INTERNALS } = require('../../../config/defaults')
const files = require('./files')
const { createJournalWriter } = require('./writer')
const { JournalFile } = require('./journal-file')

const { TRANSIENT_CODES, holdWriter, isOrphan, countFileLines, quarantineFile } = files

/**
 * The spill journal of an HBase sink: append-only NDJSON files in `dir`, one active file per
 * writer, rotated by size (format: files.js). A replay writes exactly the row the live
 * path would have written (same key: a replay repeated after a crash overwrites the row).
 *
 * Writing (writer.js): append() queues in memory, within `maxBufferedLines`, and never
 * does I/O on the caller's stack; a disk that refuses writes keeps the lines waiting and is
 * retried. This module keeps the files ready for replay (sealed, oldest first).
 *
 * File names carry the writer's pid and id: `j-<pid>-<writerId>-<seq>.ndjson`. A file whose
 * pid is not running (or, for this pid, whose writer is not open in this process) is an
 * orphan: claimOrphans() takes it over by renaming it into this writer's name space (rename is
 * atomic, so two claimers never both get a file). A damaged file (empty, not a regular file,
 * unreadable, or holding records that are not whole) is quarantined: renamed
 * `<original name>.damaged-<ms>`, never deleted, never in the way of the others.
 */

const DEFAULTS = Object.freeze({
  ...SINK_INTERNALS.journal,
  maxBufferedLines: SINK_DEFAULTS.hbase.journalMaxBuffered,
  claimLiveFiles: false,
  pid: process.pid,
  fs: fsp
})

/**
 * @param {object} options
 * @param {string} options.dir journal directory (created if missing)
 * @param {string} options.writerId [A-Za-z0-9_-]{1,64}, unique among live writers
 * @param {number} [options.maxFileBytes] rotate the active file past this size
 * @param {number} [options.retryMs] wait before retrying a failed write
 * @param {number} [options.maxBufferedLines] lines that may wait in memory for the disk
 * @param {number} [options.maxBytes] the journal's budget on disk (0: none): past it, append()
 *   refuses lines, for the reason `journal_full`
 * @param {number} [options.maxWriteBytes] about how much one write(2) carries
 * @param {boolean} [options.claimLiveFiles] claimOrphans() takes the files of running pids too
 *   (all but this process's open writers): only for a directory no live beacon uses
 * @param {number} [options.pid]
 * @param {typeof fsp} [options.fs] the file system (tests inject failures)
 * @param {{ warn: Function, error: Function, info?: Function }} [options.logger]
 */
function createJournal (options) {
  const opts = { ...DEFAULTS, ...options }
  if (typeof opts.dir !== 'string' || !path.isAbsolute(opts.dir)) {
    throw new ERRORS.INVALID_OPTION('journal: dir must be an absolute path')
  }
  const io = opts.fs
  const releaseWriter = holdWriter(opts.dir, opts.writerId)
  const prefix = `j-${opts.pid}-${opts.writerId}-`
  let fileSeq = 0
  /** @type {Promise<unknown>|null} the directory's mkdir, once it started */
  let dirReady = null
  let closed = false
  let quarantined = 0
  /** @type {JournalFile[]} ready for replay, oldest first */
  const sealed = []
  // Bytes of the sealed files (claimed ones too): with the active file's, what the budget counts.
  let sealedBytes = 0
  let overBudget = false
  const maxBytes = opts.maxBytes || 0

  /** @param {string} level @param {object} fields @param {string} message */
  function log (level, fields, message) {
    const logger = /** @type {Record<string, Function|undefined>|undefined} */ (opts.logger)
    if (logger && typeof logger[level] === 'function') {
      logger[level]({ dir: opts.dir, ...fields }, message)
    }
  }

  /** @returns {Promise<unknown>} */
  function ensureDir () {
    if (!dirReady) dirReady = io.mkdir(opts.dir, { recursive: true, mode: 0o700 }).catch((err) => { dirReady = null; throw err })
    return dirReady
  }

  // Digits only after the writer id: creation time, then a sequence number.
  function nextName () {
    return path.join(opts.dir, `${prefix}${Date.now()}${String(fileSeq++).padStart(6, '0')}.ndjson`)
  }

  const writer = createJournalWriter({
    io,
    ensureDir,
    nextName,
    onSealed: ({ path: filePath, lines, bytes }) => list(new JournalFile(filePath, { lines, bytes })),
    maxFileBytes: opts.maxFileBytes,
    maxBufferedLines: opts.maxBufferedLines,
    maxWriteBytes: opts.maxWriteBytes,
    retryMs: opts.retryMs,
    log
  })

  /** @param {JournalFile} file */
  function list (file) {
    sealed.push(file)
    sealedBytes += file.bytes
  }

  /** @param {JournalFile|{ path: string, from?: string }} file */
  function unlist (file) {
    const i = sealed.indexOf(/** @type {JournalFile} */ (file))
    if (i === -1) return
    sealed.splice(i, 1)
    sealedBytes -= /** @type {JournalFile} */ (file).bytes // listed: a JournalFile
  }

  /** @returns {number} bytes the journal holds on disk */
  function diskBytes () {
    return sealedBytes + writer.activeBytes()
  }

  /**
   * Takes a damaged file out of the replay and renames it `<original name>.damaged-<ms>`.
   * Never throws: a file that cannot even be renamed keeps this writer's name (it is claimed,
   * and tried, again once this writer is gone).
   * @param {{ path: string, from?: string }} file
   * @param {string} reason for the log
   * @returns {Promise<string|null>} where it is now, or null when the rename failed
   */
  async function quarantine (file, reason) {
    unlist(file)
    try {
      const to = await quarantineFile(file.path, file.from || path.basename(file.path), io)
      quarantined++
      log('warn', { file: file.from || path.basename(file.path), to, reason },
        'access-log journal: damaged file quarantined')
      return to
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (err.code !== 'ENOENT') {
        log('error', { err, file: file.path, reason }, 'access-log journal: damaged file could not be quarantined')
      }
      return null
    }
  }

  /**
   * @param {string} name
   * @param {(file: JournalFile) => void} onClaimed called as the file becomes ready for replay,
   *   before anything can replay it
   */
  async function claimOne (name, onClaimed) {
    const original = path.join(opts.dir, name)
    const target = nextName()
    try {
      await ensureDir()
      await io.rename(original, target)
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (err.code !== 'ENOENT') {
        log('error', { err, file: name }, 'access-log journal: could not claim an orphan file; skipped')
      }
      return null // ENOENT: another writer claimed it first
    }
    let file
    try {
      const st = await io.stat(target)
      if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' })
      const lines = st.size === 0 ? 0 : await countFileLines(target, io)
      file = new JournalFile(target, { lines, bytes: st.size, from: name })
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (TRANSIENT_CODES.has(err.code)) {
        await io.rename(target, original).catch(() => {}) // claimed again later
        return null
      }
      await quarantine({ path: target, from: name }, `unreadable: ${err.code || err.message}`)
      return null
    }
    if (file.lines === 0) {
      // A writer killed between creating and writing it (nothing lost), or a file whose data a
      // machine crash dropped (lost, count unknown): kept for the operator either way.
      await quarantine(file, 'empty')
      return null
    }
    onClaimed(file)
    list(file)
    return file
  }

  return {
    dir: opts.dir,
    writerId: opts.writerId,
    /**
     * Queues one record line (writer.js append), unless the files on disk already hold
     * the journal's budget.
     * @param {string} line
     * @returns {boolean} false: refused (see refusalReason())
     */
    append (line) {
      // What waits for the disk counts too (lines, a file being sealed): a slow disk must not let
      // the budget be passed.
      overBudget = maxBytes > 0 && diskBytes() + writer.uncountedBytes() >= maxBytes
      return !overBudget && writer.append(line)
    },

    /** @returns {'journal_full'|'disk_full'|'write_error'|'write_backlog'} why the last append() was refused */
    refusalReason: () => (overBudget ? 'journal_full' : writer.refusalReason()),
    failing: writer.failing,
    lend: writer.lend,
    settleLent: writer.settleLent,
    giveBack: writer.giveBack,
    flush: () => writer.flush(),
    bufferedLines: writer.bufferedLines,
    heldLines: writer.heldLines,
    abandonHeld: writer.abandonHeld,
    quarantine,

    /** @returns {string} the name prefix of this writer's files (claimed ones and its write-ahead log's too) */
    ownPrefix: () => prefix,

    /** Flushes and seals the active file so it can be replayed; later appends open a new one. */
    seal: () => writer.seal(),

    /** @returns {JournalFile|undefined} the oldest file ready for replay */
    nextSealed () {
      return sealed[0]
    },

    /**
     * Opens a sealed file for the replay, which reads it a block at a time (reader.js).
     * @param {{ path: string }} file
     * @param {number} maxBytes a bigger file is refused (code EFBIG)
     * @returns {Promise<import('node:fs/promises').FileHandle>}
     */
    async open (file, maxBytes) {
      const st = await io.stat(file.path)
      if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' })
      if (st.size > maxBytes) {
        throw Object.assign(new Error(`${st.size} bytes, more than ${maxBytes}`), { code: 'EFBIG' })
      }
      return io.open(file.path, 'r')
    },

    /**
     * Deletes a replayed file.
     * @param {{ path: string }} file
     */
    async remove (file) {
      unlist(file)
      await io.unlink(file.path).catch((err) => {
        if (err.code !== 'ENOENT') throw err
      })
    },

    /**
     * Takes over the files of writers that no longer run (skipping live pids and writers open
     * in this process). A damaged file is quarantined, one that cannot be claimed is logged and
     * skipped: one bad file never keeps the others from being claimed.
     * @param {(file: JournalFile) => void} [onClaimed] called for each file as it is claimed,
     *   before a replay can see it (so it is counted first)
     * @returns {Promise<JournalFile[]>} claimed files
     */
    async claimOrphans (onClaimed = () => {}) {
      let names
      try {
        names = await io.readdir(opts.dir)
      } catch (caught) {
        const err = /** @type {NodeJS.ErrnoException} */ (caught)
        if (err.code === 'ENOENT') return []
        throw err
      }
      const claimed = []
      for (const name of names.sort()) {
        if (!isOrphan(opts.dir, name, opts.pid, opts.claimLiveFiles)) continue
        const file = await claimOne(name, onClaimed)
        if (file) claimed.push(file)
      }
      return claimed
    },

    /** Flushes and closes the active file; the writer's files stay for a later claim. */
    async close () {
      if (closed) return
      try {
        await writer.seal()
      } finally {
        closed = true
        writer.stop()
        releaseWriter()
      }
    },

    stats () {
      return {
        bufferedLines: writer.bufferedLines(),
        activeLines: writer.activeLines(),
        diskBytes: diskBytes(),
        sealedFiles: sealed.length,
        sealedLines: sealed.reduce((n, f) => n + f.lines, 0),
        quarantined,
        ...writer.stats()
      }
    },

    /** Lines appended but not yet sealed into a file ready for replay (in memory included). */
    unsealedLines () {
      return writer.bufferedLines() + writer.activeLines()
    }
  }
}

module.exports = {
  createJournal,
  holdWriter,
  formatRecord: files.formatRecord,
  parseRecord: files.parseRecord,
  readRecords: files.readRecords,
  journalFiles: files.journalFiles,
  quarantinedFiles: files.quarantinedFiles,
  FILE_PATTERN: files.FILE_PATTERN
}
