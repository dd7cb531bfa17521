'use strict'

// The docs' examples, run as a reader would: every `npx beacon …` and `curl …` line of README.md
// and docs/*.md (test/support/doc-examples.js finds them), in page order, from a shell, against
// a real beacon (server.js: two workers and the rollup process) with tables of its own. Each
// one must succeed; where the page shows what it prints, the first line must have that shape
// (times and numbers aside), and where its comment shows a JSON shape, the answer has those
// keys. Lines with placeholders (<id>, a|b, [--opt], DIR) are syntax summaries: each must name a
// command that `--help` lists.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { startServerProcess } = require('../support/server-process')
const { testClient, uniqueTable } = require('../support/hbase')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { until } = require('../support/until')
const { docExamples, headOf } = require('../support/doc-examples')
const { accessLogSplitKeys } = require('../../logging/access-log-layout')

jest.setTimeout(5 * 60 * 1000)

const ROOT = path.join(__dirname, '..', '..')
const CLI = path.join(ROOT, 'bin', 'beacon.js')
const TOKEN = 'docs-examples-token-0123456789abcdef'

let client
let server
let stateDir
let workDir
let port
let adminPort
const tables = {
  config: uniqueTable('dcfg'),
  log: uniqueTable('dlog'),
  rollup: uniqueTable('droll'),
  audit: uniqueTable('daud'),
  history: uniqueTable('dhist')
}

/** Runs one line in a shell, as a reader pastes it, in the examples' working directory. */
function shell (line) {
  return new Promise((resolve) => {
    const env = {
      PATH: process.env.PATH,
      BEACON_ADMIN_URL: `http://127.0.0.1:${adminPort}`,
      BEACON_ADMIN_TOKEN: TOKEN,
      BEACON_STATE_DIR: stateDir
    }
    execFile('/bin/sh', ['-c', `${line} 2>&1`], { cwd: workDir, env, timeout: 60000 }, (err, stdout) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, output: stdout })
    })
  })
}

/** The line as it runs here: this beacon's ports, the repository's CLI, curl failing on HTTP errors. */
function runnable (command) {
  return command
    .replace(/^npx beacon\b/, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`)
    .replace(/^curl /, 'curl -sS --fail-with-body ')
    .replace(/http:\/\/(127\.0\.0\.1|localhost):4001/g, `http://127.0.0.1:${adminPort}`)
    .replace(/http:\/\/(127\.0\.0\.1|localhost):4000/g, `http://127.0.0.1:${port}`)
}

/**
 * The top-level keys a comment's JSON shape names: `{"endpoint","version","rollout"}` or
 * `{"total":1234,"from":"…","filters":{"id":"42"}}`; null when the comment shows none.
 * @param {string} comment
 * @returns {string[]|null}
 */
function documentedKeys (comment) {
  if (!comment.startsWith('{')) return null
  const keys = []
  let depth = 0
  let afterColon = false
  for (let i = 0; i < comment.length; i++) {
    const c = comment[i]
    if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) break
    } else if (c === ':') afterColon = true
    else if (c === ',') afterColon = false
    else if (c === '"') {
      const end = comment.indexOf('"', i + 1)
      if (depth === 1 && !afterColon) keys.push(comment.slice(i + 1, end))
      i = end
    }
  }
  return keys
}

beforeAll(async () => {
  ;[port, adminPort] = await freePorts(2)
  client = testClient()
  await client.admin.createTable(tables.config, { families: ['c'] })
  await client.admin.createTable(tables.log, { families: ['l'], splits: accessLogSplitKeys(16, 4) })
  await client.admin.createTable(tables.rollup, { families: ['r'] })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-docs-'))
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-docs-work-'))
  server = await startServerProcess({
    port,
    adminPort,
    stateDir,
    env: {
      BEACON_ADMIN_TOKEN: TOKEN,
      BEACON_CONFIG_TABLE: tables.config,
      BEACON_ACCESS_LOG_TABLE: tables.log,
      BEACON_ACCESS_ROLLUP_TABLE: tables.rollup,
      BEACON_AUDIT_TABLE: tables.audit,
      BEACON_HISTORY_TABLE: tables.history
    }
  })
  // What the examples read: id 42 with two versions of its config (history, rollback), views
  // of it and of others on sample5 (counts, scans, erase), the rollout file the flags page uses.
  for (const variant of ['A', 'B']) {
    const res = await shell(`${runnable('npx beacon')} config set 42 '{"variant":"${variant}","features":{"search":true}}'`)
    expect(res).toEqual({ code: 0, output: expect.any(String) })
  }
  for (let i = 0; i < 40; i++) {
    const id = i < 10 ? 42 : i
    expect((await request(`http://127.0.0.1:${port}/api/sample5.js?id=${id}&callback=cb`)).status).toBe(200)
  }
  await until('the views in the access log', async () => {
    const res = await shell(`${runnable('npx beacon')} log count --from -10m --id 42 --json`)
    return res.code === 0 && JSON.parse(res.output).total === 10
  }, 30000, 500)
  const flags = fs.readFileSync(path.join(ROOT, 'docs', 'flags.md'), 'utf8')
  const rollout = /```json\n(\{ "salt"[\s\S]*?)```/.exec(flags)
  expect(rollout).not.toBeNull()
  fs.writeFileSync(path.join(workDir, 'rollout.json'), String(rollout?.[1]))
})

afterAll(async () => {
  if (server) expect(await server.stop(20000)).toBe(0)
  for (const table of Object.values(tables)) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  for (const dir of [stateDir, workDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

test('every example of the README and the docs runs as written, and prints what the page shows', async () => {
  const examples = docExamples().filter((e) => !e.syntax)
  expect(examples.length).toBeGreaterThan(40)
  const failures = []
  for (const example of examples) {
    const where = `${example.file}:${example.line} ${example.command}`
    const { code, output } = await shell(runnable(example.command))
    // The page names the default tables; this beacon has its own.
    const lines = output.replaceAll(tables.log, 'beacon_access_log').replaceAll(tables.rollup, 'beacon_access_rollup')
      .split('\n').filter((l) => l.trim() !== '')
    if (code !== 0) {
      failures.push(`${where}: exit ${code}: ${lines.slice(0, 3).join(' / ')}`)
      continue
    }
    if (example.output.length > 0 && headOf(lines[0] || '') !== headOf(example.output[0])) {
      failures.push(`${where}: prints "${lines[0]}", the page shows "${example.output[0]}"`)
    }
    const keys = documentedKeys(example.comment)
    if (keys) {
      let body
      try {
        body = JSON.parse(output)
      } catch {
        failures.push(`${where}: the comment shows JSON, it prints "${lines[0]}"`)
        continue
      }
      const missing = keys.filter((k) => !(k in body))
      if (missing.length > 0) failures.push(`${where}: the answer has no ${missing.join(', ')} (it has ${Object.keys(body).join(', ')})`)
    }
  }
  expect(failures).toEqual([])
})

test('each syntax summary names a command that --help lists', async () => {
  const { code, output } = await shell(runnable('npx beacon --help'))
  expect(code).toBe(0)
  const summaries = docExamples().filter((e) => e.syntax)
  expect(summaries.length).toBeGreaterThan(0)
  const unknown = summaries
    .map((e) => ({ where: `${e.file}:${e.line}`, command: e.command.split(' ').slice(2, 4).filter((w) => /^[a-z]+$/.test(w)).join(' ') }))
    .filter((e) => e.command === '' || !output.includes(`\n  ${e.command} `))
  expect(unknown).toEqual([])
})
