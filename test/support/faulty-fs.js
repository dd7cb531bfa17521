'use strict'

// A node:fs/promises stand-in over the real file system, for unit tests of what the journal
// does when the disk misbehaves: writes through its file handles share a byte budget (a disk
// that fills up: the write that crosses it goes through in part, the next fails with ENOSPC),
// reads of chosen files fail with a chosen errno, and a read can be held until the test lets it
// go (a slow disk, at the moment the test picks). Everything else is the real call.

const fsp = require('node:fs/promises')

function fsError (code, syscall, file) {
  return Object.assign(new Error(`${code}: injected, ${syscall} '${file}'`), { code, syscall, path: file })
}

/**
 * @param {{ freeBytes?: number }} [options] bytes the "disk" takes before it is full
 */
function createFaultyFs ({ freeBytes = Infinity } = {}) {
  const state = { freeBytes, writes: 0, refused: 0 }
  /** @type {Map<number, { code: string, calls: string[], opensSpared: number }>} inode → what fails (survives renames) */
  const readErrors = new Map()
  /** @type {Map<number, { opensSpared: number, gate: { held: Promise<void>, reached: () => void } }>} inode → a read held */
  const heldReads = new Map()

  async function faultOf (file) {
    if (readErrors.size === 0) return null
    const st = await fsp.stat(file).catch(() => null)
    return (st && readErrors.get(st.ino)) || null
  }

  /** The gate of the handle just opened on `ino`, if a read of it is held (once). */
  function heldGate (ino) {
    const held = heldReads.get(ino)
    if (!held || held.opensSpared-- > 0) return null
    heldReads.delete(ino)
    return held.gate
  }

  async function failRead (file, call) {
    const fault = await faultOf(file)
    if (fault && fault.calls.includes(call)) throw fsError(fault.code, call, file)
  }

  /**
   * @param {import('node:fs/promises').FileHandle} fh
   * @param {number|null} [ino] the file's inode, for reads through this handle that may fail ('read')
   * @param {string} [file]
   * @param {boolean} [spared] reads through this handle never fail
   * @param {{ held: Promise<void>, reached: () => void }|null} [gate] the first read through
   *   this handle says it has begun, then waits
   */
  function wrap (fh, ino = null, file = '', spared = false, gate = null) {
    return {
      fd: fh.fd,
      async write (buffer, offset, length, position) {
        state.writes++
        if (state.freeBytes <= 0) {
          state.refused++
          throw fsError('ENOSPC', 'write', '')
        }
        const n = Math.min(length, state.freeBytes)
        const { bytesWritten } = await fh.write(buffer, offset, n, position)
        state.freeBytes -= bytesWritten
        return { bytesWritten, buffer }
      },
      async truncate (len) {
        const { size } = await fh.stat()
        await fh.truncate(len)
        if (size > len) state.freeBytes += size - len
      },
      async read (...args) {
        if (gate) {
          const { held, reached } = gate
          gate = null
          reached()
          await held
        }
        // Looked up at each read, so healReads() mends a handle already open.
        const fault = ino === null || spared ? undefined : readErrors.get(ino)
        if (fault && fault.calls.includes('read')) throw fsError(fault.code, 'read', file)
        return fh.read(...args)
      },
      stat: (...args) => fh.stat(...args),
      datasync: () => fh.datasync(),
      close: () => fh.close()
    }
  }

  const io = {
    ...fsp,
    async open (file, flags, mode) {
      if (flags !== 'r') return wrap(await fsp.open(file, flags, mode))
      await failRead(file, 'open')
      const fault = await faultOf(file)
      const spared = fault !== null && fault.opensSpared-- > 0
      const fh = await fsp.open(file, flags)
      const ino = (await fh.stat()).ino
      return wrap(fh, ino, String(file), spared, heldGate(ino))
    },
    async readFile (file, options) {
      await failRead(String(file), 'readFile')
      return fsp.readFile(file, options)
    }
  }

  return {
    io: /** @type {typeof fsp} */ (/** @type {unknown} */ (io)),
    state,
    /**
     * Reads of this file (by inode, so after a rename too) fail with `code`: opening it for
     * reading ('open', which counting its lines does), reading through an open handle ('read',
     * which the replay does) and reading it whole ('readFile'), or only the calls named.
     * @param {string} file
     * @param {string} code
     * @param {string[]} [calls]
     * @param {{ opensSpared?: number }} [options] reads through the first `opensSpared` handles
     *   opened for reading work (the claim counts a file's lines through one; the replay's is next)
     */
    async failReads (file, code, calls = ['open', 'read', 'readFile'], { opensSpared = 0 } = {}) {
      readErrors.set((await fsp.stat(file)).ino, { code, calls, opensSpared })
    },
    /** Reads work again. */
    healReads () {
      readErrors.clear()
    },
    /**
     * The first read through the next handle opened to read this file (after `opensSpared`
     * handles) waits until release() is called.
     * @param {string} file
     * @param {{ opensSpared?: number }} [options]
     * @returns {Promise<{ reading: Promise<void>, release: () => void }>} reading: that read has
     *   begun and waits
     */
    async holdRead (file, { opensSpared = 0 } = {}) {
      let release = () => {}
      let reached = () => {}
      const held = new Promise((resolve) => { release = resolve })
      const reading = new Promise((resolve) => { reached = resolve })
      heldReads.set((await fsp.stat(file)).ino, { opensSpared, gate: { held, reached } })
      return { reading, release }
    }
  }
}

module.exports = { createFaultyFs }
