'use strict'

/**
 * `beacon journal replay`: sends the journal and write-ahead-log files of a state dir to HBase
 * through the HBase access-log sinks themselves (logging/index.js createSinks), so it does
 * exactly what a beacon starting on that dir would: claim the orphan files, replay every whole
 * record under its own row key (a second run rewrites the same rows), count and quarantine
 * damaged files. The sinks take no live entries here, and no rollup job runs (the minutes the
 * replay writes are marked; a running beacon's job counts them).
 */

const { loadSettings } = require('../config')
const { createSinks } = require('../logging')
const { createHBaseClientFrom } = require('../config/hbase-client')
const { inventory } = require('../logging/hbase-sink/journal/inventory')
const { sortLeft } = require('./journal-format')
const { embeddedHBaseStatus } = require('../config/embedded-hbase')

// A pass that wrote nothing is tried once more after this wait (a region that was moving).
const RETRY_MS = 1000
const IDLE_PASSES = 2

/**
 * @param {object} options
 * @param {string} options.stateDir absolute, an existing directory
 * @param {boolean} options.all claim the files of running pids too
 * @param {(message: string) => Error} options.fail the error of a settings or HBase problem (exit 2)
 * @param {NodeJS.ProcessEnv} [options.env]
 * @returns {Promise<import('./journal-format').ReplayReport>}
 */
async function replayStateDir ({ stateDir, all, fail, env = process.env }) {
  let settings
  try {
    settings = loadSettings({ env, overrides: { stateDir } })
  } catch (err) {
    throw fail(err.message)
  }
  // journalDir is resolved against stateDir by loadSettings, so against --state-dir here.
  const specs = Object.entries(settings.logSinks).filter(([, spec]) => spec.type === 'hbase')
  if (specs.length === 0) throw fail('the settings declare no hbase access-log sink: there is nothing to replay into')
  const bootstrap = await hbaseAddress(settings, fail)
  const client = await connect(settings, bootstrap, fail)

  // No write-ahead log: no live entry comes in here, so it would only make files.
  const sinkSettings = Object.fromEntries(specs.map(([name, spec]) =>
    [name, { ...spec, durable: false, claimLiveFiles: all }]))
  let sinks
  try {
    const logger = /** @type {any} */ (stderrLogger())
    sinks = createSinks(sinkSettings, { client, stateDir, writerId: `cli${process.pid}`, logger })
  } catch (err) {
    await client.destroy()
    throw fail(err.message)
  }
  try {
    for (const sink of sinks.values()) await drain(sink)
  } finally {
    await sinks.closeAll()
    await client.close()
  }

  const sinkReports = specs.map(([name, spec]) => {
    // An hbase sink's counters (logging/hbase-sink/index.js stats()): the ones a replay reports.
    const s = /** @type {{ claimed: number, replayed: number, corrupt: number, quarantinedFiles: number,
      journalPending: number, journalBuffered: number, lastError: string|null }} */ (sinks.get(name).stats())
    return {
      sink: name,
      table: spec.table,
      dir: spec.journalDir,
      claimed: s.claimed,
      written: s.replayed,
      corrupt: s.corrupt,
      quarantinedFiles: s.quarantinedFiles,
      left: s.journalPending + s.journalBuffered,
      lastError: s.lastError || null
    }
  })
  const sinkDirs = specs.map(([, spec]) => spec.journalDir)
  const { skipped, left } = sortLeft(await inventory(stateDir, { extraDirs: sinkDirs }),
    { sinkDirs, ownPid: process.pid })
  const sum = (rows, key) => rows.reduce((n, r) => n + r[key], 0)
  return {
    stateDir,
    hbase: bootstrap.join(','),
    all,
    sinks: sinkReports,
    skipped,
    left,
    totals: {
      written: sum(sinkReports, 'written'),
      corrupt: sum(sinkReports, 'corrupt'),
      quarantinedFiles: sum(sinkReports, 'quarantinedFiles'),
      skippedEntries: sum(skipped, 'entries'),
      leftEntries: sum(left, 'entries')
    }
  }
}

/**
 * The configured HBase, else the embedded local one of this checkout when it serves.
 * @param {import('../config/load').Settings} settings
 * @param {(message: string) => Error} fail
 * @returns {Promise<string[]>}
 */
async function hbaseAddress (settings, fail) {
  if (settings.hbase.bootstrap.length > 0) return [...settings.hbase.bootstrap]
  let local
  try {
    local = await embeddedHBaseStatus()
  } catch (err) {
    throw fail(`no HBase address set, and the embedded local HBase could not be looked at: ${err.message}`)
  }
  if (local.running && local.serving) return local.bootstrap
  throw fail('no HBase to replay into: set BEACON_HBASE_BOOTSTRAP=host:port[,...] ' +
    '(the embedded local HBase of this checkout is not running)')
}

/**
 * A client that has reached HBase once, so nothing is claimed when HBase cannot be reached.
 * @param {import('../config/load').Settings} settings
 * @param {string[]} bootstrap
 * @param {(message: string) => Error} fail
 */
async function connect (settings, bootstrap, fail) {
  let client
  try {
    client = createHBaseClientFrom(settings, { bootstrap })
    await client.ping({ timeout: settings.hbase.operationTimeoutMs })
    return client
  } catch (err) {
    if (client) await client.destroy()
    throw fail(`HBase at ${bootstrap.join(',')} cannot be reached: ${err.code || err.message} ` +
      '(BEACON_HBASE_BOOTSTRAP names it)')
  }
}

/**
 * Replay passes until the sink's journal is empty, or until passes stop getting anywhere (HBase
 * refuses or stopped answering).
 * @param {any} sink an HBase sink
 * @returns {Promise<boolean>} true when its journal is empty
 */
async function drain (sink) {
  const progress = () => {
    const s = sink.stats()
    return s.replayed + s.corrupt + s.quarantinedFiles
  }
  let idle = 0
  for (;;) {
    const before = progress()
    if (await sink.replay()) return true
    if (progress() !== before) {
      idle = 0
      continue
    }
    if (++idle >= IDLE_PASSES) return false
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
}

/**
 * The sinks' warnings and errors (a file quarantined, HBase refusing), one line each on stderr.
 * @returns {{ debug: () => void, info: () => void, warn: (fields: any, message: string) => void,
 *   error: (fields: any, message: string) => void }}
 */
function stderrLogger () {
  const line = (fields, message) => {
    const f = fields || {}
    const what = ['file', 'to', 'lines', 'reason', 'code'].filter((k) => f[k] !== undefined).map((k) => `${k} ${f[k]}`)
    const err = f.err ? `: ${f.err.code || f.err.message}` : ''
    process.stderr.write(`beacon: ${message}${err}${what.length ? ` (${what.join(', ')})` : ''}\n`)
  }
  return { debug () {}, info () {}, warn: line, error: line }
}

module.exports = { replayStateDir }
