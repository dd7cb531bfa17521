'use strict'

/**
 * One sealed journal file ready for replay: sealed by this writer or claimed from one that
 * died. The journal makes and owns it (path, size, lines counted when it was sealed or
 * claimed); `replay` is the replayer's slot, where its read of the file stands, which the
 * journal never reads.
 */
class JournalFile {
  #lines

  /** @type {import('../file-reads').ReplayProgress|null} the replayer's (file-reads.js), from its first read */
  replay = null

  /**
   * @param {string} filePath where it is now
   * @param {{ lines: number, bytes: number, from?: string }} counted its lines and bytes; `from`,
   *   the name it had when it was claimed from another writer
   */
  constructor (filePath, { lines, bytes, from = undefined }) {
    this.path = filePath
    this.bytes = bytes
    this.from = from
    this.#lines = lines
  }

  /** @returns {number} its lines, as counted in the sink's books */
  get lines () {
    return this.#lines
  }

  /** @returns {string} how logs name it: the name it was claimed under, else its path */
  get name () {
    return this.from || this.path
  }

  /**
   * The replay read more lines than were counted (a file that grew after its claim): those
   * are its lines now.
   * @param {number} seen lines the replay read
   */
  adoptLines (seen) {
    if (seen > this.#lines) this.#lines = seen
  }
}

module.exports = { JournalFile }
