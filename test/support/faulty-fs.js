'use strict'

// A node:fs/promises stand-in over the real file system, for unit tests of what the journal
// does when the disk misbehaves: writes through its file handles share a byte budget (a disk
// that fills up: the write that crosses it goes through in part, the next fails with ENOSPC),
// and reads of chosen files fail with a chosen errno. Everything else is the real call.

const fsp = require('node:fs/promises')

function fsError (code, syscall, file) {
  return Object.assign(new Error(`${code}: injected, ${syscall} '${file}'`), { code, syscall, path: file })
}

/**
 * @param {{ freeBytes?: number }} [options] bytes the "disk" takes before it is full
 */
function createFaultyFs ({ freeBytes = Infinity } = {}) {
  const state = { freeBytes, writes: 0, refused: 0 }
  /** @type {Map<number, { code: string, calls: string[] }>} inode → what fails (survives renames) */
  const readErrors = new Map()

  async function failRead (file, call) {
    if (readErrors.size === 0) return
    const st = await fsp.stat(file).catch(() => null)
    const fault = st && readErrors.get(st.ino)
    if (fault && fault.calls.includes(call)) throw fsError(fault.code, call, file)
  }

  function wrap (fh) {
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
      read: (...args) => fh.read(...args),
      stat: (...args) => fh.stat(...args),
      datasync: () => fh.datasync(),
      close: () => fh.close()
    }
  }

  const io = {
    ...fsp,
    async open (file, flags) {
      if (flags === 'r') await failRead(file, 'open')
      return wrap(await fsp.open(file, flags))
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
     * reading ('open', which counting its lines does) and reading it whole ('readFile', which
     * the replay does), or only the calls named.
     * @param {string} file
     * @param {string} code
     * @param {string[]} [calls]
     */
    async failReads (file, code, calls = ['open', 'readFile']) {
      readErrors.set((await fsp.stat(file)).ino, { code, calls })
    },
    /** Reads work again. */
    healReads () {
      readErrors.clear()
    }
  }
}

module.exports = { createFaultyFs }
