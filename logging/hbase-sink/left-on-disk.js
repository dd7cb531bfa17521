'use strict'

const fsp = require('node:fs/promises')
const path = require('node:path')
const { FILE_PATTERN, countFileLines } = require('./journal/files')

/**
 * What a writer leaves on its host's disk once it has closed: its journal files (claimed ones
 * included: a claim renames a file into the claimer's names) and its write-ahead log's, each
 * with its lines, which a later replay sends. Never throws: a file that cannot be read counts
 * with the entries it is known to hold (none), named all the same.
 * @param {string} dir the sink's journal directory
 * @param {string} prefix the writer's file-name prefix (journal.ownPrefix())
 * @param {typeof fsp | null} [io] default node:fs/promises
 * @returns {Promise<{ entries: number, files: Array<{ file: string, entries: number }> }>}
 */
async function leftOnDisk (dir, prefix, io) {
  const fs = io || fsp
  let names
  try {
    names = await fs.readdir(dir)
  } catch {
    return { entries: 0, files: [] }
  }
  const files = []
  let entries = 0
  for (const name of names.sort()) {
    if (!name.startsWith(prefix) || !FILE_PATTERN.test(name)) continue
    const file = path.join(dir, name)
    const lines = await countFileLines(file, fs).catch(() => 0)
    entries += lines
    files.push({ file, entries: lines })
  }
  return { entries, files }
}

module.exports = { leftOnDisk }
