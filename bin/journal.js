'use strict'

/**
 * `beacon journal status` and `beacon journal replay`: the access log's spill journals and
 * write-ahead logs in a state dir, read and replayed from this machine with no beacon running
 * (the disk of a lost app host, mounted here). Rows for bin/beacon.js's COMMANDS table; they
 * run here, not through the admin API.
 *
 *   beacon journal status --state-dir DIR [--json]
 *     every journal / write-ahead-log file under DIR/journal (its writer pid and whether that
 *     pid runs here, whole records, damaged lines, bytes), the quarantined `.damaged-` files,
 *     totals. Reads only. Exit 0 nothing waits to be replayed, 4 whole records wait, 1 usage.
 *
 *   beacon journal replay --state-dir DIR [--all] [--json]
 *     every whole record to the HBase that BEACON_HBASE_BOOTSTRAP or the settings name (else the
 *     embedded local HBase of this checkout, when it runs), through the settings' hbase sinks
 *     (journal-replay.js). Files of a writer pid running on this machine are skipped (a live
 *     beacon owns them); --all takes them too, for a disk from another host: only when no beacon
 *     uses DIR. Exit 0 every whole record sent (damaged lines are reported, not a failure),
 *     4 entries still on disk (HBase refused or stopped answering, files skipped), 2 HBase
 *     unreachable at start or a settings error (nothing touched), 1 usage.
 */

const fs = require('node:fs')
const path = require('node:path')
const { inventory } = require('../logging/hbase-sink/journal/inventory')
const { statusCode, statusText, replayCode, replayText } = require('./journal-format')

/**
 * @param {{ usageError: (message: string) => Error, CliError: new (message: string, code: number) => Error,
 *   EXIT: { SERVER: number } }} cli bin/beacon.js's helpers
 * @returns {Array<import('./beacon').Command>}
 */
function journalCommands ({ usageError, CliError, EXIT }) {
  const stateDir = {
    type: /** @type {'string'} */ ('string'),
    arg: '<dir>',
    required: true,
    help: 'the state dir (BEACON_STATE_DIR of the host): its journal/ directory is read'
  }
  const json = { type: /** @type {'boolean'} */ ('boolean'), help: 'print the result as JSON' }

  /** @param {Record<string, any>} values @returns {string} the state dir, absolute and existing */
  function stateDirOf (values) {
    const given = values['state-dir']
    if (!given) throw usageError('--state-dir <dir> is required')
    const dir = path.resolve(given)
    let st
    try {
      st = fs.statSync(dir)
    } catch (err) {
      throw usageError(`--state-dir ${dir}: ${err.code === 'ENOENT' ? 'no such directory' : err.code || err.message}`)
    }
    if (!st.isDirectory()) throw usageError(`--state-dir ${dir}: not a directory`)
    return dir
  }

  return [
    {
      words: 'journal status',
      args: [],
      local: true,
      summary: 'what a state dir\'s access-log journals hold (no server needed); ' +
        'exit 4 when entries wait to be replayed',
      options: { 'state-dir': stateDir, json },
      notes: [
        'Per journal directory: each journal / write-ahead-log (wal) file with its writer pid and whether',
        'that pid runs on this machine, its entries (whole records), damaged lines (lines that are not)',
        'and bytes; the quarantined <name>.damaged-<ms> files; totals. Reads only, safe beside a running beacon.',
        '',
        'exit codes: 0 nothing waits to be replayed, 4 entries wait, 1 usage error'
      ],
      run: (args, values) => inventory(stateDirOf(values)),
      format: (value, values) => ({
        text: values.json ? JSON.stringify(value, null, 2) : statusText(value),
        code: statusCode(value)
      })
    },
    {
      words: 'journal replay',
      args: [],
      local: true,
      summary: 'send a state dir\'s journaled access-log entries to HBase (no server needed)',
      options: {
        'state-dir': stateDir,
        all: {
          type: 'boolean',
          help: 'take the files of writer pids running here too (a disk from another host); ' +
            'only when no beacon uses that dir'
        },
        json
      },
      notes: [
        'HBase: BEACON_HBASE_BOOTSTRAP, else hbase.bootstrap of the settings (BEACON_CONFIG_FILE), else the',
        'embedded local HBase of this checkout if it runs. Each hbase sink of the settings replays its',
        'journal directory (resolved against --state-dir) into its table, as a beacon starting there would:',
        'same row keys (running it twice writes the same rows), damaged lines counted and skipped, damaged',
        'files renamed <name>.damaged-<ms>. Files whose writer pid runs on this machine are skipped (a live',
        'beacon owns them) unless --all.',
        '',
        'exit codes: 0 every whole record sent (damaged lines are reported, not a failure), 4 entries still',
        'on disk (HBase refused or stopped answering, or files skipped), 2 HBase unreachable at start or a',
        'settings error (no file touched), 1 usage error'
      ],
      run: (args, values) => {
        const dir = stateDirOf(values)
        // Loaded here: the sinks, the HBase client and pino are not needed by the other commands.
        const { replayStateDir } = require('./journal-replay')
        return replayStateDir({
          stateDir: dir,
          all: Boolean(values.all),
          fail: (message) => new CliError(message, EXIT.SERVER)
        })
      },
      format: (value, values) => ({
        text: values.json ? JSON.stringify(value, null, 2) : replayText(value),
        code: replayCode(value)
      })
    }
  ]
}

module.exports = { journalCommands }
