'use strict'

// The global Buffer is a getter in Node: a local binding keeps it off the hot path.
const { Buffer } = require('node:buffer')
const { formatRecord, RECORD_HEAD, RECORD_MID } = require('./files')

/**
 * An access-log entry's record, encoded once, when the entry is accepted: the line the
 * write-ahead log and the journal store (`{"k":"<row key>","v":<entry JSON>}` and a newline,
 * files.js), written into a shared slab of memory outside the JavaScript heap. The
 * HBase put sends views of the same bytes as its row key and cell value (rowOf, valueOf), so an
 * entry is converted to UTF-8 once, and an entry waiting for its acknowledgement holds one small
 * view, not its JSON as a string the garbage collector copies on every young-generation pass.
 */

/**
 * A slab's size: hundreds of entries. A slab is freed once no entry in it is held; entries leave
 * the queue in the order they came, so the slabs held are about the bytes of the entries held.
 */
const SLAB_BYTES = 64 * 1024
/** A record that could take more than this gets a buffer of its own (a rare long user agent). */
const MAX_POOLED_BYTES = SLAB_BYTES / 8
// Where the key starts (after `{"k":"`), the bytes between the key and the value (`","v":`), and
// after the value (`}` and the newline): the format is ASCII around the value.
const KEY_AT = RECORD_HEAD.length
const GAP_BYTES = RECORD_MID.length
const TAIL_BYTES = 2

/**
 * @returns {(key: string, value: string) => Buffer} the record's line, newline included (a view
 *   of a slab); key must be ASCII (a row key, as accessLogRowKey makes it), value the entry's JSON
 */
function createRecordEncoder () {
  /** @type {Buffer|null} */
  let slab = null
  let used = 0
  return function encodeRecord (key, value) {
    const text = formatRecord(key, value) + '\n'
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = 3 * text.length
    if (most > MAX_POOLED_BYTES) return Buffer.from(text, 'utf8')
    if (slab === null || SLAB_BYTES - used < most) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
      used = 0
    }
    const start = used
    used += slab.write(text, start, 'utf8')
    return slab.subarray(start, used)
  }
}

/**
 * @param {string} key the record's row key
 * @param {Buffer} line the record's line
 * @returns {Buffer} the row key's bytes, a view of the line
 */
function rowOf (key, line) {
  return line.subarray(KEY_AT, KEY_AT + key.length)
}

/**
 * @param {string} key the record's row key
 * @param {Buffer} line the record's line
 * @returns {Buffer} the entry JSON's bytes (the cell value), a view of the line
 */
function valueOf (key, line) {
  return line.subarray(KEY_AT + key.length + GAP_BYTES, line.length - TAIL_BYTES)
}

/**
 * A line in bytes of its own. An entry held for long (waiting for a retry) would keep its whole
 * slab alive, and with it entries long acknowledged: it moves out of the slab first.
 * @param {Buffer} line
 * @returns {Buffer}
 */
function ownBytes (line) {
  if (line.byteOffset === 0 && line.buffer.byteLength === line.length) return line
  const copy = Buffer.allocUnsafeSlow(line.length)
  line.copy(copy)
  return copy
}

/**
 * @param {Buffer} line a record's line
 * @returns {string} the line as the journal takes it, without its newline
 */
function lineText (line) {
  return line.toString('utf8', 0, line.length - 1)
}

module.exports = { createRecordEncoder, rowOf, valueOf, lineText, ownBytes }
