'use strict'

const fs = require('node:fs')
const path = require('node:path')

const PINO_ROLL = require.resolve('pino-roll')
// Room a synchronous write at exit wants beyond its own bytes before it is tried at all.
const EXIT_MARGIN_BYTES = 64 * 1024

/**
 * pino-roll's destination: a sonic-boom, with the fields it has that its types leave out.
 * @typedef {import('sonic-boom').SonicBoom & { file?: string, fd: number, destroyed: boolean }} RollDest
 */

/**
 * The file sink's destination: pino-roll in this thread, a sonic-boom with size and time
 * rotation, writing on libuv's pool, or with `sync` (a durability that needs the lines in the
 * kernel before the answers go out) on the caller's stack. It keeps the books the sink needs: how
 * many of the lines handed over are confirmed written (sonic-boom reports written bytes).
 *
 * A write that fails (a full disk) leaves sonic-boom holding the unwritten bytes; retry() tries
 * them again (and re-opens the file set if pino-roll could not open it at all). The caller
 * stops handing over lines meanwhile, so what waits here is bounded by what it handed before.
 *
 * @param {{ file: string, sync: boolean, fsync?: boolean } & Record<string, unknown>} rollOptions pino-roll's
 *   options (sonic-boom's: sync, fsync)
 */
function createRollWriter (rollOptions) {
  /** @type {Array<(err: Error) => void>} */
  const errorHandlers = []
  /** @type {Array<(bytes: number) => void>} */
  const writtenHandlers = []
  /** @type {Array<() => void>} */
  const cleanupHandlers = []
  /** @type {RollDest|null} */
  let dest = null
  /** @type {Promise<void>|null} */
  let opening = null
  /** @type {Error|null} */
  let setupError = null
  // Lines whose bytes sonic-boom reported written: [cumulative bytes, cumulative lines] marks.
  /** @type {Array<[number, number]>} */
  const marks = []
  let handedBytes = 0
  let handedLines = 0
  let doneBytes = 0
  let doneLines = 0

  /** @param {Error} err */
  function emitError (err) {
    for (const fn of errorHandlers) fn(err)
  }

  function open () {
    setupError = null
    // minLength > 0 makes sonic-boom's flush(cb) wait for in-flight writes (with 0 it calls
    // back at once); the sink already hands over whole batches, so 1 byte is enough.
    // sync (durability process, host): each write(2) happens in write(), on the caller's stack.
    opening = require(PINO_ROLL)({ ...rollOptions, minLength: 1 }).then((/** @type {RollDest} */ d) => {
      dest = d
      d.on('error', emitError)
      // After a rotation, pino-roll deletes the files past its limit and says so.
      d.on('cleanup-complete', () => { for (const fn of cleanupHandlers) fn() })
      d.on('write', (/** @type {number} */ n) => {
        doneBytes += n
        let i = 0
        while (i < marks.length && marks[i][0] <= doneBytes) doneLines = marks[i++][1]
        if (i) marks.splice(0, i)
        for (const fn of writtenHandlers) fn(n)
      })
    }, (/** @type {Error} */ err) => {
      setupError = err
      emitError(err)
    }).finally(() => { opening = null })
    return opening
  }
  open()

  // The opening of the file set, done (a retry may start another meanwhile).
  async function settled () {
    for (let o = opening; o; o = opening) await o
  }

  return {
    /** @returns {Promise<void>} resolves once the file set is open, or opening it failed */
    settled,

    /** @param {(err: Error) => void} fn */
    onError (fn) { errorHandlers.push(fn) },

    /** @param {(bytes: number) => void} fn called after each write that went through */
    onWritten (fn) { writtenHandlers.push(fn) },

    /** @param {() => void} fn called after each rotation's cleanup of old files */
    onCleanup (fn) { cleanupHandlers.push(fn) },

    /** @returns {boolean} the file is open and takes lines */
    ready () {
      return dest !== null && !dest.destroyed
    },

    /**
     * @param {string} chunk whole lines
     * @param {number} lines how many
     */
    write (chunk, lines) {
      handedBytes += Buffer.byteLength(chunk)
      handedLines += lines
      marks.push([handedBytes, handedLines])
      const target = /** @type {RollDest} */ (dest) // the caller checks ready() first
      target.write(chunk)
    },

    /** Tries the bytes that failed again, or the opening of the file set if that failed. */
    retry () {
      if (opening) return
      if (setupError) {
        open()
        return
      }
      if (dest && !dest.destroyed) dest.flush()
    },

    /** @returns {number} lines confirmed written */
    confirmed () { return doneLines },

    /** @returns {number} lines handed over and not yet confirmed written */
    unconfirmed () { return handedLines - doneLines },

    /**
     * Writes `chunk` and whatever sonic-boom holds synchronously, at process exit. Skipped when
     * the disk is failing or has no room for it: sonic-boom's flushSync retries a failed write
     * forever, which would hang the exit.
     * @param {string} chunk
     * @param {boolean} failing
     * @returns {boolean} whether it was written
     */
    writeSync (chunk, failing) {
      if (failing || !dest || dest.destroyed || dest.fd < 0) return false
      const need = Buffer.byteLength(chunk) + (handedBytes - doneBytes) + EXIT_MARGIN_BYTES
      try {
        const st = fs.statfsSync(path.dirname(dest.file || rollOptions.file))
        if (st.bavail * st.bsize < need) return false
        dest.write(chunk)
        dest.flushSync()
        return true
      } catch {
        return false
      }
    },

    async flush () {
      await settled()
      if (setupError) throw setupError
      const target = /** @type {RollDest} */ (dest) // settled() without setupError: the file set is open
      await new Promise((resolve, reject) => target.flush((err) => (err ? reject(err) : resolve(undefined))))
    },

    /** @param {number} timeoutMs */
    async end (timeoutMs) {
      await settled()
      if (!dest || dest.destroyed) return
      const target = dest
      const closed = await new Promise((resolve) => {
        const timer = setTimeout(resolve, timeoutMs, false)
        target.once('close', () => {
          clearTimeout(timer)
          resolve(true)
        })
        target.end()
      })
      // Not closed in time (a disk that refuses the last bytes): let go of the file anyway.
      if (!closed && !dest.destroyed) dest.destroy()
    }
  }
}

module.exports = { createRollWriter }
