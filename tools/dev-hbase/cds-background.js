'use strict'

// The class-data archive (./cds.js), built off the start's path. `java -Xshare:dump` takes 17 CPU-s
// and, on a busy 2-core machine, over 30 s: awaited before a start it made the second start of a
// fresh checkout (in `npm test`, a fault test restarting its HBase mid-outage) wait that long. So
// `up` starts the build in a process of its own and starts HBase at once without the archive;
// the starts after the build map it. The build is bounded (the dump's own timeout), one at a time
// per archive (a lock file holds the builder's pid), and its output goes to a log beside the
// archive.

const fs = require('node:fs')
const { spawn } = require('node:child_process')
const { ensureArchive, listsReady } = require('./cds')
const { isAlive } = require('./server-process')

/**
 * Starts building the archive in a detached process if the recorded lists are ready (cds.js's
 * listsReady()), there is no archive and no build of it going on; returns at once.
 * @param {{ archive: string, listPrefix: string, flags: string[] } | null} files from cdsFiles()
 * @param {string} classpath the jars the archive is for
 * @param {{ minClasses?: number, quietMs?: number }} [ready] listsReady()'s thresholds
 * @returns {number|null} the builder's pid, or null when there is nothing to build
 */
function buildArchiveInBackground (files, classpath, ready) {
  if (!files || fs.existsSync(files.archive) || !listsReady(files, ready)) return null
  const lock = lockFile(files)
  if (!takeLock(lock)) return null
  const log = fs.openSync(`${files.archive}.build.log`, 'a')
  try {
    const child = spawn(process.execPath, [__filename, JSON.stringify({ files, classpath })], {
      detached: true,
      stdio: ['ignore', log, log]
    })
    fs.writeFileSync(lock, `${child.pid}\n`)
    child.unref()
    return child.pid ?? null
  } catch (err) {
    fs.rmSync(lock, { force: true })
    throw err
  } finally {
    fs.closeSync(log)
  }
}

/** @param {{ archive: string }} files */
function lockFile (files) {
  return `${files.archive}.building`
}

/** Creates the lock for this process, unless a live process holds it. */
function takeLock (lock) {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' })
      return true
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
    }
    const holder = Number(readOr(lock, '').trim())
    if (holder > 0 && isAlive(holder)) return false
    fs.rmSync(lock, { force: true }) // left by a builder that died
  }
  return false
}

function readOr (file, fallback) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return fallback
  }
}

if (require.main === module) {
  const { files, classpath } = JSON.parse(process.argv[2])
  const log = (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`)
  ensureArchive(files, classpath, { log })
    .catch((err) => log(`hbase: class-data archive build failed: ${err.stack || err.message}`))
    .finally(() => fs.rmSync(lockFile(files), { force: true }))
}

module.exports = { buildArchiveInBackground }
