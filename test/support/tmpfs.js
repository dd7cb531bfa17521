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
 * Unmounts every file system mounted at or under `root`, deepest and newest first: what a run
 * that was killed before its cleanup left mounted there.
 * @param {string} root
 * @returns {string[]} the mount points unmounted
 */
function unmountAllUnder (root) {
  const prefix = path.resolve(root)
  const points = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n')
    .map((line) => line.split(' ')[1])
    .filter((point) => point && (point === prefix || point.startsWith(prefix + path.sep)))
    .reverse() // newest first: a point mounted twice comes off one layer at a time
    .sort((a, b) => b.length - a.length)
  for (const point of points) unmount(point)
  return points
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

module.exports = { CAN_MOUNT, mountTmpfs, unmount, unmountAllUnder, fillDisk }
