'use strict'

const fs = require('node:fs')
const path = require('node:path')

/**
 * The HFiles of one column family of a table, as they lie under HBase's root dir:
 * `data/<namespace>/<table>/<region>/<family>/<hfile>`. Hidden files (a local file system's
 * `.crc`), the regions' `.regioninfo` and `recovered.edits`, and the `archive/` dir (files a
 * compaction replaced) are not the table's size and are left out.
 * @param {string} rootDir hbase.rootdir as a path
 * @param {string} table "name" or "namespace:name"
 * @param {string} family
 * @returns {{ bytes: number, files: number, regions: number }}
 */
function hfileBytes (rootDir, table, family) {
  const [namespace, name] = table.includes(':') ? table.split(':') : ['default', table]
  const tableDir = path.join(rootDir, 'data', namespace, name)
  let bytes = 0
  let files = 0
  let regions = 0
  for (const region of listDir(tableDir)) {
    if (!region.isDirectory() || region.name.startsWith('.')) continue
    regions++
    for (const file of listDir(path.join(tableDir, region.name, family))) {
      if (!file.isFile() || file.name.startsWith('.')) continue
      bytes += fs.statSync(path.join(tableDir, region.name, family, file.name)).size
      files++
    }
  }
  return { bytes, files, regions }
}

/**
 * @param {string} dir
 * @returns {fs.Dirent[]} its entries, none when it does not exist
 */
function listDir (dir) {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
}

module.exports = { hfileBytes }
