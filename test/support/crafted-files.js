'use strict'

// Crafted journal / write-ahead-log files for the damage tests: orphans of a writer that is
// gone, whole records, garbage, and a set of damaged ones planted side by side.

const fs = require('node:fs')
const path = require('node:path')
const { formatRecord } = require('../../logging/hbase-sink/journal')
const { deadPid } = require('./pids')

const PID = deadPid()
let seq = 0

/**
 * Path of a new orphan file of a dead writer in `dir` (named as the journal names its files).
 * @param {string} dir
 * @param {string} [writer] writer id (end it in `-wal` for a write-ahead-log segment)
 * @returns {string}
 */
function orphanPath (dir, writer = 'gone') {
  return path.join(dir, `j-${PID}-${writer}-${Date.now()}${String(seq++).padStart(6, '0')}.ndjson`)
}

/**
 * An orphan file holding `content`.
 * @param {string} dir
 * @param {string|Buffer} content
 * @param {string} [writer]
 * @returns {string} its path
 */
function writeOrphan (dir, content, writer) {
  const file = orphanPath(dir, writer)
  fs.writeFileSync(file, content)
  return file
}

/**
 * The row key of record(tag, i): the access-log layout's (salt bucket, time, writer-seq).
 * @param {string} tag part of the key, to tell sets apart
 * @param {number} i
 * @returns {string}
 */
function recordKey (tag, i) {
  return `0${(i % 16).toString(16)}1700000000000${tag}-${i}`
}

/**
 * One journal record, without its newline.
 * @param {string} tag
 * @param {number} i
 * @returns {string}
 */
function record (tag, i) {
  return formatRecord(recordKey(tag, i), JSON.stringify({ ts: 1700000000000 + i, endpoint: 'sample5', id: String(i), status: 200 }))
}

/**
 * `n` whole records, each ending in a newline.
 * @param {string} tag
 * @param {number} n
 * @returns {string}
 */
function records (tag, n) {
  return Array.from({ length: n }, (_, i) => record(tag, i) + '\n').join('')
}

/**
 * Bytes of every kind, newlines among them, and how many lines they make.
 * @param {number} size
 * @returns {{ bytes: Buffer, lines: number }}
 */
function garbage (size) {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 7919 + 13) % 251
  const lines = bytes.filter((b) => b === 0x0a).length + (bytes[size - 1] === 0x0a ? 0 : 1)
  return { bytes, lines }
}

/**
 * Damaged orphans side by side in `dir`: a journal cut mid-record (whole records before the
 * cut), garbage, an empty file, a directory where a file should be.
 * @param {string} dir
 * @param {number} [whole] records before the cut
 * @returns {{ files: string[], whole: number, damagedLines: number }} damagedLines: lines that
 *   are not whole records (the cut one and the garbage's)
 */
function plantDamaged (dir, whole = 50) {
  const noise = garbage(8000)
  const directory = orphanPath(dir)
  fs.mkdirSync(directory)
  const files = [
    writeOrphan(dir, records('planted', whole) + record('planted', whole).slice(0, 40)),
    writeOrphan(dir, noise.bytes),
    writeOrphan(dir, ''),
    directory
  ]
  return { files, whole, damagedLines: 1 + noise.lines }
}

module.exports = { orphanPath, writeOrphan, recordKey, record, records, garbage, plantDamaged }
