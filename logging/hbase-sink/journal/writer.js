'use strict'

const { DiskBuffer } = require('../../disk-buffer')

/** @typedef {{ path: string, fh: import('node:fs/promises').FileHandle, bytes: number, lines: number }} ActiveFile */

/**
 * The write side of the spill journal (index.js): lines appended in memory, written in
 * batches from a later tick through a FileHandle (libuv's pool), never on the caller's stack,
 * into an active file that is sealed (handed to `onSealed`) once it passes `maxFileBytes`.
 *
 * Bounded: at most `maxBufferedLines` wait in memory; past that append() refuses the line and
 * the caller counts it as shed, for the reason refusalReason() gives. A write that fails (a
 * full disk) keeps its lines in memory and is retried every `retryMs`. A write that went
 * through only in part keeps the whole lines it wrote and cuts the file back to them, so no
 * file ever holds a record cut short by this writer. While lines wait because the disk refused
 * them, failing() says why, and lend() lets a replay send them straight to HBase meanwhile.
 *
 * @param {object} options
 * @param {import('node:fs/promises')} options.io the file system
 * @param {() => Promise<unknown>} options.ensureDir
 * @param {() => string} options.nextName path of the next file
 * @param {(file: { path: string, lines: number, bytes: number }) => void} options.onSealed
 * @param {number} options.maxFileBytes
 * @param {number} options.maxBufferedLines
 * @param {number} options.maxWriteBytes about how much one write(2) carries
 * @param {number} options.retryMs
 * @param {(level: string, fields: object, message: string) => void} options.log
 */
function createJournalWriter ({
  io, ensureDir, nextName, onSealed, maxFileBytes, maxBufferedLines, maxWriteBytes, retryMs, log
}) {
  /** @type {string[]} */
  let buffer = [] // lines (without newline) not yet in a file
  let lent = 0 // lines lend() handed to a replay and not yet settled
  /** @type {Array<() => void>} */
  let lentWaiters = [] // flush() calls waiting for lent lines to settle
  let inWrite = 0 // lines of the write in progress (back in the buffer if it fails)
  /** @type {string[]} */
  let inWriteLines = [] // those lines
  // Characters (newlines included) of the lines in `buffer` and in the write in progress: what
  // the journal's budget counts besides its files, so a slow disk cannot let it run past.
  let bufferChars = 0
  let inWriteChars = 0
  let sealingBytes = 0 // of a file being sealed: in no file the journal counts until onSealed
  /** @type {ActiveFile|null} */
  let active = null
  /** @type {Promise<void>|null} */
  let writing = null // promise of the running write loop
  let scheduled = false
  const disk = new DiskBuffer({
    what: 'access-log journal',
    maxLines: maxBufferedLines,
    retryMs,
    waiting,
    retry: runLoop,
    log,
    fields: () => ({ buffered: waiting() })
  })

  // Lent lines came back (written to HBase, or given back): flush() looks again.
  function lentSettled () {
    const waiters = lentWaiters
    lentWaiters = []
    for (const wake of waiters) wake()
  }

  // Lines not yet in a file: the bound counts them all.
  function waiting () {
    return buffer.length + lent + inWrite
  }

  async function openActive () {
    await ensureDir()
    const file = nextName()
    const fh = await io.open(file, 'a', 0o600) // clients' addresses: this user's only
    active = { path: file, fh, bytes: 0, lines: 0 }
  }

  // Never throws: the bytes are written; a failed datasync only means a power loss could take
  // them, which the journal does not promise to survive (no fsync per line either).
  async function sealActive () {
    if (!active) return
    const { path: file, fh, lines, bytes } = active
    active = null
    sealingBytes += bytes
    await fh.datasync().catch((err) => log('warn', { err, file }, 'access-log journal: datasync failed'))
    await fh.close().catch(() => {})
    sealingBytes -= bytes
    if (lines > 0) onSealed({ path: file, lines, bytes })
    else await io.unlink(file).catch(() => {})
  }

  function takeChunk () {
    let n = 0
    let bytes = 0
    while (n < buffer.length && (n === 0 || bytes < maxWriteBytes)) bytes += buffer[n++].length + 1
    bufferChars -= bytes
    inWriteChars = bytes
    return buffer.splice(0, n)
  }

  /** @param {string[]} lines @returns {number} their characters, a newline each */
  function charsOf (lines) {
    let n = 0
    for (const line of lines) n += line.length + 1
    return n
  }

  async function writeLoop () {
    while (buffer.length) {
      const lines = takeChunk()
      const chunk = Buffer.from(lines.join('\n') + '\n')
      let done = 0
      inWrite = lines.length
      inWriteLines = lines
      try {
        if (!active) await openActive()
        // (casts: openActive() set it; only sealActive() clears it, after this write)
        while (done < chunk.length) {
          const { bytesWritten } = await /** @type {ActiveFile} */ (active).fh.write(
            chunk,
            done,
            chunk.length - done,
            null
          )
          if (!(bytesWritten > 0)) throw Object.assign(new Error('write(2) wrote nothing'), { code: 'EIO' })
          done += bytesWritten
        }
        const written = /** @type {ActiveFile} */ (active)
        written.bytes += chunk.length
        written.lines += lines.length
        inWrite = 0
        inWriteLines = []
        inWriteChars = 0
        disk.worked()
        if (written.bytes >= maxFileBytes) await sealActive()
      } catch (err) {
        const kept = await keepWholeLines(chunk, done)
        // The rest waits in memory, in order, and is tried again: a full disk may not stay full.
        const rest = lines.slice(kept)
        buffer = rest.concat(buffer)
        bufferChars += charsOf(rest)
        inWrite = 0
        inWriteLines = []
        inWriteChars = 0
        disk.failed(err)
        return
      }
    }
  }

  /**
   * A write that went through in part: keep the whole lines it wrote and cut the file back to
   * them. If the cut fails too, the file is sealed as it is (its last line is cut short: the
   * replay skips it and quarantines the file) and the next write starts a new one.
   * @param {Buffer} chunk the lines written, newlines included
   * @param {number} done bytes of it the file took
   * @returns {Promise<number>} lines of the chunk that are in the file
   */
  async function keepWholeLines (chunk, done) {
    if (!active || done === 0) return 0
    const end = chunk.lastIndexOf(0x0a, done - 1) + 1
    let kept = 0
    for (let i = chunk.indexOf(0x0a); i !== -1 && i < end; i = chunk.indexOf(0x0a, i + 1)) kept++
    const target = active
    target.lines += kept
    if (end < done) {
      try {
        await target.fh.truncate(target.bytes + end)
      } catch (err) {
        log('error', { err, file: target.path },
          'access-log journal: could not cut a partial write back; sealing the file')
        await sealActive()
        return kept
      }
    }
    target.bytes += end
    return kept
  }

  function runLoop () {
    scheduled = false
    if (writing) return writing
    writing = writeLoop().finally(() => { writing = null })
    return writing
  }

  function schedule () {
    if (!scheduled && !writing && !disk.retrying) {
      scheduled = true
      setImmediate(runLoop)
    }
  }

  return {
    /**
     * Queues one record line; written from a later tick. Never throws, never does I/O.
     * @param {string} line a record without its newline
     * @returns {boolean} false: refused, `maxBufferedLines` already wait (see refusalReason())
     */
    append (line) {
      if (!disk.hasRoom()) return false
      buffer.push(line)
      bufferChars += line.length + 1
      schedule()
      return true
    },

    /**
     * @returns {'disk_full'|'write_error'|'write_backlog'} why append() refuses lines: the
     *   disk is full, it fails otherwise, or it is merely slower than the lines come
     */
    refusalReason () {
      return disk.refusalReason()
    },

    /** @returns {{ code: string, since: number }|null} set while lines wait because the last write failed */
    failing () {
      return waiting() > 0 ? disk.failure : null
    },

    /**
     * Hands up to `n` waiting lines to a replay that sends them to HBase itself. Each comes
     * back: settleLent() once written, giveBack() if not.
     * @param {number} n
     * @returns {string[]}
     */
    lend (n) {
      const lines = buffer.splice(0, n)
      lent += lines.length
      bufferChars -= charsOf(lines)
      return lines
    },

    /** @param {number} n lent lines that are now in HBase */
    settleLent (n) {
      lent -= n
      lentSettled()
    },

    /** @param {string[]} lines lent lines that could not be written: they wait again */
    giveBack (lines) {
      lent -= lines.length
      buffer = lines.concat(buffer)
      bufferChars += charsOf(lines)
      lentSettled()
      schedule()
    },

    /**
     * Waits until every line appended so far is written and synced, or (lent to a replay) in
     * HBase. Rejects if a write fails (the lines stay queued and are retried in the background).
     * A lent line is in no file: until its put is confirmed a crash would lose it, so the
     * write-ahead log must keep its record (../wal-guard.js releases on this promise).
     */
    async flush () {
      const before = disk.errors
      // (lent changes in settleLent() and giveBack(), while this waits)
      const unsettled = () => buffer.length > 0 || writing !== null || lent > 0
      while (unsettled()) {
        if (buffer.length || writing) await runLoop()
        else await new Promise((resolve) => lentWaiters.push(() => resolve(undefined)))
        if (disk.errors !== before) throw disk.lastError
      }
      if (active) await active.fh.datasync()
    },

    /** Flushes, then seals the active file; later appends open a new one. */
    async seal () {
      await this.flush()
      if (writing) await writing
      await sealActive()
    },

    /** No more retries after this (close). */
    stop () {
      disk.stop()
    },

    /**
     * What the journal's files do not count yet: the lines waiting in memory or being written
     * (characters; not the lent ones) and a file being sealed (bytes).
     * @returns {number}
     */
    uncountedBytes () {
      return bufferChars + inWriteChars + sealingBytes
    },

    /** @returns {string[]} the lines in memory this writer holds (not the lent ones): a close that fails loses them */
    heldLines () {
      return inWriteLines.concat(buffer)
    },

    /**
     * Forgets the lines it holds (heldLines()): a close that could not write them counted them as
     * lost, or as safe in another file. Only after stop().
     */
    abandonHeld () {
      buffer = []
      inWriteLines = []
      inWrite = 0
      bufferChars = 0
      inWriteChars = 0
    },

    /** Lines waiting in memory: not yet in a file (lent ones included). */
    bufferedLines () {
      return waiting()
    },

    /** Lines in the active (not yet sealed) file. */
    activeLines () {
      return active ? active.lines : 0
    },

    /** Bytes in the active (not yet sealed) file. */
    activeBytes () {
      return active ? active.bytes : 0
    },

    stats () {
      const fail = this.failing()
      const lastError = disk.lastError
      return {
        errors: disk.errors,
        lastError: lastError && (lastError.code || lastError.message),
        failing: fail ? fail.code : null,
        failingMs: fail ? Date.now() - fail.since : 0
      }
    }
  }
}

module.exports = { createJournalWriter }
