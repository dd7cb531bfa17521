'use strict'

const fs = require('node:fs')
const path = require('node:path')

/**
 * Counts entries (lines) in log files: every regular file of a directory, one file, or a list
 * of files. Symlinks are skipped so a `current.log` link never counts twice. A last line
 * without its newline (a crash mid-write) still counts.
 * @param {string|string[]} dirOrFiles
 * @returns {number}
 */
function countLines (dirOrFiles) {
  let files
  if (Array.isArray(dirOrFiles)) {
    files = dirOrFiles
  } else {
    let st
    try {
      st = fs.lstatSync(dirOrFiles)
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (err.code === 'ENOENT') return 0
      throw err
    }
    files = st.isDirectory() ? fs.readdirSync(dirOrFiles).map((n) => path.join(dirOrFiles, n)) : [dirOrFiles]
  }
  let total = 0
  const buf = Buffer.allocUnsafe(1 << 20)
  for (const file of files) {
    let st
    try {
      st = fs.lstatSync(file)
    } catch (caught) {
      const err = /** @type {NodeJS.ErrnoException} */ (caught)
      if (err.code === 'ENOENT') continue // rotated away meanwhile
      throw err
    }
    if (!st.isFile() || st.size === 0) continue
    const fd = fs.openSync(file, 'r')
    try {
      let last = 0x0a
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, null)
        if (n === 0) break
        const chunk = n === buf.length ? buf : buf.subarray(0, n)
        for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) total++
        last = chunk[n - 1]
      }
      if (last !== 0x0a) total++
    } finally {
      fs.closeSync(fd)
    }
  }
  return total
}

module.exports = { countLines }
