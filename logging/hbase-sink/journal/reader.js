'use strict'

const { parseLines } = require('./files')

/**
 * Reads the records of one journal (or write-ahead-log) file a batch at a time, through one
 * buffer of fixed size that the caller may reuse for file after file. The replay of a big
 * backlog reads several 16 MiB files a second; reading each whole allocated a file-sized buffer
 * per file, and those (kept until a full collection, then left to the C allocator) grew a
 * worker's RSS by ~100 MiB for good. A block at a time, the memory a replay holds is one buffer.
 *
 * A line longer than the buffer is no record beacon writes (an entry is a few hundred bytes):
 * it is skipped to its newline and counted as one corrupt line.
 */
class RecordReader {
  /**
   * @param {{ read: (buffer: Buffer, offset: number, length: number, position: number) =>
   *     Promise<{ bytesRead: number }>,
   *   close: () => Promise<void> }} handle an open file (node:fs/promises FileHandle)
   * @param {Buffer} buffer where blocks are read; its size is the longest line taken
   * @param {number} [from] file offset to start at (a line boundary: consumed() of an earlier reader)
   */
  constructor (handle, buffer, from = 0) {
    this.handle = handle
    this.buffer = buffer
    this.position = from // file offset of the next read
    this.start = 0 // first byte not parsed yet
    this.end = 0 // end of the bytes read into the buffer
    this.eof = false
    this.skipping = false // inside a line longer than the buffer
    this.closed = false
  }

  /**
   * Up to `max` lines, in file order: the whole records among them, and how many were not.
   * Empty (no records, corrupt 0) once the file is read through.
   * @param {number} max
   * @returns {Promise<{ records: Array<{ key: string, value: string }>, corrupt: number }>}
   */
  async next (max) {
    const records = []
    let corrupt = 0
    for (;;) {
      if (this.skipping) corrupt += this.skipLongLine()
      if (!this.skipping) {
        const got = parseLines(this.buffer, this.start, max - records.length - corrupt, this.end, this.eof)
        for (const record of got.records) records.push(record)
        corrupt += got.corrupt
        this.start = got.next
      }
      if (records.length + corrupt >= max || (this.eof && this.start >= this.end)) return { records, corrupt }
      await this.fill()
    }
  }

  /** @returns {number} 1 once the end of the long line is found (or the file ends), else 0 */
  skipLongLine () {
    const newline = this.buffer.indexOf(0x0a, this.start)
    if (newline !== -1 && newline < this.end) {
      this.start = newline + 1
      this.skipping = false
      return 1
    }
    this.start = this.end
    if (!this.eof) return 0
    this.skipping = false
    return 1
  }

  /** Moves the bytes not parsed yet (a line not read whole) to the front and reads more after them. */
  async fill () {
    if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.end)
      this.end -= this.start
      this.start = 0
    }
    if (this.end === this.buffer.length) {
      // No newline in a whole buffer: a line too long to be a record.
      this.skipping = true
      this.start = this.end = 0
    }
    const { bytesRead } = await this.handle.read(this.buffer, this.end, this.buffer.length - this.end, this.position)
    if (bytesRead === 0) this.eof = true
    this.end += bytesRead
    this.position += bytesRead
  }

  /**
   * @returns {number} the file offset up to which lines were returned: where a new reader of
   *   this file starts to go on (inside a line too long to take, where the skip got to: the
   *   rest of that line then counts as one more corrupt line)
   */
  consumed () {
    return this.position - (this.end - this.start)
  }

  /** Closes the file (once). */
  async close () {
    if (this.closed) return
    this.closed = true
    await this.handle.close()
  }
}

module.exports = { RecordReader }
