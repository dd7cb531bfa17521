'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { serializeEntry } = require('./access-entry')
const { createRollWriter } = require('./file-writer')
const { DiskBuffer } = require('./disk-buffer')
const { createFileHistory } = require('./file-history')
const { SINK_DEFAULTS, SINK_INTERNALS, DURABILITIES } = require('../config/defaults')
const { ERRORS } = require('../lib/errors')
const { isSafeName } = require('../lib/names')
const { settleBy, TIMED_OUT } = require('../lib/deadline')

const DEFAULTS = Object.freeze({
  ...SINK_DEFAULTS.file,
  ...SINK_INTERNALS.file,
  createWriter: createRollWriter,
  // The process's group commit (group-commit.js): in a durable mode, the lines of one turn are
  // written together, before the turn's answers go out. Without one, each on its own.
  groupCommit: /** @type {import('./group-commit').GroupCommit|null} */ (null)
})
// Date part of rotated names, so a restart never appends to an older period's file.
/** @type {Record<string, string>} by rotateFrequency */
const DATE_FORMATS = { daily: 'yyyy-MM-dd', hourly: 'yyyy-MM-dd-HH' }

/**
 * The file access-log sink: one JSON line per entry, written by pino-roll (sonic-boom) with
 * size and time rotation.
 *
 * The request thread only serializes the entry and pushes the line onto an array. In durability
 * 'process' (the default) and 'host', the lines of one event-loop turn are joined and written in
 * one write(2) at the end of the turn, before their answers go out (group-commit.js), by a
 * synchronous sonic-boom ('host' adds an fsync). In 'memory', every `batchMs` (or at
 * `maxBatchLines`) the lines are joined and handed to an asynchronous sonic-boom in this process
 * (the write(2) runs on libuv's pool, one at a time): the lines of those milliseconds die with a
 * killed process.
 *
 * Batching is what matters: thread-stream and sonic-boom both pay per write call. The
 * in-process destination costs the cores the cluster workers need less than a worker thread,
 * starts without one, and its close never blocks on Atomics.wait: it is the one destination
 * (the measurements: docs/access-log.md, "Sinks").
 *
 * Lines are the compact entry exactly. They go straight to pino's destination: a pino logger
 * would add `"level":30` to every line (its level key cannot be removed without producing
 * invalid JSON) and walk the keys one by one, for nothing.
 *
 * Each cluster worker writes its own files: `access.log` with workerTag "w1" becomes
 * `access-w1.<date>.<n>.log`, so workers never rotate or delete each other's files.
 *
 * A disk that refuses writes (full, failing): the lines wait in memory and the write is tried
 * again every `retryMs`; at most `maxPendingLines` lines wait (handed over or not), and past
 * that a line is shed and counted by reason (disk_full, write_error, or write_backlog when the
 * disk is merely slower than the lines come). stats().writeFailing names the error while it
 * lasts; /readyz and /metrics show it. The books: accepted == written + pending + shed.
 *
 * @param {object} options
 * @param {string} options.path absolute path; the name is the pattern (`.../access.log`)
 * @param {string|number} [options.rotateSize] "100m", "512k", "1g" (pino-roll units)
 * @param {'daily'|'hourly'|number} [options.rotateFrequency] or a period in ms
 * @param {number} [options.keepFiles] rotated files kept besides the one being written
 * @param {string} [options.workerTag] appended to the file name ("w1")
 * @param {number} [options.batchMs] how long lines wait to be handed over together
 * @param {number} [options.maxBatchLines] hand over at once when this many lines wait
 * @param {number} [options.closeTimeoutMs] bound on waiting for the writer to finish in close()
 * @param {number} [options.maxPendingLines] lines not yet written that may wait in memory
 * @param {number} [options.retryMs] wait before trying a refused write again
 * @param {typeof createRollWriter} [options.createWriter] the destination (tests inject failures)
 * @param {'memory'|'process'|'host'} [options.durability] process (the default): each turn's lines
 *   are written (write(2), on this thread) before their answers go out, so a crash of the process
 *   loses none; host adds an fsync per write; memory batches them for batchMs on libuv's pool
 * @param {import('./group-commit').GroupCommit|null} [options.groupCommit]
 * @param {{ warn: Function, error?: Function, info?: Function }} [options.logger]
 */
function createFileSink (options) {
  const opts = { ...DEFAULTS, ...options }
  if (typeof opts.path !== 'string' || !path.isAbsolute(opts.path)) {
    throw new ERRORS.INVALID_OPTION('file sink: path must be an absolute path')
  }
  if (opts.workerTag != null && !isSafeName(opts.workerTag, 32)) {
    throw new ERRORS.INVALID_OPTION('file sink: workerTag must match [A-Za-z0-9_-]{1,32}')
  }
  if (!Number.isInteger(opts.keepFiles) || opts.keepFiles < 1) {
    throw new ERRORS.INVALID_OPTION('file sink: keepFiles must be an integer >= 1')
  }
  if (!Number.isInteger(opts.maxPendingLines) || opts.maxPendingLines < 1) {
    throw new ERRORS.INVALID_OPTION('file sink: maxPendingLines must be an integer >= 1')
  }
  if (!DURABILITIES.includes(opts.durability)) {
    throw new ERRORS.INVALID_OPTION(`file sink: durability must be one of ${DURABILITIES.join(', ')}`)
  }
  const durable = opts.durability !== 'memory'
  const { base, extension } = baseName(opts.path, opts.workerTag)
  const writer = opts.createWriter({
    file: base,
    extension,
    size: opts.rotateSize,
    frequency: opts.rotateFrequency,
    dateFormat: DATE_FORMATS[opts.rotateFrequency] ||
      (typeof opts.rotateFrequency === 'number' ? 'yyyy-MM-dd-HHmmss' : undefined),
    limit: { count: opts.keepFiles, removeOtherLogFiles: true },
    mkdir: true,
    mode: 0o600, // clients' addresses: this user's only, whatever the umask
    sync: durable,
    fsync: opts.durability === 'host'
  })

  const history = createFileHistory({
    files: () => sinkFiles(base, extension),
    keepFiles: opts.keepFiles,
    rotateFrequency: opts.rotateFrequency,
    onShort: (fields) => log('warn', fields,
      'file access log: a rotation deleted history younger than keepFiles promise')
  })
  if (writer.onCleanup) writer.onCleanup(history.check)

  /** @type {string[]} lines not yet handed to the writer */
  let batch = []
  /** @type {NodeJS.Timeout|null} */
  let batchTimer = null
  let accepted = 0
  let written = 0
  let errors = 0
  let rejectedAfterClose = 0
  /** @type {string|null} */
  let lastError = null
  /** @type {Promise<{ lostInMemory: number }>|null} */
  let closing = null
  const disk = new DiskBuffer({
    what: 'file access log',
    maxLines: opts.maxPendingLines,
    retryMs: opts.retryMs,
    waiting: pendingLines,
    retry,
    log,
    fields: () => ({ pending: pendingLines(), shed })
  })
  let waitingForOpen = false
  const shedBy = { disk_full: 0, write_error: 0, write_backlog: 0 }
  let shed = 0

  /** @param {unknown} err a write's or the close's */
  function recordError (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    errors++
    lastError = e.code || e.message
  }

  /** @param {string} level @param {object} fields @param {string} message */
  function log (level, fields, message) {
    const logger = /** @type {Record<string, Function|undefined>|undefined} */ (opts.logger)
    if (logger && typeof logger[level] === 'function') logger[level]({ file: base, ...fields }, message)
  }

  // A write failed: lines wait in memory (bounded by maxPendingLines) and the writer retries
  // every retryMs, no more often, so a full disk never turns into a busy loop.
  writer.onError((err) => {
    recordError(err)
    disk.failed(err)
  })

  writer.onWritten(() => {
    disk.worked()
    if (batch.length && !batchTimer) batchTimer = setTimeout(handOver, 0)
  })

  function retry () {
    if (!disk.failure && writer.ready()) return
    writer.retry()
    disk.armRetry()
  }

  function pendingLines () {
    return batch.length + writer.unconfirmed()
  }

  function handOver () {
    if (batchTimer) {
      clearTimeout(batchTimer)
      batchTimer = null
    }
    if (batch.length === 0) return
    // Failing: the lines wait here; the retry hands them over once a write works.
    if (disk.failure) {
      disk.armRetry()
      return
    }
    if (!writer.ready()) {
      waitForOpen()
      return
    }
    const chunk = batch.join('')
    const lines = batch.length
    batch = []
    writer.write(chunk, lines)
  }

  /** The group commit's Committer: this turn's lines in one write(2), before their answers. */
  const committer = { commit: handOver }

  function waitForOpen () {
    if (waitingForOpen) return
    waitingForOpen = true
    writer.settled().then(() => {
      waitingForOpen = false
      if (writer.ready()) handOver()
    })
  }

  // A graceful exit without close() (process.exit in a handler) still gets the waiting lines
  // out, if the disk takes them: prepended, so it runs before pino's own exit hook.
  function onExit () {
    if (batch.length === 0) return
    if (writer.writeSync(batch.join(''), disk.failure !== null)) batch = []
  }
  process.prependListener('exit', onExit)

  /**
   * Serializes the entry and queues the line. Never throws, never does I/O. Past
   * `maxPendingLines` lines not yet written, the line is shed and counted by reason.
   * @param {import('./access-entry').AccessEntry} entry
   */
  function write (entry) {
    if (closing) {
      rejectedAfterClose++
      return
    }
    let line
    try {
      line = serializeEntry(entry) + '\n'
    } catch (err) {
      recordError(err) // not serializable (a BigInt, a cycle): counted, never thrown
      return
    }
    accepted++
    if (!disk.hasRoom()) {
      shed++
      shedBy[disk.refusalReason()]++
      return
    }
    batch.push(line)
    if (durable) {
      // Written with the rest of this turn's lines, before their answers; else now.
      if (opts.groupCommit) opts.groupCommit.enlist(committer)
      else handOver()
      return
    }
    if (batch.length === opts.maxBatchLines) {
      if (batchTimer) clearTimeout(batchTimer)
      batchTimer = setTimeout(handOver, 0)
    } else if (!batchTimer) {
      batchTimer = setTimeout(handOver, opts.batchMs)
    }
  }

  /**
   * Resolves once every line accepted so far (and not shed) is written to the file; rejects
   * with the writer's error if it cannot be.
   * @returns {Promise<void>}
   */
  async function flush () {
    const upTo = accepted - shed
    await writer.settled()
    if (disk.failure) await writer.flush() // tries what failed again; rejects if the disk still refuses
    handOver()
    await writer.flush()
    if (upTo > written) written = upTo
  }

  /**
   * Flushes, then ends the writer (closes the file). Idempotent; never rejects. The caller's
   * budget (`{ timeoutMs }`) bounds the wait for the writer to finish, default closeTimeoutMs.
   * Lines the disk would not take by then are lost with the process: logged, left in
   * stats().pending, and counted in the answer.
   * @param {{ timeoutMs?: number }} [budget]
   * @returns {Promise<{ lostInMemory: number }>}
   */
  function close ({ timeoutMs = opts.closeTimeoutMs } = {}) {
    if (closing) return closing
    const deadline = Date.now() + timeoutMs
    closing = (async () => {
      disk.stop()
      try {
        if (await settleBy(flush(), deadline) === TIMED_OUT) {
          throw Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })
        }
      } catch (err) {
        recordError(err)
      }
      process.removeListener('exit', onExit)
      await writer.end(Math.max(0, deadline - Date.now()))
      const left = stats().pending
      if (left > 0) log('error', { pending: left, lastError }, 'file access log closed with lines it could not write')
      return { lostInMemory: left }
    })()
    return closing
  }

  /**
   * accepted == written + pending + shed. pending: in memory, at most maxPendingLines.
   * @returns {{ accepted: number, written: number, pending: number, shed: number,
   *   shedBy: Record<string, number>, writeFailing: string|null, errors: number,
   *   rejectedAfterClose: number, lastError: string|null, durability: string,
   *   history: ReturnType<ReturnType<typeof createFileHistory>['stats']> }}
   */
  function stats () {
    const confirmed = writer.confirmed()
    if (confirmed > written) written = confirmed
    return {
      accepted,
      written,
      pending: accepted - shed - written,
      shed,
      shedBy: { ...shedBy },
      writeFailing: disk.failure?.code ?? null,
      errors,
      rejectedAfterClose,
      lastError,
      durability: opts.durability,
      history: history.stats()
    }
  }

  /** This sink's files (every rotation still on disk), oldest first. */
  function files () {
    return sinkFiles(base, extension)
  }

  return { type: /** @type {'file'} */ ('file'), base, durable, write, flush, close, stats, files }
}

/** @param {string} filePath @param {string|null} [workerTag] */
function baseName (filePath, workerTag) {
  const ext = path.extname(filePath)
  const stem = path.basename(filePath, ext)
  const name = workerTag ? `${stem}-${workerTag}` : stem
  return { base: path.join(path.dirname(filePath), name), extension: (ext || '.log').slice(1) }
}

/** @param {string} base @param {string} extension @returns {string[]} */
function sinkFiles (base, extension) {
  const dir = path.dirname(base)
  const prefix = path.basename(base) + '.'
  let names
  try {
    names = fs.readdirSync(dir)
  } catch (caught) {
    const err = /** @type {NodeJS.ErrnoException} */ (caught)
    if (err.code === 'ENOENT') return []
    throw err
  }
  return names
    .filter((n) => n.startsWith(prefix) && n.endsWith('.' + extension) &&
      /^[0-9.-]+$/.test(n.slice(prefix.length, -extension.length - 1)))
    .map((n) => path.join(dir, n))
    .sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs)
}

module.exports = { createFileSink, DEFAULTS }
