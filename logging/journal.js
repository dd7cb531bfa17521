'use strict'

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const path = require('node:path')
const { ERRORS } = require('../lib/errors')
const { isSafeName } = require('../lib/names')

/**
 * The spill journal of an HBase sink: append-only NDJSON files in `dir`, one active file per
 * writer, rotated by size. Each line is one access-log row, `{"k":"<row key>","v":<entry>}`,
 * so a replay writes exactly the row the live path would have written (same key: a replay
 * that is repeated after a crash overwrites the row instead of adding one).
 *
 * append() only pushes onto an array; the lines are written in batches from a later tick
 * through a FileHandle (libuv's pool), never on the caller's stack.
 *
 * File names carry the writer's pid and id: `j-<pid>-<writerId>-<seq>.ndjson`. A file whose
 * pid is not running (or, for this pid, whose writer is not open in this process) is an
 * orphan: claimOrphans() takes it over by renaming it into this writer's name space (rename is
 * atomic, so two claimers never both get a file).
 */

const FILE_PATTERN = /^j-(\d+)-([A-Za-z0-9_-]+)-(\d+)\.ndjson$/
const RECORD_HEAD = '{"k":"'
const RECORD_MID = '","v":'
const DEFAULTS = Object.freeze({ maxFileBytes: 16 * 1024 * 1024, retryMs: 1000, pid: process.pid })

// Writers with an open journal in this process, by directory and writer id: a file of this
// pid is an orphan only if its writer is not among them.
const liveWriters = new Set()

/**
 * Marks a writer as live in this process, so that claimOrphans() here leaves its files alone
 * (the write-ahead log of a durable sink uses this too).
 * @param {string} dir
 * @param {string} writerId
 * @returns {() => void} releases the mark
 */
function holdWriter (dir, writerId) {
  if (!isSafeName(writerId, 64)) throw new ERRORS.INVALID_OPTION('journal: writerId must match [A-Za-z0-9_-]{1,64}')
  const key = `${path.resolve(dir)}\0${writerId}`
  if (liveWriters.has(key)) throw new Error(`journal: writer ${writerId} already has this journal open`)
  liveWriters.add(key)
  return () => liveWriters.delete(key)
}

/**
 * @param {string} key row key (no `"` or `\`)
 * @param {string} value the entry's JSON
 * @returns {string} one journal line, without the newline
 */
function formatRecord (key, value) {
  return RECORD_HEAD + key + RECORD_MID + value + '}'
}

/**
 * @param {string} line
 * @param {boolean} [verify] JSON.parse the value too (for a last line that may be cut short)
 * @returns {{ key: string, value: string }|null} null when the line is not a whole record
 */
function parseRecord (line, verify = false) {
  if (!line.startsWith(RECORD_HEAD) || line.charCodeAt(line.length - 1) !== 125 /* } */) return null
  const end = line.indexOf(RECORD_MID, RECORD_HEAD.length)
  if (end === -1) return null
  const key = line.slice(RECORD_HEAD.length, end)
  const value = line.slice(end + RECORD_MID.length, -1)
  if (value.length === 0) return null
  if (verify) {
    try {
      JSON.parse(value)
    } catch {
      return null
    }
  }
  return { key, value }
}

/**
 * Reads a journal file. A line that is not a whole record (a writer killed mid-write leaves at
 * most its last line cut) is counted as corrupt and skipped.
 * @param {string} file
 * @returns {Promise<{ records: Array<{ key: string, value: string }>, corrupt: number }>}
 */
async function readRecords (file) {
  const text = await fsp.readFile(file, 'utf8')
  const records = []
  let corrupt = 0
  let from = 0
  while (from < text.length) {
    let to = text.indexOf('\n', from)
    const last = to === -1
    if (last) to = text.length
    if (to > from) {
      const record = parseRecord(text.slice(from, to), last)
      if (record) records.push(record)
      else corrupt++
    }
    from = to + 1
  }
  return { records, corrupt }
}

/**
 * Counts the lines of a file (a last line without its newline counts).
 * @param {string} file
 * @returns {Promise<number>}
 */
async function countFileLines (file) {
  const fh = await fsp.open(file, 'r')
  try {
    const buf = Buffer.allocUnsafe(1 << 20)
    let lines = 0
    let last = 0x0a
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null)
      if (bytesRead === 0) break
      const chunk = buf.subarray(0, bytesRead)
      for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++
      last = chunk[bytesRead - 1]
    }
    return last === 0x0a ? lines : lines + 1
  } finally {
    await fh.close()
  }
}

function pidRunning (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM' // exists, owned by someone else
  }
}

/**
 * @param {object} options
 * @param {string} options.dir journal directory (created if missing)
 * @param {string} options.writerId [A-Za-z0-9_-]{1,64}, unique among live writers
 * @param {number} [options.maxFileBytes] rotate the active file past this size
 * @param {number} [options.retryMs] wait before retrying a failed write
 * @param {{ warn: Function, error: Function }} [options.logger]
 */
function createJournal (options) {
  const opts = { ...DEFAULTS, ...options }
  if (typeof opts.dir !== 'string' || !path.isAbsolute(opts.dir)) throw new ERRORS.INVALID_OPTION('journal: dir must be an absolute path')
  const releaseWriter = holdWriter(opts.dir, opts.writerId)

  const prefix = `j-${opts.pid}-${opts.writerId}-`
  let fileSeq = 0
  let buffer = [] // lines (with newline) not yet handed to the file
  let active = null // { path, fh, bytes, lines }
  const sealed = [] // { path, lines }, oldest first
  let writing = null // promise of the running write loop
  let scheduled = false
  let closed = false
  let dirReady = null
  let retryTimer = null
  let errors = 0
  let lastError = null

  function ensureDir () {
    if (!dirReady) dirReady = fsp.mkdir(opts.dir, { recursive: true }).catch((err) => { dirReady = null; throw err })
    return dirReady
  }

  // Digits only after the writer id: creation time, then a sequence number.
  function nextName () {
    return path.join(opts.dir, `${prefix}${Date.now()}${String(fileSeq++).padStart(6, '0')}.ndjson`)
  }

  async function openActive () {
    await ensureDir()
    const file = nextName()
    const fh = await fsp.open(file, 'a')
    active = { path: file, fh, bytes: 0, lines: 0 }
  }

  async function sealActive () {
    if (!active) return
    const { path: file, fh, lines } = active
    active = null
    try {
      await fh.datasync()
    } finally {
      await fh.close()
    }
    if (lines > 0) sealed.push({ path: file, lines })
    else await fsp.unlink(file).catch(() => {})
  }

  async function writeLoop () {
    while (buffer.length) {
      const lines = buffer
      buffer = []
      const chunk = lines.join('')
      try {
        if (!active) await openActive()
        await active.fh.write(chunk)
        active.bytes += Buffer.byteLength(chunk)
        active.lines += lines.length
        if (active.bytes >= opts.maxFileBytes) await sealActive()
      } catch (err) {
        // Keep the lines, in order, and try again later: a disk that is full now may not be.
        buffer = lines.concat(buffer)
        errors++
        lastError = err
        if (opts.logger) opts.logger.error({ err, dir: opts.dir, lines: buffer.length }, 'access-log journal write failed; retrying')
        if (active) {
          const broken = active
          active = null
          await broken.fh.close().catch(() => {})
          if (broken.lines > 0) sealed.push({ path: broken.path, lines: broken.lines })
        }
        // unref: a journal that cannot write must not keep the process alive by itself.
        if (!retryTimer) {
          retryTimer = setTimeout(() => {
            retryTimer = null
            runLoop()
          }, opts.retryMs)
          retryTimer.unref()
        }
        return
      }
    }
  }

  function runLoop () {
    scheduled = false
    if (writing) return writing
    writing = writeLoop().finally(() => { writing = null })
    return writing
  }

  /**
   * Queues one record line; written from a later tick. Never throws, never does I/O.
   * @param {string} line a record without its newline
   */
  function append (line) {
    buffer.push(line + '\n')
    if (!scheduled && !writing && !retryTimer) {
      scheduled = true
      setImmediate(runLoop)
    }
  }

  /**
   * Waits until every line appended so far is written and synced. Rejects if a write fails
   * (the lines stay queued and are retried in the background).
   */
  async function flush () {
    const before = errors
    while (buffer.length || writing) {
      await runLoop()
      if (errors !== before) throw lastError
    }
    if (active) await active.fh.datasync()
  }

  /**
   * Closes the active file (after flushing) so it can be replayed; later appends open a new
   * one.
   */
  async function seal () {
    await flush()
    if (writing) await writing
    await sealActive()
  }

  /** @returns {{ path: string, lines: number }|undefined} the oldest file ready for replay */
  function nextSealed () {
    return sealed[0]
  }

  /**
   * Deletes a replayed file.
   * @param {{ path: string }} file
   */
  async function remove (file) {
    const i = sealed.indexOf(file)
    if (i !== -1) sealed.splice(i, 1)
    await fsp.unlink(file.path).catch((err) => {
      if (err.code !== 'ENOENT') throw err
    })
  }

  /**
   * Takes over the files of writers that no longer run. Skips files of live pids and of
   * writers open in this process; a file another claimer renamed first is skipped too.
   * @returns {Promise<Array<{ path: string, lines: number, from: string }>>} claimed files
   */
  async function claimOrphans () {
    let names
    try {
      names = await fsp.readdir(opts.dir)
    } catch (err) {
      if (err.code === 'ENOENT') return []
      throw err
    }
    const claimed = []
    for (const name of names.sort()) {
      const m = FILE_PATTERN.exec(name)
      if (!m) continue
      const pid = Number(m[1])
      if (pid === opts.pid) {
        // This process: an orphan only if its writer is not open here (ours always is).
        if (liveWriters.has(`${path.resolve(opts.dir)}\0${m[2]}`)) continue
      } else if (pidRunning(pid)) {
        continue
      }
      await ensureDir()
      const target = nextName()
      try {
        await fsp.rename(path.join(opts.dir, name), target)
      } catch (err) {
        if (err.code === 'ENOENT') continue // another writer claimed it first
        throw err
      }
      const lines = await countFileLines(target)
      const file = { path: target, lines }
      if (lines > 0) {
        sealed.push(file)
        claimed.push({ ...file, from: name })
      } else {
        await fsp.unlink(target).catch(() => {})
      }
    }
    return claimed
  }

  /** Flushes and closes the active file; the writer's files stay for a later claim. */
  async function close () {
    if (closed) return
    try {
      await flush()
      if (writing) await writing
      await sealActive()
    } finally {
      closed = true
      releaseWriter()
      if (retryTimer) clearTimeout(retryTimer)
    }
  }

  function stats () {
    return {
      bufferedLines: buffer.length,
      activeLines: active ? active.lines : 0,
      sealedFiles: sealed.length,
      sealedLines: sealed.reduce((n, f) => n + f.lines, 0),
      errors,
      lastError: lastError && (lastError.code || lastError.message)
    }
  }

  /** Lines appended but not yet sealed into a file ready for replay. */
  function unsealedLines () {
    return buffer.length + (active ? active.lines : 0)
  }

  return { dir: opts.dir, writerId: opts.writerId, append, flush, seal, nextSealed, remove, claimOrphans, close, stats, unsealedLines }
}

/**
 * Journal files in a directory (any writer), for tests and tools.
 * @param {string} dir
 * @returns {string[]}
 */
function journalFiles (dir) {
  try {
    return fs.readdirSync(dir).filter((n) => FILE_PATTERN.test(n)).map((n) => path.join(dir, n))
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
}

module.exports = { createJournal, holdWriter, formatRecord, parseRecord, readRecords, journalFiles, FILE_PATTERN }
