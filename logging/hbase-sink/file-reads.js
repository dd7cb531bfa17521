'use strict'

const { TRANSIENT_CODES } = require('./journal/files')
const { RecordReader } = require('./journal/reader')

/** @typedef {import('./journal/journal-file').JournalFile} JournalFile */

/**
 * @typedef {object} ReplayProgress where the replay of one file stands (JournalFile.replay):
 *   kept while the replay waits out an outage, so it goes on where it was
 * @property {number} resumeAt bytes of the file consumed
 * @property {number} seen lines read
 * @property {number} corrupt lines read that are not whole records
 * @property {Array<{ key: string, value: string }>} retry records read and not yet written
 * @property {boolean} damaged lines of it cannot be replayed: quarantined once read through
 * @property {RecordReader|undefined} reader open while the file is read
 */

/**
 * How the replay reads sealed journal files: one at a time, a block at a time into one buffer
 * every file shares, a batch of records ahead of each write; and what it counts of a file that
 * cannot be replayed (damage: lines that are not whole records, a file cut short or unreadable).
 * Where the read of a file stands is that file's `replay` slot (ReplayProgress).
 */
class FileReads {
  /**
   * @param {object} deps
   * @param {Readonly<import('./options').SinkOptions>} deps.opts
   * @param {ReturnType<typeof import('./journal').createJournal>} deps.journal
   * @param {import('./ledger').Ledger} deps.ledger
   */
  constructor ({ opts, journal, ledger }) {
    this.opts = opts
    this.journal = journal
    this.ledger = ledger
    /** @type {Buffer|null} where files are read, a block at a time; one for every file */
    this.readBuffer = null
    /** @type {JournalFile|null} the file whose reader is open (one at a time) */
    this.reading = null
  }

  /** Closes the reader left open, if any (stop). */
  async closeOpen () {
    if (this.reading) await this.close(this.reading)
  }

  /**
   * The next batch of a file: the records whose write failed first, then the next lines
   * (lines that are not whole records are counted and skipped).
   * @param {ReplayProgress} progress
   * @param {number} size records wanted
   * @returns {Promise<Array<{ key: string, value: string }>>} empty once the file is read through
   */
  async next (progress, size) {
    if (progress.retry.length) return progress.retry.splice(0, size)
    const reader = /** @type {RecordReader} */ (progress.reader)
    for (;;) {
      const { records, corrupt } = await reader.next(size)
      progress.seen += records.length + corrupt
      progress.corrupt += corrupt
      this.damaged(progress, corrupt)
      if (records.length || corrupt === 0) return records
    }
  }

  /**
   * Once a file is read through, its lines against the lines counted in for it: more (a file
   * that grew after it was counted at the claim) are adopted, fewer (cut short) were lost and
   * are counted as damage.
   * @param {JournalFile} file
   */
  settleLines (file) {
    const { ledger, opts } = this
    const progress = /** @type {ReplayProgress} */ (file.replay)
    const extra = progress.seen - file.lines
    if (extra > 0) {
      ledger.claim(extra)
      file.adoptLines(progress.seen)
    }
    this.damaged(progress, -extra)
    if (progress.corrupt > 0 && opts.logger) {
      opts.logger.warn(
        { file: file.name, lines: progress.corrupt },
        'HBase access log: journal lines that are not whole records skipped'
      )
    }
  }

  /**
   * Counts lines of a file that cannot be replayed.
   * @param {ReplayProgress|null} progress the file's, if its read began
   * @param {number} lines
   */
  damaged (progress, lines) {
    if (lines <= 0) return
    if (progress) progress.damaged = true
    this.ledger.damaged(lines)
  }

  /**
   * Opens a file for reading (a batch at a time, by nextChunk). A file that cannot be read (not
   * a regular file, an I/O error, too big) is quarantined with all its lines counted as corrupt.
   * An error that passes by itself (EMFILE) is thrown: tried again.
   * @param {JournalFile} file
   * @returns {Promise<boolean>} false when the file is out of the replay (vanished or quarantined)
   */
  async open (file) {
    const { ledger, opts, journal } = this
    let handle
    try {
      handle = await journal.open(file, opts.maxReplayFileBytes)
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (TRANSIENT_CODES.has(err.code)) throw err
      this.damaged(file.replay, file.lines)
      if (err.code === 'ENOENT') {
        // Deleted behind our back: its entries are gone; say so rather than retry forever.
        if (opts.logger) {
          opts.logger.error({ file: file.path, lines: file.lines },
            'HBase access log: journal file vanished before replay')
        }
        await journal.remove(file)
      } else {
        if (opts.logger) {
          opts.logger.error(
            { err, file: file.name, lines: file.lines },
            'HBase access log: journal file unreadable; quarantined'
          )
        }
        await journal.quarantine(file, `unreadable: ${err.code || err.message}`)
      }
      ledger.error(err.code || err.message)
      return false
    }
    // One file is read at a time (the buffer is shared); one left part-way goes on where it was.
    if (this.reading && this.reading !== file) await this.close(this.reading)
    if (!this.readBuffer) this.readBuffer = Buffer.allocUnsafe(opts.replayReadBytes)
    if (!file.replay) file.replay = { resumeAt: 0, seen: 0, corrupt: 0, retry: [], damaged: false, reader: undefined }
    file.replay.reader = new RecordReader(handle, this.readBuffer, file.replay.resumeAt)
    this.reading = file
    return true
  }

  /**
   * A read failed part-way through a file: what was read is written, the lines not read are
   * counted as corrupt, and the file is quarantined.
   * @param {JournalFile} file
   * @param {Error & { code?: string }} err
   */
  async unreadable (file, err) {
    const { ledger, opts } = this
    this.settleLines(file)
    const progress = /** @type {ReplayProgress} */ (file.replay)
    progress.damaged = true
    await this.close(file)
    if (opts.logger) {
      opts.logger.error({ err, file: file.name, lines: file.lines },
        'HBase access log: journal file unreadable; quarantined')
    }
    ledger.error(err.code || err.message)
    await this.journal.quarantine(file, `unreadable: ${err.code || err.message}`)
  }

  /**
   * Closes a file's reader; the replay of it goes on where it was when it opens it again.
   * @param {JournalFile} file
   */
  async close (file) {
    const progress = file.replay
    const reader = progress?.reader
    if (progress) progress.reader = undefined
    if (progress && reader) progress.resumeAt = reader.consumed()
    if (this.reading === file) this.reading = null
    if (reader) await reader.close().catch(() => {})
  }
}

module.exports = { FileReads }
