'use strict'

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const path = require('node:path')
const { ERRORS } = require('../../../lib/errors')
const { NAME_CHAR_CODES, isSafeName } = require('../../../lib/names')

/**
 * The on-disk format shared by the spill journal and the write-ahead log, and what is done with
 * a file that turns out to be damaged.
 *
 * A file is NDJSON, one access-log row per line: `{"k":"<row key>","v":<entry JSON>}`. Names
 * are `j-<pid>-<writerId>-<digits>.ndjson`. A damaged file (a record cut short, garbage, not a
 * regular file, unreadable) is never deleted: it is renamed `<its original name>.damaged-<ms>`,
 * which no writer claims again, and left for the operator.
 */

const FILE_PATTERN = /^j-(\d+)-([A-Za-z0-9_-]+)-(\d+)\.ndjson$/
const QUARANTINE_PATTERN = /^j-\d+-[A-Za-z0-9_-]+-\d+\.ndjson\.damaged-\d+$/
const RECORD_HEAD = '{"k":"'
const RECORD_MID = '","v":'
// Errors that say "this disk has no room", as opposed to a disk that fails.
// Errors that pass by themselves: a file that meets one is tried again later, not quarantined.
/** @type {ReadonlySet<string|undefined>} (has() takes an error's code, which may be missing) */
const TRANSIENT_CODES = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY', 'ENOMEM', 'EINTR'])

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
 * @param {number} pid
 * @returns {boolean} whether a process with this pid runs on this machine
 */
function pidRunning (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM' // exists, owned by someone else
  }
}

/**
 * Whether a file name is a journal or write-ahead-log file of a writer that no longer runs: its
 * pid is gone, or it is this process and the writer is not open here.
 * @param {string} dir
 * @param {string} name
 * @param {number} ownPid
 * @param {boolean} [anyPid] every other pid counts as gone (a disk copied from another host,
 *   where a running pid here is some unrelated process)
 * @returns {boolean}
 */
function isOrphan (dir, name, ownPid, anyPid = false) {
  const m = FILE_PATTERN.exec(name)
  if (!m) return false
  const pid = Number(m[1])
  if (pid === ownPid) return !liveWriters.has(`${path.resolve(dir)}\0${m[2]}`)
  return anyPid || !pidRunning(pid)
}

/**
 * @param {string} key row key (letters, digits, `_`, `-`)
 * @param {string} value the entry's JSON
 * @returns {string} one journal line, without the newline
 */
function formatRecord (key, value) {
  return RECORD_HEAD + key + RECORD_MID + value + '}'
}

/** @param {string} key */
function isKey (key) {
  if (key.length === 0) return false
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    if (c > 127 || NAME_CHAR_CODES[c] === 0) return false
  }
  return true
}

/**
 * @param {string} line
 * @param {boolean} [verify] JSON.parse the value too (else only its shape is checked)
 * @returns {{ key: string, value: string }|null} null when the line is not a whole record
 */
function parseRecord (line, verify = false) {
  if (!line.startsWith(RECORD_HEAD) || line.charCodeAt(line.length - 1) !== 125 /* } */) return null
  const end = line.indexOf(RECORD_MID, RECORD_HEAD.length)
  if (end === -1) return null
  const key = line.slice(RECORD_HEAD.length, end)
  const value = line.slice(end + RECORD_MID.length, -1)
  if (!isKey(key) || value.charCodeAt(0) !== 123 /* { */) return null
  if (verify && !isWholeValue(value)) return null
  return { key, value }
}

/**
 * Whether a record's value is one whole JSON object. parseRecord checks only the shape; a line
 * made of a record cut short and the next record glued to it has that shape too, and only a
 * parse tells it apart. The replay checks each batch just before sending it, so a big file is
 * never parsed in one long stretch of the event loop.
 * @param {string} value
 * @returns {boolean}
 */
function isWholeValue (value) {
  try {
    const parsed = JSON.parse(value)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
  } catch {
    return false
  }
}

/**
 * Parses up to `max` lines of a journal file's bytes from offset `from`. A line that is not a
 * whole record (a record cut short by a crash or a full disk, garbage, an empty line) is counted
 * as corrupt and skipped; the file's last line is JSON-checked too, since a cut there is the
 * common case. The bytes stay bytes: only each line becomes a string.
 * @param {Buffer} bytes
 * @param {number} from
 * @param {number} max lines
 * @param {number} [end] bytes past it are not read yet (default bytes.length)
 * @param {boolean} [final] the file ends at `end` (default true); if not, a last line without
 *   its newline is left for the next call, when more of it has been read
 * @returns {{ records: Array<{ key: string, value: string }>, corrupt: number, next: number }}
 *   next: where the next call starts (`end` once all is parsed)
 */
function parseLines (bytes, from, max, end = bytes.length, final = true) {
  const view = end === bytes.length ? bytes : bytes.subarray(0, end) // a reused buffer: stale bytes past end
  const records = []
  let corrupt = 0
  while (from < end && records.length + corrupt < max) {
    let to = view.indexOf(0x0a, from)
    const last = to === -1
    if (last && !final) break
    if (last) to = end
    const record = to > from ? parseRecord(view.toString('utf8', from, to), last) : null
    if (record) records.push(record)
    else corrupt++
    from = to + 1
  }
  return { records, corrupt, next: Math.min(from, end) }
}

/**
 * Reads a journal file whole (parseLines).
 * @param {string} file
 * @param {{ readFile: (file: string) => Promise<Buffer> }} [io] default node:fs/promises
 * @returns {Promise<{ records: Array<{ key: string, value: string }>, corrupt: number }>}
 */
async function readRecords (file, io = fsp) {
  const { records, corrupt } = parseLines(await io.readFile(file), 0, Infinity)
  return { records, corrupt }
}

/**
 * Counts the lines of a file (a last line without its newline counts).
 * @param {string} file
 * @param {{ open: typeof fsp.open }} [io] default node:fs/promises
 * @returns {Promise<number>}
 */
async function countFileLines (file, io = fsp) {
  const fh = await io.open(file, 'r')
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

/**
 * Renames a damaged file out of every writer's way: `<original name>.damaged-<ms>` in the same
 * directory. Never deletes it.
 * @param {string} file where it is now
 * @param {string} originalName the name it had when it was found (a claimed file is renamed)
 * @param {{ rename: typeof fsp.rename }} [io] default node:fs/promises
 * @returns {Promise<string>} the new path
 */
async function quarantineFile (file, originalName, io = fsp) {
  const to = path.join(path.dirname(file), `${originalName}.damaged-${Date.now()}`)
  await io.rename(file, to)
  return to
}

/** @param {string} dir @param {RegExp} pattern @returns {string[]} */
function listMatching (dir, pattern) {
  try {
    return fs.readdirSync(dir).filter((n) => pattern.test(n)).map((n) => path.join(dir, n))
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return []
    throw err
  }
}

/**
 * Journal files in a directory (any writer), for tests and tools.
 * @param {string} dir
 * @returns {string[]}
 */
function journalFiles (dir) {
  return listMatching(dir, FILE_PATTERN)
}

/**
 * Quarantined (damaged) journal and write-ahead-log files in a directory.
 * @param {string} dir
 * @returns {string[]}
 */
function quarantinedFiles (dir) {
  return listMatching(dir, QUARANTINE_PATTERN)
}

module.exports = {
  FILE_PATTERN,
  QUARANTINE_PATTERN,
  TRANSIENT_CODES,
  holdWriter,
  pidRunning,
  isOrphan,
  formatRecord,
  RECORD_HEAD,
  RECORD_MID,
  parseRecord,
  isWholeValue,
  parseLines,
  readRecords,
  countFileLines,
  quarantineFile,
  journalFiles,
  quarantinedFiles
}
