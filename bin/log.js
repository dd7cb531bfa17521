'use strict'

/**
 * `beacon log scan` and `beacon log count`: the access log read back through the admin API
 * (GET /admin/log/scan, /admin/log/count). Rows for bin/beacon.js's COMMANDS table.
 *
 * Times are passed to the server as given and judged there (one parser, one clock: relative
 * times count from the server's now), so a bad time or range is the server's 400, which these
 * commands exit with as a usage error (1).
 *
 * They talk to the server over node:http rather than fetch: fetch gives up on an answer whose
 * headers take more than 5 minutes (a long count) or whose body pauses that long (a scan whose
 * filter matches rarely), and these requests may legitimately take longer. Ctrl-C ends them.
 *
 * scan writes the server's NDJSON or CSV to stdout as it arrives, respecting stdout's pace (a
 * slow reader slows the server's scan, nothing piles up in memory). Progress goes to stderr:
 * on a terminal, one line redrawn each second (erased at the end); otherwise a line every 10 s,
 * so a short scan in a script prints nothing there. Ctrl-C (SIGINT) aborts the request: the
 * server sees the connection close and closes its scanners; the command exits 130.
 */

const http = require('node:http')
const https = require('node:https')
const { once } = require('node:events')
const { authHeaders } = require('./admin-auth')
const { horizonWarning } = require('./log-lifecycle')
const { checkTimeArgs } = require('./time-args')
const { plural } = require('./words')
const { notAnAdminPort, notAdminPortMessage } = require('./admin-port')

const TTY_PROGRESS_MS = 1000
const PIPE_PROGRESS_MS = 10000

/**
 * The options both commands take: the range and the filters.
 * @type {Record<string, { type: 'string', arg: string, help: string, required?: boolean }>}
 */
const RANGE_OPTIONS = {
  from: {
    type: 'string',
    arg: '<time>',
    required: true,
    help: 'start, included: ISO-8601 (2026-01-31T12:00:00Z; UTC when no offset), 13-digit epoch ms, ' +
      'or relative to the server\'s now: -30s, -15m, -2h, -1d, -1w, now'
  },
  to: { type: 'string', arg: '<time>', help: 'end, excluded (default now)' },
  endpoint: { type: 'string', arg: '<name>', help: 'only rows of this endpoint' },
  id: { type: 'string', arg: '<id>', help: 'only rows of this id (exact)' },
  status: { type: 'string', arg: '<code>', help: 'only rows with this HTTP status' }
}

/**
 * @param {Record<string, any>} values parsed options
 * @param {string[]} names which to send
 * @returns {URLSearchParams}
 */
function queryOf (values, names) {
  const q = new URLSearchParams()
  for (const name of names) if (values[name] !== undefined) q.set(name, values[name])
  return q
}

/**
 * The epoch ms of the last whole line of a chunk of NDJSON or CSV (`{"ts":…` or `ts,…`), for
 * the progress line; null when it has none.
 * @param {string} text
 * @returns {number|null}
 */
function lastTime (text) {
  const end = text.lastIndexOf('\n', text.length - 2)
  const m = /^(?:\{"ts":)?(\d{13})\D/.exec(text.slice(end + 1))
  return m ? Number(m[1]) : null
}

/**
 * Progress on stderr: redrawn in place on a terminal, a plain line now and then otherwise.
 * @param {NodeJS.WriteStream} stream
 */
function progressLine (stream) {
  const started = Date.now()
  const tty = Boolean(stream.isTTY)
  const every = tty ? TTY_PROGRESS_MS : PIPE_PROGRESS_MS
  let last = started
  let drawn = false
  return {
    /** @param {number} rows @param {number|null} upTo */
    update (rows, upTo) {
      const now = Date.now()
      if (now - last < every) return
      last = now
      const upToText = upTo ? `, up to ${new Date(upTo).toISOString()}` : ''
      const text = `beacon: ${rows.toLocaleString('en-US')} rows${upToText}, ${((now - started) / 1000).toFixed(1)} s`
      stream.write(tty ? `\r${text}\x1b[K` : `${text}\n`)
      drawn = true
    },
    done () {
      if (tty && drawn) stream.write('\r\x1b[K')
    }
  }
}

/**
 * GET on the admin API, with the token when one is set and no timeout; `signal` aborts it.
 * @param {string} base
 * @param {string} urlPath
 * @param {AbortSignal} signal
 * @returns {Promise<http.IncomingMessage>}
 */
function get (base, urlPath, signal) {
  const url = new URL(urlPath, base)
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).get(url, { headers: authHeaders(base), signal }, resolve)
    req.on('error', reject)
  })
}

/** @param {http.IncomingMessage} res @returns {Promise<string>} */
async function readText (res) {
  const chunks = []
  for await (const chunk of res) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Streams a response body to `out`, waiting for `out` whenever it is full.
 * @param {http.IncomingMessage} res
 * @param {{ out: NodeJS.WritableStream, err: NodeJS.WriteStream, signal: AbortSignal }} io
 * @returns {Promise<number>} lines written
 */
async function streamBody (res, { out, err, signal }) {
  const progress = progressLine(err)
  const decoder = new TextDecoder()
  let rows = 0
  let upTo = null
  try {
    for await (const chunk of res) {
      const text = decoder.decode(chunk, { stream: true })
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows++
      upTo = lastTime(text) || upTo
      if (!out.write(chunk)) await once(out, 'drain', { signal })
      progress.update(rows, upTo)
    }
  } finally {
    progress.done()
  }
  return rows
}

/**
 * @param {{ usageError: (message: string) => Error, CliError: new (message: string, code: number) => Error,
 *   EXIT: { OK: number, USAGE: number, SERVER: number, DIFFERENT: number, INTERRUPTED: number },
 *   answerError: (status: number, text: string, exitCode?: number, base?: string) => Error,
 *   unreachable: (base: string, cause: string) => Error }} cli bin/beacon.js's helpers
 * @returns {Array<import('./beacon').Command>}
 */
function logCommands ({ usageError, CliError, EXIT, answerError, unreachable }) {
  const needFrom = (values) => {
    if (values.from === undefined) throw usageError('--from is required (e.g. --from -15m)')
    checkTimeArgs(values, usageError)
  }

  /**
   * The answer to a GET, once its status is a success; an error answer throws (a 400 means the
   * arguments were wrong: a usage error, exit 1).
   * @param {string} base
   * @param {string} urlPath
   * @param {AbortSignal} signal
   * @returns {Promise<http.IncomingMessage>}
   */
  async function open (base, urlPath, signal) {
    let res
    try {
      res = await get(base, urlPath, signal)
    } catch (err) {
      if (signal.aborted) throw err
      throw unreachable(base, err.code || err.message)
    }
    const status = res.statusCode || 0
    if (status >= 200 && status < 300) return res
    const text = await readText(res)
    if (status === 404 && await notAnAdminPort(base, text)) throw new CliError(notAdminPortMessage(base), EXIT.SERVER)
    throw answerError(status, text, status === 400 ? EXIT.USAGE : EXIT.SERVER, base)
  }

  /**
   * Runs `work` with an AbortSignal that Ctrl-C fires; an aborted request exits 130.
   * @template T
   * @param {(signal: AbortSignal) => Promise<T>} work
   * @returns {Promise<T>}
   */
  async function interruptible (work) {
    const controller = new AbortController()
    const onSigint = () => controller.abort()
    process.once('SIGINT', onSigint)
    try {
      return await work(controller.signal)
    } catch (err) {
      if (controller.signal.aborted) throw new CliError('interrupted', EXIT.INTERRUPTED)
      throw err
    } finally {
      process.off('SIGINT', onSigint)
    }
  }

  return [
    {
      words: 'log scan',
      args: [],
      summary: 'access-log rows of a time range in time order: NDJSON (one entry per line, with its ts and row key) ' +
        'or CSV, streamed to stdout',
      options: {
        ...RANGE_OPTIONS,
        limit: { type: 'string', arg: '<n>', help: 'at most n rows' },
        after: {
          type: 'string',
          arg: '<key>',
          help: 'continue after this row (the key of the last row a --limit scan printed)'
        },
        csv: { type: 'boolean', help: 'CSV with a header line instead of NDJSON' }
      },
      notes: [
        'examples:',
        '  beacon log scan --from -10m --id 42                 # NDJSON, oldest first',
        '  beacon log scan --from 2026-01-31T12:00Z --to 2026-01-31T13:00Z --endpoint sample5 --status 500 ' +
          '--csv > errors.csv',
        '  beacon log scan --from -1h --limit 1000 --after <key of the last row>   # the next page',
        '',
        'Progress goes to stderr (on a terminal each second, otherwise every 10 s); Ctrl-C stops the',
        'scan on the server too and exits 130. A bad time, range or filter exits 1.'
      ],
      run: (args, values, call, base) => {
        needFrom(values)
        const q = queryOf(values, ['from', 'to', 'endpoint', 'id', 'status', 'limit', 'after'])
        if (values.csv) q.set('format', 'csv')
        return interruptible(async (signal) => {
          const res = await open(base, `/admin/log/scan?${q}`, signal)
          // A reader that closes early (`| head`) ends the scan normally: nothing was lost.
          /** @type {NodeJS.ErrnoException|null} */
          let stdoutError = null
          process.stdout.on('error', (err) => {
            stdoutError = err
            res.destroy()
          })
          try {
            await streamBody(res, { out: process.stdout, err: process.stderr, signal })
          } catch (err) {
            if (signal.aborted) throw err
            const cause = stdoutError || err
            if (cause.code === 'EPIPE') return undefined
            throw new CliError(`the scan was cut short: ${cause.code || cause.message}`, EXIT.SERVER)
          }
          return undefined
        })
      }
    },
    {
      words: 'log count',
      args: [],
      summary: 'exact count of the access-log rows of a time range, optionally grouped',
      options: {
        ...RANGE_OPTIONS,
        by: {
          type: 'string',
          arg: '<what>',
          help: 'groups: endpoint, id, status, minute, bot (bot and human) or variant (the rollout variant served, ' +
            'the one an event names)'
        },
        unique: { type: 'boolean', help: 'count distinct ids (visitors), not rows (views); rows without an id are left out' },
        scan: { type: 'boolean', help: 'count from the raw rows even where the per-minute rollups could answer' },
        json: { type: 'boolean', help: 'print the answer as one line of JSON (total, groups, from, to, ...)' }
      },
      notes: [
        'examples:',
        '  beacon log count --from -10m --id 42 --json         # {"total":…,"from":…,"to":…,…}',
        '  beacon log count --from -1h --endpoint sample5 --by status',
        '  beacon log count --from -2h --to -1h --by minute',
        '  beacon log count --from -1d --endpoint sample5 --by bot',
        '  beacon log count --from -1h --endpoint sample5 --by variant --unique   # visitors per variant',
        '',
        'Counts are exact. Whole minutes come from the per-minute rollups (a minute not counted yet,',
        'and the part-minutes at either end, from the raw rows); --status, --by status and --scan read',
        'every row of the range. Ctrl-C stops the count on the server too and exits 130. A bad time,',
        'range or filter exits 1. When part of the range was counted from raw rows older than the',
        'retention (beacon log retention), a line on stderr says so (and the JSON\'s horizon.complete is false).'
      ],
      run: (args, values, call, base) => {
        needFrom(values)
        const q = queryOf(values, ['from', 'to', 'endpoint', 'id', 'status', 'by'])
        if (values.scan) q.set('scan', '1')
        if (values.unique) q.set('unique', '1')
        return interruptible(async (signal) => {
          const value = JSON.parse(await readText(await open(base, `/admin/log/count?${q}`, signal)))
          // Past the retention the raw rows may be gone: said on stderr, so stdout stays the answer.
          const warning = horizonWarning(value.horizon, Boolean(values.scan))
          if (warning) process.stderr.write(warning + '\n')
          if (value.unknownEndpoint) {
            process.stderr.write(`beacon: no endpoint ${values.endpoint} is configured (${value.endpoints.join(', ')}): ` +
              'only rows an earlier setting logged under that name are counted\n')
          }
          return value
        })
      },
      format: (value, values) => ({
        text: values.json ? JSON.stringify(withoutUrl(value)) : countLines(value),
        code: EXIT.OK
      })
    },
    {
      words: 'log check',
      args: [],
      summary: 'compare the access-log rollups (per-minute counts) with a count of the raw rows, minute by minute',
      options: {
        from: RANGE_OPTIONS.from,
        to: RANGE_OPTIONS.to,
        json: {
          type: 'boolean',
          help: 'print the answer as one line of JSON (exact, minutes, rows, marked, differences)'
        }
      },
      notes: [
        'examples:',
        '  beacon log check --from -1h',
        '  beacon log check --from 2026-01-31T00:00Z --to 2026-02-01T00:00Z --json',
        '',
        'Exits 0 when the rollups equal the raw rows (a minute still marked, being counted again, may',
        'differ and is listed), 3 when they differ anywhere else. Reads every row of the range.'
      ],
      run: (args, values, call, base) => {
        needFrom(values)
        const q = queryOf(values, ['from', 'to'])
        return interruptible(async (signal) =>
          JSON.parse(await readText(await open(base, `/admin/log/check?${q}`, signal))))
      },
      format: (value, values) => ({
        text: values.json ? JSON.stringify(withoutUrl(value)) : checkLines(value),
        code: value.exact ? EXIT.OK : EXIT.DIFFERENT
      })
    }
  ]
}

/**
 * @param {{ exact: boolean, from: string, to: string, minutes: number, rows: number, marked: string[],
 *   parked?: string[], differenceCount?: number,
 *   differences: Array<{ minute: string, group: string, raw: number, rollup: number, marked: boolean }> }} value
 * @returns {string}
 */
function checkLines (value) {
  const lines = [`${value.exact ? 'exact' : 'DIFFERENT'}: ${plural(value.minutes, 'minute')}, ${plural(value.rows, 'row')}  ` +
    `${value.from} .. ${value.to}` +
    (value.marked.length ? `; ${plural(value.marked.length, 'minute')} still being counted` : '')]
  for (const minute of value.parked || []) {
    lines.push(`  ${minute}  PARKED: the rollup job failed to count it too often; tried again hourly (see the app log)`)
  }
  for (const d of value.differences) {
    lines.push(`  ${d.minute}  ${d.group}  raw ${d.raw}  rollup ${d.rollup}` +
      `${d.marked ? '  (marked: being counted again)' : ''}`)
  }
  const unlisted = (value.differenceCount ?? value.differences.length) - value.differences.length
  if (unlisted > 0) {
    lines.push(`  … and ${unlisted} more difference(s) (the first ${value.differences.length} are listed)`)
  }
  return lines.join('\n')
}

/** @param {Record<string, any>} value */
function withoutUrl ({ url, ...rest }) {
  return rest
}

/**
 * @param {{ total: number, from: string, to: string, filters?: Record<string, any>,
 *   groups?: Array<{ key: string, count: number }>, truncated?: boolean, unique?: boolean }} value
 * @returns {string}
 */
function countLines (value) {
  const filters = Object.entries(value.filters || {}).map(([k, v]) => `${k}=${v}`).join(' ')
  const lines = [`${plural(value.total, value.unique ? 'id' : 'row')}  ${value.from} .. ${value.to}${filters ? '  ' + filters : ''}`]
  const groups = value.groups || []
  const width = Math.max(0, ...groups.map((g) => g.key.length))
  for (const g of groups) lines.push(`  ${g.key.padEnd(width)}  ${g.count}`)
  if (value.truncated) lines.push('  (more keys than the server keeps: the rest are counted under "(other)")')
  return lines.join('\n')
}

module.exports = { logCommands, lastTime }
