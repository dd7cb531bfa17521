'use strict'

const fs = require('node:fs')
const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')

const POM = path.join(__dirname, 'pom.xml')
const PROGRESS_EVERY_MS = 3000
// "Downloaded from central: https://…/x.jar (1.2 MB at 3.4 MB/s)"
const DOWNLOADED = /^\[INFO\] Downloaded from [^:]+: (\S+) \(([\d.]+) (B|kB|KB|MB|GB)/
const UNIT = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 }

/**
 * The HBase runtime classpath (jar paths joined by ':'), cached per HBase version in the build dir.
 * A cache miss runs Maven, which from an empty ~/.m2 downloads ~130 MB, so progress is logged.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @param {{ log?: (line: string) => void }} [io]
 * @returns {Promise<string>}
 */
async function ensureClasspath (opts, { log = () => {} } = {}) {
  const cached = cachedClasspath(opts)
  if (cached) return cached

  fs.mkdirSync(path.dirname(opts.classpathFile), { recursive: true })
  const tmp = `${opts.classpathFile}.${process.pid}.tmp`
  const started = Date.now()
  log(`hbase: resolving HBase ${opts.version} jars with Maven (first run downloads ~130 MB)…`)
  await runMaven(['-B', '-Dstyle.color=never', '-f', POM, `-Dhbase.version=${opts.version}`,
    'dependency:build-classpath', `-Dmdep.outputFile=${tmp}`], log)
  const classpath = readCached(tmp)
  if (!classpath) throw new Error(`hbase: Maven succeeded but wrote no classpath to ${tmp}`)
  fs.renameSync(tmp, opts.classpathFile)
  log(`hbase: classpath ready (${classpath.split(':').length} jars) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return classpath
}

/**
 * The cached classpath, or null when ensureClasspath() would have to run Maven.
 * @param {Readonly<Record<string, any>>} opts from resolveOptions()
 * @returns {string|null}
 */
function cachedClasspath (opts) {
  return readCached(opts.classpathFile)
}

function readCached (file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8').trim()
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  // A cache pointing at jars that were since removed from ~/.m2 would start a broken JVM.
  const jars = text.split(':').filter(Boolean)
  if (jars.length === 0 || !jars.every((jar) => fs.existsSync(jar))) return null
  return jars.join(':')
}

function runMaven (args, log) {
  return new Promise((resolve, reject) => {
    let child
    try {
      child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      return reject(err)
    }
    const tail = []
    let files = 0
    let bytes = 0
    let reported = 0
    const report = () => {
      if (files === reported) return
      reported = files
      log(`hbase: resolving jars from Maven Central… ${files} files, ${(bytes / 1e6).toFixed(0)} MB`)
    }
    const timer = setInterval(report, PROGRESS_EVERY_MS)
    const onLine = (line) => {
      const m = DOWNLOADED.exec(line)
      if (m) {
        files++
        bytes += Number(m[2]) * UNIT[m[3]]
      }
      tail.push(line)
      if (tail.length > 40) tail.shift()
    }
    readline.createInterface({ input: child.stdout }).on('line', onLine)
    readline.createInterface({ input: child.stderr }).on('line', onLine)
    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      clearInterval(timer)
      reject(err.code === 'ENOENT' ? new Error('hbase: `mvn` not found on PATH (Maven 3 is needed to fetch HBase)') : err)
    })
    child.on('close', (code, signal) => {
      clearInterval(timer)
      report()
      if (code === 0) return resolve()
      const why = signal ? `was killed by ${signal}` : `exited with ${code}`
      reject(new Error(`hbase: mvn dependency:build-classpath ${why}; last output:\n${tail.join('\n')}`))
    })
  })
}

module.exports = { ensureClasspath, cachedClasspath }
