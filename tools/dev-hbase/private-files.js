'use strict'

/**
 * An instance's data dir holds beacon's access log (visitor IPs and user agents), so everything
 * under its state dir is this user's only, whatever umask the caller runs with: folders 0700,
 * files 0600. The JVMs start under umask 077 and Hadoop applies it to the modes it sets itself
 * (java/BeaconPrivateLocalFileSystem.java); what this module writes gets explicit modes.
 */

const fs = require('node:fs')
const path = require('node:path')

const GROUP_OTHER = 0o077
const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600

/**
 * Creates `dir` (and its missing parents) 0700.
 * @param {string} dir
 */
function mkdirPrivate (dir) {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
}

/**
 * Creates `file` 0600 if it does not exist, so that a JVM that appends to it keeps that mode.
 * @param {string} file
 */
function touchPrivate (file) {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE))
}

/**
 * Narrows a tree an older version (or another umask) left readable by others: every folder and
 * file under `dir` loses the group and other bits. Unless `always`, only when `dir` itself is
 * open, so that a large tree costs one stat on every start after the first.
 * @param {string} dir
 * @param {{ always?: boolean }} [when] always: walk a small tree even when its top is private
 * @returns {number} how many entries were narrowed
 */
function narrowTree (dir, { always = false } = {}) {
  let top
  try {
    top = fs.lstatSync(dir)
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return 0
    throw err
  }
  if (!top.isDirectory() || (!always && (top.mode & GROUP_OTHER) === 0)) return 0
  let narrowed = 0
  const visit = (/** @type {string} */ at, /** @type {fs.Stats} */ stat) => {
    if (stat.isSymbolicLink()) return
    if (stat.mode & GROUP_OTHER) {
      fs.chmodSync(at, stat.mode & 0o7700)
      narrowed++
    }
    if (!stat.isDirectory()) return
    for (const name of fs.readdirSync(at)) {
      const child = path.join(at, name)
      try {
        visit(child, fs.lstatSync(child))
      } catch (err) {
        // A running JVM of another instance may delete its files meanwhile.
        if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err
      }
    }
  }
  visit(dir, top)
  return narrowed
}

/**
 * The command and arguments that run `cmd args` under umask 077 (the shell execs it: same pid).
 * @param {string} cmd
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
function underPrivateUmask (cmd, args) {
  return ['/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', cmd, ...args]]
}

module.exports = { mkdirPrivate, touchPrivate, narrowTree, underPrivateUmask, PRIVATE_FILE }
