'use strict'

/**
 * What `beacon journal status` and `beacon journal replay` print, and their exit codes: pure
 * functions of an inventory (logging/hbase-sink/journal/inventory.js) and of a replay's report.
 */

const { plural } = require('./words')

// bin/beacon.js EXIT.OK and EXIT.ENTRIES_LEFT
const EXIT_OK = 0
const EXIT_ENTRIES_LEFT = 4

/**
 * @typedef {import('../logging/hbase-sink/journal/inventory').Inventory} Inventory
 * @typedef {import('../logging/hbase-sink/journal/inventory').FileReport} FileReport
 * @typedef {{ dir: string, name: string, kind: string, pid: number, entries: number, damagedLines: number,
 *   cause: 'running'|'not written'|'not claimed'|'no sink', reason: string }} LeftFile
 * @typedef {{ sink: string, table: string, dir: string, claimed: number, written: number, corrupt: number,
 *   quarantinedFiles: number, left: number, lastError: string|null }} SinkReport left: lines the sink still counts
 *   in its journal; lastError: the last error code it met (HBase's, a file's)
 * @typedef {{ stateDir: string, hbase: string, all: boolean, sinks: SinkReport[], skipped: LeftFile[],
 *   left: LeftFile[], totals: { written: number, corrupt: number, quarantinedFiles: number,
 *   skippedEntries: number, leftEntries: number } }} ReplayReport
 */

// Why a file is still on disk after a replay, and what to do about it.
const CAUSES = {
  running: { reason: 'its writer runs on this machine', hint: '--all takes them (only when no beacon uses this dir)' },
  'not written': { reason: 'HBase refused or did not answer', hint: 'run it again once HBase answers' },
  'not claimed': { reason: 'could not be claimed (see the messages above)', hint: 'run it again' },
  'no sink': {
    reason: 'no hbase sink of the settings uses this directory',
    hint: 'declare the sink it belongs to in the settings (BEACON_CONFIG_FILE)'
  }
}

/**
 * Entries that wait for a replay, and entries in the live files of writers running on this
 * machine (a live beacon's journal and write-ahead log: it replays or deletes them itself).
 * @param {Inventory} inv
 * @returns {{ waiting: number, live: number, livePids: number[] }}
 */
function split (inv) {
  let waiting = 0
  let live = 0
  const livePids = new Set()
  for (const f of inv.dirs.flatMap((d) => d.files)) {
    if (!f.running) {
      waiting += f.entries
    } else {
      live += f.entries
      livePids.add(f.pid)
    }
  }
  return { waiting, live, livePids: [...livePids].sort((a, b) => a - b) }
}

/**
 * @param {Inventory} inv
 * @returns {number} 0 when nothing waits to be replayed (live files of running writers do not
 *   wait), 4 when whole records do
 */
function statusCode (inv) {
  return split(inv).waiting > 0 ? EXIT_ENTRIES_LEFT : EXIT_OK
}

/** @param {FileReport} f @returns {string} */
function fileNote (f) {
  if (f.error) return `  (${f.error})`
  return f.bytes === 0 ? '  (empty)' : ''
}

/**
 * One line per journal directory, file and quarantined file.
 * @param {Inventory} inv
 * @returns {string}
 */
function statusText (inv) {
  const t = inv.totals
  const { waiting, live, livePids } = split(inv)
  const liveNote = live > 0 || livePids.length > 0
    ? `; ${entries(live)} in live files of running ${livePids.length === 1 ? 'pid' : 'pids'} ${livePids.join(', ')} ` +
      '(their writer replays them)'
    : ''
  const waits = waiting > 0 ? `${entries(waiting)} wait to be replayed` : 'nothing waits to be replayed'
  if (inv.dirs.length === 0) return `${inv.stateDir}: no journal directory; ${waits}`
  const lines = [`${inv.stateDir}: ${waits} (${plural(t.files, 'file')}, ${plural(t.damagedLines, 'damaged line')}, ` +
    `${t.bytes} bytes; ${t.quarantined} quarantined)${liveNote}`]
  const width = Math.max(0, ...inv.dirs.flatMap((d) => d.files.map((f) => f.name.length)))
  for (const d of inv.dirs) {
    lines.push(`${d.dir}  ${d.files.length
      ? `${entries(d.entries)}, ${plural(d.damagedLines, 'damaged line')}`
      : 'no files'}`)
    for (const f of d.files) {
      const writer = `pid ${f.pid} ${f.running ? 'running here' : 'not running'}`
      lines.push(`  ${f.name.padEnd(width)}  ${f.kind.padEnd(7)}  ${writer.padEnd(24)}  ${entries(f.entries)}, ` +
        `${plural(f.damagedLines, 'damaged line')}, ${f.bytes} bytes${fileNote(f)}`)
    }
    for (const q of d.quarantined) lines.push(`  quarantined  ${q.name}  ${q.bytes} bytes`)
  }
  return lines.join('\n')
}

/** @param {number} n @returns {string} */
function entries (n) {
  return `${n} ${n === 1 ? 'entry' : 'entries'}`
}

/**
 * Sorts what a replay left on disk: files a running writer owns (skipped: not claimed) and the
 * rest, each with why it is still there.
 * @param {Inventory} after the inventory once the replay is done
 * @param {{ sinkDirs: string[], ownPid: number }} how sinkDirs: the journal directories the
 *   replay's sinks read (absolute); ownPid: the replay's own (its claimed files carry it)
 * @returns {{ skipped: LeftFile[], left: LeftFile[] }}
 */
function sortLeft (after, { sinkDirs, ownPid }) {
  const skipped = []
  const left = []
  for (const d of after.dirs) {
    const covered = sinkDirs.includes(d.path)
    for (const f of d.files) {
      /** @type {LeftFile['cause']} */
      let cause = 'not claimed'
      if (!covered) cause = 'no sink'
      else if (f.pid === ownPid) cause = 'not written' // claimed by the replay, then not sent
      else if (f.running) cause = 'running'
      const { reason } = CAUSES[cause]
      /** @type {LeftFile} */
      const file = {
        dir: d.dir,
        name: f.name,
        kind: f.kind,
        pid: f.pid,
        entries: f.entries,
        damagedLines: f.damagedLines,
        cause,
        reason
      }
      if (cause === 'running') skipped.push(file)
      else left.push(file)
    }
  }
  return { skipped, left }
}

/**
 * @param {ReplayReport} report
 * @returns {number} 0 when every whole record was sent, 4 when entries are left on disk
 */
function replayCode (report) {
  const t = report.totals
  const unfinished = report.sinks.some((s) => s.left > 0)
  return t.leftEntries > 0 || t.skippedEntries > 0 || unfinished ? EXIT_ENTRIES_LEFT : EXIT_OK
}

/**
 * @param {ReplayReport} report
 * @returns {string}
 */
function replayText (report) {
  const lines = [`replayed ${report.stateDir} into HBase ${report.hbase}`]
  for (const s of report.sinks) {
    const why = s.left > 0 && s.lastError ? ` (last error ${s.lastError})` : ''
    lines.push(`  sink ${s.sink} (table ${s.table}, ${s.dir}): ${s.written} written, ` +
      `${plural(s.corrupt, 'damaged line')} skipped, ` +
      `${plural(s.quarantinedFiles, 'file')} quarantined, ${entries(s.left)} left${why}`)
  }
  const list = (files) => files.map((f) =>
    `  ${f.dir}/${f.name}  pid ${f.pid}  ${entries(f.entries)}, ${plural(f.damagedLines, 'damaged line')}`)
  if (report.skipped.length) {
    lines.push('skipped: their writer runs on this machine ' +
      '(a live beacon owns them; --all takes them, only when no beacon uses this dir):')
    lines.push(...list(report.skipped))
  }
  const causes = new Set(report.left.map((f) => f.cause))
  for (const cause of causes) {
    lines.push(`left on disk: ${CAUSES[cause].reason}:`)
    lines.push(...list(report.left.filter((f) => f.cause === cause)))
  }
  const t = report.totals
  const done = `${t.written} sent, ${plural(t.corrupt, 'damaged line')} skipped, ` +
    `${plural(t.quarantinedFiles, 'file')} quarantined`
  if (replayCode(report) === EXIT_OK) {
    lines.push(`done: every whole record sent (${done})`)
  } else {
    if (report.sinks.some((s) => s.left > 0)) causes.add('not written')
    if (report.skipped.length) causes.add('running')
    const hints = [...causes].map((c) => CAUSES[c].hint)
    lines.push(`not done: ${entries(t.leftEntries + t.skippedEntries)} still on disk (${done}); ${hints.join('; ')}`)
  }
  return lines.join('\n')
}

module.exports = { statusCode, statusText, sortLeft, replayCode, replayText }
