'use strict'

// Class-data sharing (AppCDS) for the HBase JVMs. A JVM that starts HBase spends most of its
// start-up CPU loading and verifying classes; an archive of those classes, mapped at start,
// takes about half of it away. That is the time `npm start`, every fault test's restart and each
// cluster JVM wait for on a 2-core machine.
//
// The archive is built from the JVMs' own record: a JVM started while there is no archive writes
// the classes it loads to a list (-XX:DumpLoadedClassList, free at run time); the next start
// builds the archive from the lists (`java -Xshare:dump`, once, in the background:
// ./cds-background.js) and the starts after it map it. An
// archive belongs to one java binary and one classpath (both in its name); the JVM checks it and
// runs without it if it does not match (-Xshare:auto), so a stale archive costs speed, never a
// start. The conf dir goes last on the classpath: an archive's classpath may not hold a
// non-empty directory, and at run time one may follow the archived jars.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { javaBin, serverJavaFlags } = require('./jvm')

const DUMP_TIMEOUT_MS = 180000

/**
 * Where the archive and the class lists for this java binary and classpath live.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions(): `cdsDir` ('' when off), `jvm`
 * @param {string} classpath the jars (no directories)
 * @returns {{ archive: string, listPrefix: string, flags: string[] } | null} flags: the JVM flags the
 *   archive is for (its collector must be the one the servers run)
 */
function cdsFiles (opts, classpath) {
  if (!opts.cdsDir) return null
  const java = fs.realpathSync(onPath(javaBin()))
  const { size, mtimeMs } = fs.statSync(java)
  const flags = serverJavaFlags(opts.jvm)
  const key = crypto.createHash('sha256')
    .update([java, size, mtimeMs, flags.join(' '), classpath].join('\0'))
    .digest('hex').slice(0, 16)
  const base = path.join(opts.cdsDir, `hbase-${key}`)
  return { archive: `${base}.jsa`, listPrefix: `${base}.classes`, flags }
}

/** The file a command name runs: itself if it is a path, else the first match on PATH. */
function onPath (command) {
  if (command.includes('/')) return command
  for (const dir of (process.env.PATH || '').split(':').filter(Boolean)) {
    const candidate = path.join(dir, command)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {}
  }
  throw new Error(`hbase: ${command} is not on PATH (install JDK 17 or set JAVA_HOME)`)
}

/**
 * The JVM flags that map the archive if there is one, else record this JVM's classes for it.
 * @param {{ archive: string, listPrefix: string } | null} files from cdsFiles()
 * @param {string} name the JVM's name in the instance (each records its own list)
 * @returns {string[]}
 */
function cdsFlags (files, name) {
  if (!files) return []
  if (fs.existsSync(files.archive)) return [`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:auto']
  fs.mkdirSync(path.dirname(files.archive), { recursive: true })
  return [`-XX:DumpLoadedClassList=${files.listPrefix}.${name}.${process.pid}.lst`]
}

/**
 * The flags that map the `light` profile's archive into a short-lived JVM (a tool run: setup, a
 * look at the cluster), whose flags are that profile's: the archive holds the HBase client
 * classes such a JVM loads, which then cost it about a third less CPU. Nothing when there is no
 * archive yet: the lists are the servers' to record.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {string} classpath the jars, first on the JVM's classpath
 * @returns {string[]}
 */
function shortLivedCdsFlags (opts, classpath) {
  const files = cdsFiles({ ...opts, jvm: 'light' }, classpath)
  return files && fs.existsSync(files.archive) ? [`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:auto'] : []
}

function listFiles (files) {
  const dir = path.dirname(files.listPrefix)
  const prefix = path.basename(files.listPrefix) + '.'
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.lst')).map((f) => path.join(dir, f))
}

/** The class names the JVMs recorded, each once (a list still being written may end mid-line). */
function recordedClasses (files) {
  const names = new Set()
  for (const file of listFiles(files)) {
    const text = fs.readFileSync(file, 'utf8')
    const lines = text.split('\n')
    if (!text.endsWith('\n')) lines.pop()
    // A class of a custom loader is listed with its source and ids local to that list: skipped.
    for (const line of lines) if (line && !line.startsWith('#') && !line.includes(' source: ')) names.add(line)
  }
  return [...names]
}

/**
 * Whether the recorded lists are worth an archive: a server JVM's start loads ~9,800 classes, a
 * ZooKeeper's ~800, so a build started from a ZooKeeper's list alone, or from lists JVMs are
 * still writing, would make an archive that misses most of them (and no list is recorded again
 * once there is one).
 * @param {{ listPrefix: string } | null} files from cdsFiles()
 * @param {{ minClasses?: number, quietMs?: number, now?: number }} [opts] at least this many
 *   classes, and no list written to for quietMs
 * @returns {boolean}
 */
function listsReady (files, { minClasses = 4000, quietMs = 5000, now = Date.now() } = {}) {
  if (!files) return false
  const lists = listFiles(files)
  if (quietMs > 0 && lists.some((file) => now - fs.statSync(file).mtimeMs < quietMs)) return false
  return lists.length > 0 && recordedClasses(files).length >= minClasses
}

/**
 * Builds the archive from the recorded class lists, if there are lists and no archive yet.
 * Written to a temporary file and renamed, so that two builds at once leave one whole archive.
 * @param {{ archive: string, listPrefix: string, flags: string[] } | null} files from cdsFiles()
 * @param {string} classpath the jars the archive is for
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<{ built: boolean, classes: number, ms: number }>}
 */
async function ensureArchive (files, classpath, { log = () => {} } = {}) {
  const started = Date.now()
  if (!files || fs.existsSync(files.archive)) return { built: false, classes: 0, ms: 0 }
  const classes = recordedClasses(files)
  if (classes.length === 0) return { built: false, classes: 0, ms: 0 }
  const tmp = `${files.archive}.${process.pid}.tmp`
  const list = `${tmp}.lst`
  fs.writeFileSync(list, classes.join('\n') + '\n')
  try {
    const args = [...files.flags, '-Xshare:dump', `-XX:SharedClassListFile=${list}`, `-XX:SharedArchiveFile=${tmp}`, '-cp', classpath]
    const { code, output } = await runJava(args)
    if (code !== 0 || !fs.existsSync(tmp)) {
      log(`hbase: no class-data archive (java -Xshare:dump exited ${code}); starting without one:\n${output.slice(-2000)}`)
      return { built: false, classes: classes.length, ms: Date.now() - started }
    }
    fs.renameSync(tmp, files.archive)
    for (const file of listFiles(files)) fs.rmSync(file, { force: true })
  } finally {
    fs.rmSync(list, { force: true })
    fs.rmSync(tmp, { force: true })
  }
  const ms = Date.now() - started
  log(`hbase: class-data archive of ${classes.length} classes built in ${(ms / 1000).toFixed(1)} s: ${files.archive}`)
  return { built: true, classes: classes.length, ms }
}

function runJava (args) {
  return new Promise((resolve) => {
    const child = spawn(javaBin(), args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: DUMP_TIMEOUT_MS })
    let output = ''
    const keep = (chunk) => { output = (output + chunk).slice(-20000) }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.on('error', (err) => resolve({ code: -1, output: err.message }))
    child.on('close', (code) => resolve({ code, output }))
  })
}

module.exports = { cdsFiles, cdsFlags, shortLivedCdsFlags, ensureArchive, listsReady }
