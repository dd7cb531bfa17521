'use strict'

// Small file systems a test makes itself, to fill up: tmpfs mounts (root only), and a filler
// file that leaves a chosen amount of room.

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

/** Whether this process may mount file systems (tmpfs needs root). */
const CAN_MOUNT = typeof process.getuid === 'function' && process.getuid() === 0

/**
 * Mounts a fresh tmpfs of `mib` MiB at `dir` (created if missing).
 * @param {string} dir
 * @param {number} mib
 * @returns {string} dir
 */
function mountTmpfs (dir, mib) {
  fs.mkdirSync(dir, { recursive: true })
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir])
  return dir
}

/**
 * Unmounts `dir`; says so rather than throws if it cannot.
 * @param {string} dir
 */
function unmount (dir) {
  try {
    execFileSync('umount', [dir])
  } catch (err) {
    console.warn(`could not unmount ${dir}: ${err.message}`)
  }
}

/**
 * Writes a filler file so that about `leaveBytes` stay free on the file system of `dir`.
 * @param {string} dir
 * @param {number} leaveBytes
 * @returns {string} the filler's path: delete it to give the room back
 */
function fillDisk (dir, leaveBytes) {
  const st = fs.statfsSync(dir)
  const filler = path.join(dir, 'filler')
  fs.writeFileSync(filler, Buffer.alloc(Math.max(0, st.bavail * st.bsize - leaveBytes)))
  return filler
}

module.exports = { CAN_MOUNT, mountTmpfs, unmount, fillDisk }
