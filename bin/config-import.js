'use strict'

/**
 * `beacon config import FILE.ndjson` and `beacon config export`: bulk load and export of configs,
 * one `{"id": "…", "config": {…}}` per line (api/admin/import-routes.js).
 *
 * An import reads the file twice, streamed: first every line is checked with the server's own
 * rules (lib/toggles/validate.js; `--dry-run` stops there), then the lines go in batches, one
 * multi-put each. After each batch the lines done are written to `FILE.import-progress`, so
 * `--resume` goes on after the last batch written (a batch sent twice writes the same values).
 * The last step is the import's one audit record. Progress goes to stderr on a terminal.
 */

const fs = require('node:fs')
const readline = require('node:readline')
const { validateToggles } = require('../lib/toggles/validate')
const { isSafeName } = require('../lib/names')
const { authHeaders } = require('./admin-auth')

const MAX_ID_LENGTH = 64
const DEFAULT_BATCH = 1000

/**
 * Every line of a file, numbered from 1, streamed.
 * @param {string} file
 * @returns {AsyncGenerator<{ n: number, text: string }>}
 */
async function * linesOf (file) {
  let n = 0
  for await (const text of readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) {
    n++
    if (text.trim() !== '') yield { n, text }
  }
}

/**
 * @param {string} text one line
 * @returns {{ item: { id: string, config: Record<string, unknown> } } | { problem: string }}
 */
function parseLine (text) {
  let value
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { problem: `not JSON (${/** @type {Error} */ (err).message})` }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'must be {"id": …, "config": {…}}' }
  if (!isSafeName(value.id, MAX_ID_LENGTH)) return { problem: `id must be 1-${MAX_ID_LENGTH} of A-Z a-z 0-9 _ -` }
  const problem = validateToggles(value.config, 'config')
  return problem ? { problem } : { item: { id: value.id, config: value.config } }
}

/**
 * @param {{ usageError: (message: string) => Error }} helpers
 * @returns {import('./beacon').Command[]}
 */
function importCommands ({ usageError }) {
  return [
    {
      words: 'config import',
      args: ['<file.ndjson>'],
      summary: 'load many ids\' configs from NDJSON ({"id","config"} per line): checked first, then batched multi-puts',
      options: {
        'dry-run': { type: 'boolean', help: 'check every line and stop: nothing is written' },
        resume: { type: 'boolean', help: 'go on after the last batch an interrupted import wrote (FILE.import-progress)' },
        batch: { type: 'string', arg: '<n>', help: `lines per batch (default ${DEFAULT_BATCH}, at most 5000)` }
      },
      notes: ['examples:', '  beacon config export > configs.ndjson', '  beacon config import configs.ndjson --dry-run',
        '  beacon config import configs.ndjson            # Ctrl-C, then: beacon config import configs.ndjson --resume'],
      run: async ([file], values, call) => {
        const batchSize = values.batch === undefined ? DEFAULT_BATCH : Number(values.batch)
        if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5000) {
          throw usageError(`--batch must be a whole number from 1 to 5000, not ${JSON.stringify(values.batch)}`)
        }
        if (!fs.existsSync(file)) throw usageError(`cannot read ${file}: ENOENT`)
        const checked = await checkFile(file)
        if (checked.problems.length) {
          throw usageError(`${file}: ${checked.problems.length} bad line(s), nothing written:\n` +
            checked.problems.slice(0, 10).map(({ n, problem }) => `  line ${n}: ${problem}`).join('\n'))
        }
        if (values['dry-run']) return { file, lines: checked.lines, valid: checked.lines, dryRun: true }
        return importFile(file, { call: /** @type {any} */ (call), batchSize, resume: Boolean(values.resume), lines: checked.lines })
      }
    },
    {
      words: 'config export',
      args: [],
      summary: 'every id\'s config as NDJSON ({"id","config"} per line, in id order) on stdout',
      options: { start: { type: 'string', arg: '<id>', help: 'the first id to export' } },
      run: async (args, values, call, base) => {
        const q = values.start ? `?start=${encodeURIComponent(values.start)}` : ''
        const res = await fetch(new URL(`/admin/export/config${q}`, base), { headers: authHeaders(/** @type {string} */ (base)) })
        if (!res.ok || !res.body) throw usageError(`export: ${res.status} ${await res.text()}`)
        for await (const chunk of res.body) process.stdout.write(chunk)
        return undefined
      }
    }
  ]
}

/**
 * @param {string} file
 * @returns {Promise<{ lines: number, problems: Array<{ n: number, problem: string }> }>}
 */
async function checkFile (file) {
  const problems = []
  let lines = 0
  for await (const { n, text } of linesOf(file)) {
    lines++
    const parsed = parseLine(text)
    if ('problem' in parsed) problems.push({ n, problem: parsed.problem })
  }
  return { lines, problems }
}

/**
 * @param {string} file
 * @param {{ call: (method: string, path: string, options?: { body?: string }) => Promise<any>, batchSize: number,
 *   resume: boolean, lines: number }} options
 */
async function importFile (file, { call, batchSize, resume, lines }) {
  const progressFile = `${file}.import-progress`
  const stat = fs.statSync(file)
  const fingerprint = { size: stat.size, mtimeMs: stat.mtimeMs }
  let skip = 0
  if (resume && fs.existsSync(progressFile)) {
    const saved = JSON.parse(fs.readFileSync(progressFile, 'utf8'))
    if (saved.size !== fingerprint.size || saved.mtimeMs !== fingerprint.mtimeMs) {
      throw new Error(`${progressFile} is of another version of ${file}: delete it to import from the start`)
    }
    skip = saved.done
  }
  const started = Date.now()
  let done = 0
  let written = 0
  /** @type {Array<{ id: string, config: object }>} */
  let batch = []
  const tty = process.stderr.isTTY
  const send = async () => {
    written += (await call('POST', '/admin/import/config', { body: JSON.stringify({ items: batch }) })).written
    done += batch.length
    batch = []
    fs.writeFileSync(progressFile, JSON.stringify({ ...fingerprint, done }))
    if (tty) {
      const rate = Math.round(done / Math.max(0.001, (Date.now() - started) / 1000))
      process.stderr.write(`\rimported ${done.toLocaleString('en-US')}/${lines.toLocaleString('en-US')} lines (${rate}/s)   `)
    }
  }
  for await (const { text } of linesOf(file)) {
    if (skip > 0) {
      skip--
      done++
      continue
    }
    batch.push(/** @type {{ item: { id: string, config: object } }} */ (parseLine(text)).item)
    if (batch.length === batchSize) await send()
  }
  if (batch.length) await send()
  if (tty) process.stderr.write('\n')
  const ms = Date.now() - started
  await call('POST', '/admin/import/config/done', { body: JSON.stringify({ file, lines: done, written, ms }) })
  fs.rmSync(progressFile, { force: true })
  return { file, lines: done, written, ms }
}

module.exports = { importCommands, parseLine }
