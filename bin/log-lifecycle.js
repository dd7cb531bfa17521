'use strict'

/**
 * `beacon log retention` and `beacon log erase`: the access log's lifecycle through the admin API
 * (GET/PUT /admin/log/retention, POST /admin/log/erase). Rows for bin/beacon.js's COMMANDS table,
 * and the lines `status` and `log count` print about the retention.
 *
 * Over node:http, as bin/log.js explains: an erase scans the whole range and may take longer than
 * fetch waits for an answer. A 400 (a bad duration, id or time) exits 1 as a usage error.
 */

const { plural } = require('./words')
const http = require('node:http')
const https = require('node:https')
const { authHeaders } = require('./admin-auth')
const { checkTimeArgs } = require('./time-args')

/**
 * One request to the admin API, with the token when one is set and no timeout.
 * @param {string} base
 * @param {string} method
 * @param {string} urlPath
 * @param {string} [body] JSON
 * @returns {Promise<{ status: number, text: string }>}
 */
function send (base, method, urlPath, body) {
  const url = new URL(urlPath, base)
  const headers = { ...authHeaders(base), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, { method, headers }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode || 0, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The retention of the tables as `status` and `log retention` print it, one line per table:
 * `beacon_access_log  90d`, with what the settings say when they differ.
 * @param {{ log?: any, rollups?: any, error?: string }} view GET /admin/log/retention's answer
 * @returns {string[]}
 */
function retentionLines (view) {
  if (view.error) return [`retention unknown (${view.error})`]
  const tables = [view.log, view.rollups].filter(Boolean)
  const width = Math.max(...tables.map((t) => t.table.length))
  return tables.map((t) => `${t.table.padEnd(width)}  ${t.retention}` +
    (t.configured !== t.retention
      ? `  (the settings say ${t.configured}: beacon log retention --set… applies it)`
      : ''))
}

/**
 * The line `log count` writes on stderr when the answer may miss rows the retention took, or
 * null when it cannot (the total is then all there is).
 * @param {import('../logging/query/horizon').CountHorizon|undefined} horizon
 * @param {boolean} [scanned] the count was asked with --scan
 * @returns {string|null}
 */
function horizonWarning (horizon, scanned = false) {
  if (!horizon) return null
  if (!horizon.known) {
    return 'beacon: the access log\'s retention could not be read: this count may miss rows HBase has expired'
  }
  if (horizon.complete) return null
  return `beacon: part of this range was counted from raw rows older than ${horizon.rows} ` +
    `(retention ${horizon.retention}): ` +
    'rows HBase has expired are not in this total' +
    (horizon.rollups === undefined
      ? ''
      : `; the per-minute rollups are kept ${horizon.rollupRetention}` +
        (scanned ? ' (count without --scan to read them)' : ' (whole minutes they cover are read from them)'))
}

/**
 * @param {{ usageError: (message: string) => Error, EXIT: { OK: number, USAGE: number, SERVER: number },
 *   answerError: (status: number, text: string, exitCode?: number, base?: string) => Error,
 *   unreachable: (base: string, cause: string) => Error }} cli bin/beacon.js's helpers
 * @returns {Array<import('./beacon').Command>}
 */
function logLifecycleCommands ({ usageError, EXIT, answerError, unreachable }) {
  /** The answer's JSON when it is a success; else the error (a 400: a usage error). */
  async function call (base, method, urlPath, body) {
    let res
    try {
      res = await send(base, method, urlPath, body)
    } catch (err) {
      throw unreachable(base, err.code || err.message)
    }
    if (res.status >= 200 && res.status < 300) return JSON.parse(res.text)
    throw answerError(res.status, res.text, res.status === 400 ? EXIT.USAGE : EXIT.SERVER, base)
  }
  const json = { type: /** @type {const} */ ('boolean'), help: 'print the answer as one line of JSON' }

  return [
    {
      words: 'log retention',
      args: [],
      summary: 'how long HBase keeps the access log\'s rows and rollups (the tables\' TTL), or set it',
      options: {
        set: {
          type: 'string',
          arg: '<duration>',
          help: 'keep the raw rows this long: 30s, 15m, 12h, 90d, 2w or forever'
        },
        'set-rollups': { type: 'string', arg: '<duration>', help: 'keep the per-minute rollups this long' },
        json
      },
      notes: [
        'examples:',
        '  beacon log retention                                 # each table\'s retention, and the settings\'',
        '  beacon log retention --set 30d --set-rollups 400d',
        '',
        'The tables hold the retention every host shares; a table created by hbase:up or at start gets',
        'the settings\' (logSinks.<name>.retention, rollupRetention). Setting it reopens the table\'s',
        'regions (writes wait a moment); rows past the new retention vanish from reads at once and from',
        'disk at the next major compaction. A bad duration exits 1.'
      ],
      run: (args, values, c, base) => {
        const change = {}
        if (values.set !== undefined) change.retention = values.set
        if (values['set-rollups'] !== undefined) change.rollupRetention = values['set-rollups']
        if (Object.keys(change).length === 0) return call(base, 'GET', '/admin/log/retention')
        return call(base, 'PUT', '/admin/log/retention', JSON.stringify(change))
      },
      format: (value, values) => ({
        text: values.json ? JSON.stringify(withoutUrl(value)) : retentionLines(value).join('\n'),
        code: EXIT.OK
      })
    },
    {
      words: 'log erase',
      args: [],
      summary: 'delete every access-log row of one id (in a time range), and count its rollup minutes again',
      options: {
        id: { type: 'string', arg: '<id>', required: true, help: 'the id whose rows go (exact, as logged)' },
        from: {
          type: 'string',
          arg: '<time>',
          help: 'start, included (default: the oldest row); times as for log scan'
        },
        to: { type: 'string', arg: '<time>', help: 'end, excluded (default now)' },
        'dry-run': { type: 'boolean', help: 'count the rows only; delete nothing' },
        json
      },
      notes: [
        'examples:',
        '  beacon log erase --id 42 --dry-run                   # how many rows it would delete',
        '  beacon log erase --id 42 --from 2026-01-01 --to 2026-02-01',
        '',
        'Scans every salt bucket of the range with a server-side filter on the id and deletes what it',
        'finds in batches; the rollups of the minutes it touched are counted again, so beacon log check',
        'agrees afterwards. Safe to run again (a second run finds 0). A missing or invalid id exits 1.'
      ],
      run: (args, values, c, base) => {
        if (values.id === undefined) throw usageError('--id is required: the id whose rows to erase')
        const q = new URLSearchParams({ id: values.id })
        checkTimeArgs(values, usageError)
        for (const name of ['from', 'to']) if (values[name] !== undefined) q.set(name, values[name])
        if (values['dry-run']) q.set('dryRun', '1')
        return call(base, 'POST', `/admin/log/erase?${q}`)
      },
      format: (value, values) => ({
        text: values.json ? JSON.stringify(withoutUrl(value)) : eraseLine(value),
        code: EXIT.OK
      })
    }
  ]
}

/** @param {{ id: string, from: string, to: string, dryRun: boolean, found: number, deleted: number,
 *   minutes: number }} value */
function eraseLine (value) {
  const range = `${value.from} .. ${value.to}`
  return value.dryRun
    ? `dry run: ${plural(value.found, 'row')} of id ${value.id} in ${range} ` +
      `(${plural(value.minutes, 'minute')}); nothing deleted`
    : `erased ${value.deleted} of ${plural(value.found, 'row')} of id ${value.id} in ${range}; ` +
      `rollups of ${plural(value.minutes, 'minute')} counted again`
}

/** @param {Record<string, any>} value */
function withoutUrl ({ url, ...rest }) {
  return rest
}

module.exports = { logLifecycleCommands, retentionLines, horizonWarning, eraseLine }
