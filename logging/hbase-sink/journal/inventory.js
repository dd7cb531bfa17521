'use strict'

const fsp = require('node:fs/promises')
const path = require('node:path')
const { FILE_PATTERN, QUARANTINE_PATTERN, isWholeValue, pidRunning, countFileLines } = require('./files')
const { RecordReader } = require('./reader')
const { DEFAULTS: SINK } = require('../options')

/**
 * What the journal directories of a state dir hold, read-only (`beacon journal status`, and
 * what `beacon journal replay` left): each journal and write-ahead-log file with its writer and
 * its whole records and damaged lines, counted the way the replay counts them (the same
 * reader, block size and size limit), and the quarantined `.damaged-` files beside them.
 *
 * A sink's journal is `<stateDir>/journal` (the default sink's) or `<stateDir>/journal/<sink>`
 * (config/load.js), so that directory and the ones right under it are looked at.
 */

// Lines handed out per read: small enough that a record batch dies young.
const BATCH = 1000

/**
 * @typedef {{ name: string, kind: 'journal'|'wal', pid: number, running: boolean,
 *   entries: number, damagedLines: number, bytes: number, error?: string }} FileReport
 *   entries: whole records; damagedLines: lines that are not; error: why the replay will not
 *   read it (not a regular file, too big, unreadable) or stopped part-way
 * @typedef {{ dir: string, path: string, files: FileReport[], quarantined: Array<{ name: string, bytes: number }>,
 *   entries: number, damagedLines: number, bytes: number }} DirReport dir: relative to the state dir
 * @typedef {{ stateDir: string, dirs: DirReport[], totals: { files: number, entries: number,
 *   damagedLines: number, bytes: number, quarantined: number } }} Inventory
 */

/**
 * The journal directories of a state dir: `journal` and every directory right under it, plus
 * `extra` ones (a sink's journalDir set elsewhere), each once, those that exist.
 * @param {string} stateDir absolute
 * @param {string[]} [extra] absolute
 * @returns {Promise<string[]>}
 */
async function journalDirs (stateDir, extra = []) {
  const root = path.join(stateDir, 'journal')
  const dirs = [root]
  try {
    for (const entry of await fsp.readdir(root, { withFileTypes: true })) {
      // A directory with a journal file's name is a damaged file, not a sink's directory.
      if (entry.isDirectory() && !FILE_PATTERN.test(entry.name)) dirs.push(path.join(root, entry.name))
    }
  } catch (caught) {
    const err = /** @type {NodeJS.ErrnoException} */ (caught)
    if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err
  }
  const found = []
  for (const dir of new Set([...dirs, ...extra.map((d) => path.resolve(d))])) {
    const st = await fsp.stat(dir).catch(() => null)
    if (st && st.isDirectory()) found.push(dir)
  }
  return found
}

/**
 * Counts one file's whole records and damaged lines, a block at a time.
 * @param {string} file
 * @param {Buffer} buffer read buffer, reused from file to file
 * @returns {Promise<{ entries: number, damagedLines: number, bytes: number, error?: string }>}
 */
async function countFile (file, buffer) {
  let handle
  let bytes = 0
  try {
    handle = await fsp.open(file, 'r')
    const st = await handle.stat()
    if (!st.isFile()) {
      await handle.close()
      return { entries: 0, damagedLines: 0, bytes, error: 'not a regular file' }
    }
    bytes = st.size
  } catch (caught) {
    const err = /** @type {NodeJS.ErrnoException} */ (caught)
    if (handle) await handle.close().catch(() => {})
    // open(2) of a directory succeeds; other file types and I/O errors land here.
    return { entries: 0, damagedLines: 0, bytes, error: err.code || err.message }
  }
  if (bytes > SINK.maxReplayFileBytes) {
    // The replay takes a file bigger than any beacon writes as damage, every line of it.
    await handle.close()
    const lines = await countFileLines(file).catch(() => 0)
    return { entries: 0, damagedLines: lines, bytes, error: `EFBIG: over ${SINK.maxReplayFileBytes} bytes` }
  }
  const reader = new RecordReader(handle, buffer)
  let entries = 0
  let damagedLines = 0
  try {
    for (;;) {
      const { records, corrupt } = await reader.next(BATCH)
      if (records.length === 0 && corrupt === 0) break
      damagedLines += corrupt
      // The replay JSON-checks every value before it sends it; so does this.
      for (const record of records) {
        if (isWholeValue(record.value)) entries++
        else damagedLines++
      }
    }
  } catch (caught) {
    const err = /** @type {NodeJS.ErrnoException} */ (caught)
    return { entries, damagedLines, bytes, error: err.code || err.message }
  } finally {
    await reader.close().catch(() => {})
  }
  return { entries, damagedLines, bytes }
}

/**
 * @param {string} stateDir absolute
 * @param {string} dir absolute
 * @param {Buffer} buffer
 * @returns {Promise<DirReport>}
 */
async function inspectDir (stateDir, dir, buffer) {
  const names = (await fsp.readdir(dir).catch((err) => {
    if (err.code === 'ENOENT') return []
    throw err
  })).sort()
  /** @type {DirReport} */
  const report = {
    dir: path.relative(stateDir, dir) || '.',
    path: dir,
    files: [],
    quarantined: [],
    entries: 0,
    damagedLines: 0,
    bytes: 0
  }
  for (const name of names) {
    if (QUARANTINE_PATTERN.test(name)) {
      const st = await fsp.lstat(path.join(dir, name)).catch(() => null)
      report.quarantined.push({ name, bytes: st && st.isFile() ? st.size : 0 })
      continue
    }
    const m = FILE_PATTERN.exec(name)
    if (!m) continue
    const pid = Number(m[1])
    const counts = await countFile(path.join(dir, name), buffer)
    /** @type {FileReport} */
    const file = { name, kind: m[2].endsWith('-wal') ? 'wal' : 'journal', pid, running: pidRunning(pid), ...counts }
    report.files.push(file)
    report.entries += file.entries
    report.damagedLines += file.damagedLines
    report.bytes += file.bytes
  }
  return report
}

/**
 * Reads every journal directory of a state dir. Touches nothing: no file is claimed, renamed
 * or deleted, so it is safe beside a running beacon.
 * @param {string} stateDir
 * @param {{ extraDirs?: string[] }} [options] extraDirs: more journal directories (absolute)
 * @returns {Promise<Inventory>}
 */
async function inventory (stateDir, { extraDirs = [] } = {}) {
  const root = path.resolve(stateDir)
  const buffer = Buffer.allocUnsafe(SINK.replayReadBytes)
  const dirs = []
  for (const dir of await journalDirs(root, extraDirs)) dirs.push(await inspectDir(root, dir, buffer))
  const totals = { files: 0, entries: 0, damagedLines: 0, bytes: 0, quarantined: 0 }
  for (const d of dirs) {
    totals.files += d.files.length
    totals.entries += d.entries
    totals.damagedLines += d.damagedLines
    totals.bytes += d.bytes
    totals.quarantined += d.quarantined.length
  }
  return { stateDir: root, dirs, totals }
}

module.exports = { inventory, journalDirs, countFile }
