'use strict'

// What `beacon --help` and `beacon <command> --help` print, from the commands' declarations.

const { DEFAULTS } = require('../config/defaults')

/** @typedef {import('./beacon').Command} Command */
/** @typedef {{ type: string, arg?: string, short?: string, help: string, required?: boolean }} Option */

/** @param {Command} command @returns {string} its one-line usage */
function synopsis (command) {
  const options = Object.entries(command.options || {}).map(([name, o]) => {
    const text = `--${name}${o.arg ? ' ' + o.arg : ''}`
    return o.required ? text : `[${text}]`
  })
  return ['beacon', command.words, ...command.args, ...options].join(' ')
}

/** @param {Record<string, Option>} options @returns {string[]} one line per option, help texts in one column */
function optionLines (options) {
  const rows = Object.entries(options).map(([name, o]) =>
    [(o.short ? `-${o.short}, ` : '    ') + `--${name}` + (o.arg ? ' ' + o.arg : ''), o.help])
  // One column for the help texts, past the longest flag: a long one never runs into its text.
  const width = Math.max(20, ...rows.map(([flags]) => flags.length)) + 2
  return rows.map(([flags, help]) => `  ${flags.padEnd(width)}${help}`)
}

// A synopsis longer than this gets its summary on the next line.
const SYNOPSIS_WIDTH = 48

/**
 * @param {Command[]} commands
 * @param {Record<string, Option>} common the options every command takes
 * @returns {string}
 */
function generalHelp (commands, common) {
  const rows = commands.map((c) => [synopsis(c).slice('beacon '.length), c.summary])
  const width = Math.max(...rows.map(([s]) => s.length).filter((n) => n <= SYNOPSIS_WIDTH))
  return [
    'usage: beacon <command> [options]',
    '',
    'commands:',
    ...rows.map(([s, summary]) => s.length > SYNOPSIS_WIDTH
      ? `  ${s}\n  ${''.padEnd(width)}  ${summary}`
      : `  ${s.padEnd(width)}  ${summary}`),
    '',
    'options (every command; the journal commands take no --url):',
    ...optionLines(common),
    '      --version         print the version',
    '',
    'environment:',
    `  BEACON_ADMIN_URL      the admin API (default http://127.0.0.1:$ADMIN_PORT, port ${DEFAULTS.adminPort})`,
    '  BEACON_ADMIN_TOKEN    bearer token for /admin/*; status needs none',
    '  BEACON_ADMIN_TOKEN_FILE  a file holding it; with neither, a local admin URL uses the token',
    '                        `npm start` keeps in the state dir ($BEACON_STATE_DIR/admin-token)',
    '  BEACON_HBASE_BOOTSTRAP  the HBase journal replay writes to (else the settings\', else the local one)',
    '',
    'exit codes: 0 ok, 1 usage error, 2 server or auth error (unreachable, an error answer, not ready; ' +
      'journal replay: HBase unreachable, settings), 3 log check found differences, ' +
      '4 journal entries wait or are left, 130 interrupted (Ctrl-C)'
  ].join('\n')
}

/**
 * @param {Command} command
 * @param {Record<string, Option>} common the options it takes besides its own
 * @returns {string}
 */
function commandHelp (command, common) {
  const notes = command.notes ? ['', ...command.notes] : []
  const options = optionLines({ ...command.options, ...common })
  return [`usage: ${synopsis(command)}`, '', command.summary, '', 'options:', ...options, ...notes].join('\n')
}

module.exports = { synopsis, optionLines, generalHelp, commandHelp }
