#!/usr/bin/env node
'use strict'

/**
 * beacon: the admin CLI over the admin HTTP API (so it works against any running beacon, local
 * or remote). `beacon --help` lists the commands; every command takes `--help`/`-h`. The
 * `journal` commands (bin/journal.js) work on a state dir on this machine instead, no server.
 *
 * Arguments are parsed by node's util.parseArgs (strict: an unknown option is a usage error);
 * each command is one row of COMMANDS (its words, arguments, options, what it calls).
 *
 * Exit codes: 0 ok; 1 usage (unknown command or option, a missing argument, malformed JSON, a
 * `log` query the server answers 400: a bad time, range or filter); 2 server or auth error
 * (unreachable, an error answer such as 401 or 404, `status` not ready; `journal replay`: HBase
 * unreachable at start, a settings error); 3 `log check` found the rollups different from the raw
 * rows; 4 journal entries wait (`journal status`) or are left on disk (`journal replay`); 130
 * interrupted (Ctrl-C during `log scan` / `log count`).
 *
 * Environment (contracts): BEACON_ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT or :4001),
 * BEACON_ADMIN_TOKEN or BEACON_ADMIN_TOKEN_FILE (else, for a local admin URL, the state dir's
 * token that `npm start` created: bin/admin-auth.js; the admin API decides what needs it:
 * /readyz, which `status` reads, does not); `journal replay`: BEACON_HBASE_BOOTSTRAP and the
 * settings (BEACON_CONFIG_FILE, config/).
 */

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { DEFAULTS } = require('../config/defaults')
const { notAnAdminPort, notAdminPortMessage } = require('./admin-port')
const { logCommands } = require('./log')
const { logLifecycleCommands, retentionLines } = require('./log-lifecycle')
const { journalCommands } = require('./journal')
const { rolloutCommands } = require('./rollout')
const { auditCommands } = require('./audit')
const { historyCommands } = require('./history')
const { importCommands } = require('./config-import')
const { authHeaders, unauthorizedHint } = require('./admin-auth')
const { synopsis, optionLines, generalHelp, commandHelp } = require('./help')

const EXIT = Object.freeze({ OK: 0, USAGE: 1, SERVER: 2, DIFFERENT: 3, ENTRIES_LEFT: 4, INTERRUPTED: 130 })

class CliError extends Error {
  /** @param {string} message @param {number} exitCode */
  constructor (message, exitCode) {
    super(message)
    this.exitCode = exitCode
  }
}

const usageError = (message) => new CliError(message, EXIT.USAGE)
const id = (value) => encodeURIComponent(value)

/**
 * Options every command takes (util.parseArgs's option config, plus `arg` and `help` for the
 * help text; parseArgs ignores them).
 * @type {Record<string, { type: 'string'|'boolean', short?: string, arg?: string, help: string }>}
 */
const COMMON = {
  help: { type: 'boolean', short: 'h', help: 'this help' },
  url: {
    type: 'string',
    arg: '<url>',
    help: 'the admin API (default $BEACON_ADMIN_URL, else http://127.0.0.1:$ADMIN_PORT)'
  }
}

/**
 * @typedef {{ words: string, args: string[], summary: string,
 *   options?: Record<string, { type: 'string'|'boolean', arg?: string, help: string, required?: boolean }>,
 *   notes?: string[], local?: boolean,
 *   run: (args: string[], values: Record<string, any>, call?: Caller, base?: string) => Promise<any>,
 *   format?: (value: any, values: Record<string, any>) => { text: string, code: number } }} Command
 *   notes: lines that `<command> --help` prints after the options (examples); local: runs on
 *   this machine without the admin API (no --url, no caller)
 * @typedef {(method: string, path: string, options?: { body?: string, okStatuses?: number[] }) => Promise<any>} Caller
 */

/** @type {Command[]} */
const COMMANDS = [
  {
    words: 'config get',
    args: ['<id>'],
    summary: 'the toggles stored for an id',
    run: ([target], v, call) => call('GET', `/admin/config/${id(target)}`)
  },
  {
    words: 'config set',
    args: ['<id>', '<json>|@file.json'],
    summary: 'replace the toggles of an id (a JSON object, inline or from a file)',
    run: ([target, value], v, call) => call('PUT', `/admin/config/${id(target)}`, { body: readJson(value, 'the toggles') })
  },
  {
    words: 'config delete',
    args: ['<id>'],
    summary: 'remove the toggles of an id (it then gets the endpoint default)',
    run: async ([target], v, call) => {
      await call('DELETE', `/admin/config/${id(target)}`)
      return { id: target, deleted: true }
    }
  },
  {
    words: 'config list',
    args: [],
    summary: 'list stored ids, in order',
    options: {
      start: { type: 'string', arg: '<id>', help: 'the first id to list' },
      limit: { type: 'string', arg: '<n>', help: 'at most n ids (default 100, at most 1000)' }
    },
    run: (args, values, call) => {
      const q = new URLSearchParams()
      if (values.start) q.set('start', values.start)
      if (values.limit !== undefined) {
        if (!/^[1-9][0-9]{0,3}$/.test(values.limit) || Number(values.limit) > 1000) {
          throw usageError(`--limit must be a whole number from 1 to 1000, not ${JSON.stringify(values.limit)}`)
        }
        q.set('limit', values.limit)
      }
      return call('GET', `/admin/config?${q}`)
    }
  },
  {
    words: 'endpoint list',
    args: [],
    summary: 'every endpoint and whether this host serves it',
    run: (a, v, call) => call('GET', '/admin/endpoints')
  },
  ...['enable', 'disable'].map((action) => ({
    words: `endpoint ${action}`,
    args: ['<name>'],
    summary: `switch an endpoint ${action === 'enable' ? 'on' : 'off (404 ENDPOINT_DISABLED)'}, on every host`,
    run: ([name], v, call) => call('PUT', `/admin/endpoints/${id(name)}`,
      { body: JSON.stringify({ enabled: action === 'enable' }) })
  })),
  ...rolloutCommands({ readJson }),
  ...historyCommands({ usageError }),
  ...importCommands({ usageError }),
  ...auditCommands({ usageError }),
  {
    words: 'status',
    args: [],
    summary: 'readiness of one host (GET /readyz, no token needed): one line per check; exit 2 when not ready',
    options: { json: { type: 'boolean', help: 'print the answer of /readyz as JSON' } },
    run: (a, v, call) => call('GET', '/readyz', { okStatuses: [503] }),
    format: (value, values) => ({
      text: values.json ? JSON.stringify(value, null, 2) : statusLines(value),
      code: value.status === 'ready' ? EXIT.OK : EXIT.SERVER
    })
  },
  ...logCommands({ usageError, CliError, EXIT, answerError, unreachable }),
  ...logLifecycleCommands({ usageError, EXIT, answerError, unreachable }),
  ...journalCommands({ usageError, CliError, EXIT })
]

/**
 * @param {Command} command
 * @returns {typeof COMMON} the options every command of its kind takes (a local one has no --url)
 */
function commonOf (command) {
  return command.local ? { help: COMMON.help } : COMMON
}

/** @param {{ status: string, checks: Record<string, string|number>, retention?: any, url?: string }} value */
function statusLines (value) {
  const checks = Object.entries(value.checks || {})
  const width = Math.max(0, ...checks.map(([name]) => name.length))
  // How long the access log is kept: shown, not a check (bin/log-lifecycle.js).
  const retention = value.retention
    ? ['  retention', ...retentionLines(value.retention).map((line) => `    ${line}`)]
    : []
  return [`${value.status}  ${value.url}`, ...checks.map(([name, result]) => `  ${name.padEnd(width)}  ${result}`),
    ...retention].join('\n')
}

/**
 * @param {string} value inline JSON or `@file.json`
 * @param {string} what what it is, for the usage error
 * @returns {string} the JSON text, checked to parse
 */
function readJson (value, what) {
  let json = value
  if (value.startsWith('@')) {
    try {
      json = fs.readFileSync(value.slice(1), 'utf8')
    } catch (err) {
      throw usageError(`cannot read ${value.slice(1)}: ${err.code || err.message}`)
    }
  }
  try {
    JSON.parse(json) // fail here, with a local message, on malformed JSON
  } catch (err) {
    throw usageError(`${what} ${what.endsWith('s') ? 'are' : 'is'} not valid JSON: ${err.message}`)
  }
  return json
}

function version () {
  return JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version
}

/**
 * Which command argv names: its first two words, or its first (`status`). Options may follow
 * the words; a word the table does not know is a usage error.
 * @param {string[]} argv
 * @returns {{ command: Command, rest: string[] } | { help: string }}
 */
function findCommand (argv) {
  const words = []
  for (const token of argv.slice(0, 2)) {
    if (token.startsWith('-')) break
    words.push(token)
  }
  for (let n = words.length; n > 0; n--) {
    const command = COMMANDS.find((c) => c.words === words.slice(0, n).join(' '))
    if (command) return { command, rest: argv.slice(n) }
  }
  if (words[0] === 'help' || (words.length === 0 && (argv[0] === '--help' || argv[0] === '-h'))) {
    return { help: generalHelp(COMMANDS, COMMON) }
  }
  if (words.length === 0 && argv[0] === '--version') return { help: version() }
  const area = words[0] && COMMANDS.filter((c) => c.words.startsWith(words[0] + ' '))
  if (area && area.length && (words.length === 1 || argv.includes('--help') || argv.includes('-h'))) {
    const list = area.map((c) => `  ${synopsis(c)}\n      ${c.summary}`).join('\n')
    if (argv.includes('--help') || argv.includes('-h')) {
      return { help: `usage:\n${list}\n\noptions:\n${optionLines(commonOf(area[0])).join('\n')}` }
    }
    throw usageError(`${words[0]} needs a command:\n${list}`)
  }
  if (argv.length === 0) throw usageError(generalHelp(COMMANDS, COMMON))
  throw usageError(`unknown command "${words.join(' ') || argv[0]}"; beacon --help lists the commands`)
}

/**
 * Calls the admin API. Sends the token when one is set; the server decides what needs it.
 * @param {string} base
 * @returns {Caller}
 */
function caller (base) {
  return async function call (method, urlPath, { body, okStatuses = [] } = {}) {
    let res
    try {
      res = await fetch(new URL(urlPath, base), {
        method,
        headers: { ...authHeaders(base), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        body,
        signal: AbortSignal.timeout(10000)
      })
    } catch (err) {
      throw unreachable(base, (err.cause && err.cause.code) || err.message)
    }
    const text = await res.text()
    if (!res.ok && !okStatuses.includes(res.status)) {
      if (res.status === 404 && await notAnAdminPort(base, text)) throw new CliError(notAdminPortMessage(base), EXIT.SERVER)
      throw answerError(res.status, text, EXIT.SERVER, base)
    }
    return text ? JSON.parse(text) : null
  }
}

/**
 * The error of an error answer: its status and message (from the error body), with a hint on a 401.
 * @param {number} status
 * @param {string} text the body
 * @param {number} [exitCode] default 2 (server or auth)
 * @param {string} [base] the admin API that answered (for the hint)
 * @returns {CliError}
 */
function answerError (status, text, exitCode = EXIT.SERVER, base) {
  let message = text
  try { message = JSON.parse(text).error.message } catch {}
  const hint = status === 401 && base ? unauthorizedHint(base) : ''
  return new CliError(`${status}: ${message}${hint}`, exitCode)
}

/**
 * @param {string} base
 * @param {string} cause an error code (ECONNREFUSED) or message
 * @returns {CliError}
 */
function unreachable (base, cause) {
  return new CliError(`cannot reach ${base}: ${cause}`, EXIT.SERVER)
}

/**
 * Joins `--opt -15m` into `--opt=-15m` for string options: parseArgs refuses a value that starts
 * with a dash as ambiguous, and relative times (`--from -15m`) all do.
 * @param {string[]} args
 * @param {Record<string, { type: string }>} options
 * @returns {string[]}
 */
function joinDashValues (args, options) {
  const out = []
  for (let i = 0; i < args.length; i++) {
    const name = /^--([^=]+)$/.exec(args[i])
    const option = name && Object.hasOwn(options, name[1]) ? options[name[1]] : null
    if (option && option.type === 'string' && /^-\d/.test(args[i + 1] || '')) {
      out.push(`${args[i]}=${args[++i]}`)
    } else {
      out.push(args[i])
    }
  }
  return out
}

/**
 * Runs one command line.
 * @param {string[]} argv the arguments after `beacon`
 * @returns {Promise<{ text: string|null, code: number, value?: any }>} what to print on stdout,
 *   the exit code, and the command's result (parsed JSON)
 * @throws {CliError} with its exitCode (1 usage, 2 server or auth)
 */
async function execute (argv) {
  const found = findCommand(argv)
  if ('help' in found) return { text: found.help, code: EXIT.OK }
  const { command, rest } = found
  const options = { ...commonOf(command), ...command.options }
  /** @type {{ values: Record<string, any>, positionals: string[] }} */
  let parsed
  try {
    parsed = parseArgs({
      args: joinDashValues(rest, options),
      options: /** @type {any} */ (options),
      allowPositionals: true,
      strict: true
    })
  } catch (err) {
    // node's message ends with advice about `--` that does not help here
    throw usageError(`${err.message.replace(/\. To specify a positional.*$/s, '')}\nusage: ${synopsis(command)}`)
  }
  const { values, positionals } = parsed
  if (values.help) return { text: commandHelp(command, commonOf(command)), code: EXIT.OK }
  if (positionals.length !== command.args.length) throw usageError(`usage: ${synopsis(command)}`)
  if (command.local) {
    const value = await command.run(positionals, values)
    return command.format
      ? { value, ...command.format(value, values) }
      : { value, text: JSON.stringify(value, null, 2), code: EXIT.OK }
  }
  const localUrl = `http://127.0.0.1:${process.env.ADMIN_PORT || DEFAULTS.adminPort}`
  const base = /** @type {string|undefined} */ (values.url) || process.env.BEACON_ADMIN_URL || localUrl
  try {
    authHeaders(base)
  } catch (err) {
    throw new CliError(err.message, EXIT.SERVER)
  }
  const value = await command.run(positionals, values, caller(base), base)
  if (command.format) return { value, ...command.format({ ...value, url: base }, values) }
  return { value, text: value === null || value === undefined ? null : JSON.stringify(value, null, 2), code: EXIT.OK }
}

/**
 * The programmatic API: runs a command and resolves with its result (help text for --help).
 * @param {string[]} argv
 * @returns {Promise<any>}
 */
async function main (argv) {
  const { value, text } = await execute(argv)
  return value === undefined ? text : value
}

if (require.main === module) {
  execute(process.argv.slice(2)).then(({ text, code }) => {
    if (text !== null) console.log(text)
    process.exitCode = code
  }, (err) => {
    console.error(`beacon: ${err.message}`)
    process.exitCode = err instanceof CliError ? err.exitCode : EXIT.SERVER
  })
}

module.exports = { main, execute, EXIT }
