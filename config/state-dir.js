'use strict'

/**
 * The state dir holds what no other local user may read: journals and write-ahead logs of
 * access entries (full IPs and user agents), file logs, the admin token. `npm start` makes it
 * and everything beacon (and the embedded HBase it starts) creates in it private, whatever the
 * umask it was started with: folders 0700, files 0600.
 */

const fs = require('node:fs')

/** Permission bits for group and others. */
const GROUP_OTHER = 0o077

/**
 * Sets this process's umask to 077 (its workers, the rollup process and the embedded HBase
 * inherit it), creates the state dir 0700 and, when it exists with wider permissions and
 * belongs to this user, narrows it to 0700.
 * @param {string} stateDir
 * @returns {{ narrowed: boolean }} narrowed: an existing state dir was readable by others
 */
function makeStatePrivate (stateDir) {
  process.umask(GROUP_OTHER)
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  const stat = fs.statSync(stateDir)
  const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid()
  if (!mine || (stat.mode & GROUP_OTHER) === 0) return { narrowed: false }
  fs.chmodSync(stateDir, 0o700)
  return { narrowed: true }
}

module.exports = { makeStatePrivate, GROUP_OTHER }
