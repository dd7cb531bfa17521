'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { javaBin, shortLivedJavaFlags, javacFlags } = require('./jvm')
const { shortLivedCdsFlags } = require('./cds')
const { underPrivateUmask } = require('./private-files')

const JAVA_DIR = path.join(__dirname, 'java')
// setup/shutdown (BeaconHBaseTool), read-only views (BeaconHBaseInspect: cluster, dump), the
// Java client load of packages/hbase-client/bench/run.js --client java (BeaconHBaseLoad), and a table's
// flush, major compaction and reopen (BeaconHBaseStore: tools/bench/log-bytes.js), and the
// local file system every JVM of an instance uses (BeaconPrivateLocalFileSystem: site-config.js).
const CLASSES = ['BeaconHBaseTool', 'BeaconHBaseInspect', 'BeaconHBaseLoad', 'BeaconHBaseStore', 'BeaconPrivateLocalFileSystem']
const SOURCES = CLASSES.map((name) => path.join(JAVA_DIR, `${name}.java`))

/**
 * Compiles the tool's Java sources into the build dir's `classes` unless every class file is
 * newer than every source and the classpath it was compiled against.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {string} classpath
 * @returns {Promise<void>}
 */
async function ensureToolCompiled (opts, classpath) {
  await ensureCompiled({ dir: opts.classesDir, classes: CLASSES, sources: SOURCES, classpath, newerThan: [opts.classpathFile] })
}

/**
 * Compiles `sources` into `dir` unless each of `classes` there is newer than every source and
 * every file of `newerThan`. The processes of one test run call this at once: each compiles
 * into a directory of its own and moves it into place whole, so that no JVM loads a class file
 * still being written; when another one finished first, its classes are kept.
 * @param {{ dir: string, classes: string[], sources: string[], classpath: string, newerThan?: string[] }} what
 * @returns {Promise<void>}
 */
async function ensureCompiled ({ dir, classes, sources, classpath, newerThan = [] }) {
  const current = () => {
    const built = Math.min(...classes.map((name) => mtime(path.join(dir, `${name}.class`))))
    return built > Math.max(...[...sources, ...newerThan].map(mtime))
  }
  if (current()) return
  const tmp = `${dir}.${process.pid}.tmp`
  fs.rmSync(tmp, { recursive: true, force: true })
  fs.mkdirSync(tmp, { recursive: true })
  try {
    const javac = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'javac') : 'javac'
    const { code, output } = await run(javac, [...javacFlags(), '-nowarn', '-cp', classpath, '-d', tmp, ...sources])
    if (code !== 0) throw new Error(`hbase: javac ${sources.join(' ')} failed (exit ${code}):\n${output}`)
    if (current()) return
    const old = `${dir}.${process.pid}.old`
    if (fs.existsSync(dir)) fs.renameSync(dir, old)
    try {
      fs.renameSync(tmp, dir)
    } catch (err) {
      if (!current()) throw err // ENOTEMPTY: another process moved its build in meanwhile
    }
    fs.rmSync(old, { recursive: true, force: true })
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * Runs one tool command (`setup`, `shutdown`; with tool 'BeaconHBaseInspect': `cluster`, `dump`;
 * with 'BeaconHBaseStore': `flush`, `compact`, `reopen`) and returns its JSON summary.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {string} classpath
 * @param {string[]} args command and its arguments
 * @param {{ stdinLines?: Iterable<string>, signal?: AbortSignal, tool?: string }} [io] lines for
 *   the tool's stdin (written lazily); a signal that kills the tool JVM when aborted; the class
 * @returns {Promise<Record<string, any>>}
 */
async function runTool (opts, classpath, args, { stdinLines, signal, tool = CLASSES[0] } = {}) {
  // Its HBase client writes into the instance's data dir too (hbase.tmp.dir/local/jars).
  const [cmd, cmdArgs] = underPrivateUmask(javaBin(), toolJvmArgs(opts, classpath, tool, args))
  const { code, signal: killedBy, stdout, output } = await run(cmd, cmdArgs, { stdinLines, signal })
  if (code !== 0) {
    const why = killedBy ? `was killed by ${killedBy}` : `exited with ${code}`
    throw new Error(`hbase: tool ${args[0]} ${why} (details in ${opts.toolLogFile}):\n${lastLines(output, 20)}`)
  }
  const line = stdout.trim().split('\n').pop()
  try {
    return JSON.parse(line)
  } catch {
    throw new Error(`hbase: tool ${args[0]} printed no JSON summary:\n${lastLines(output, 20)}`)
  }
}

/**
 * The `java` arguments that run one of the tool classes (compiled by ensureToolCompiled()).
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {string} classpath
 * @param {string} tool class name
 * @param {string[]} args command and its arguments
 * @param {string[]} [flags] the JVM's flags: by default those of a run of seconds, with the light
 *   profile's class-data archive when there is one; a long, hot run (a load generator) passes
 *   jvm.js javaFlags()
 * @returns {string[]}
 */
function toolJvmArgs (opts, classpath, tool, args, flags) {
  return [
    ...(flags || [...shortLivedJavaFlags(), ...shortLivedCdsFlags(opts, classpath)]),
    `-Dlog4j.configuration=${pathToFileURL(path.join(opts.confDir, 'tool-log4j.properties')).href}`,
    // The jars first: a class-data archive covers a classpath's prefix of jars only (cds.js).
    '-cp', [classpath, opts.classesDir, opts.confDir].join(':'),
    tool, ...args
  ]
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ stdinLines?: Iterable<string>|null, signal?: AbortSignal }} [io]
 * @returns {Promise<{ code: number|null, signal: NodeJS.Signals|null, stdout: string, output: string }>}
 */
function run (cmd, args, { stdinLines = null, signal = undefined } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: [stdinLines ? 'pipe' : 'ignore', 'pipe', 'pipe'], signal })
    let stdout = ''
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (s) => { stdout += s; output += s })
    child.stderr.setEncoding('utf8').on('data', (s) => { output += s })
    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      if (err.name === 'AbortError') return // 'close' follows and reports the signal
      reject(err.code === 'ENOENT' ? new Error(`hbase: \`${cmd}\` not found (install JDK 17 or set JAVA_HOME)`) : err)
    })
    child.on('close', (code, sig) => resolve({ code, signal: sig, stdout, output }))
    if (stdinLines) writeLines(child.stdin, stdinLines)
  })
}

// The tool reads stdin only when it seeds, and exits without draining it otherwise.
async function writeLines (stream, lines) {
  stream.on('error', () => {})
  for (const line of lines) {
    if (stream.destroyed) return
    if (!stream.write(line + '\n')) await drainOrClose(stream)
  }
  stream.end()
}

function drainOrClose (stream) {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done)
      stream.off('close', done)
      resolve()
    }
    stream.on('drain', done)
    stream.on('close', done)
  })
}

function mtime (file) {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return 0
  }
}

function lastLines (text, n) {
  return text.trim().split('\n').slice(-n).join('\n')
}

module.exports = { ensureToolCompiled, ensureCompiled, runTool, toolJvmArgs }
