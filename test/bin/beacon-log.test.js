'use strict'

// `beacon log scan` and `beacon log count` as a user or a script runs them: `node bin/beacon.js`
// in a child process against a real beacon on the real HBase. Rows come from the real sink
// (sample5 requests) and from the client (a large range in the past).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, spawn } = require('node:child_process')
const { startBeacon, request } = require('../support/beacon')
const { until } = require('../support/until')
const { freePorts } = require('../support/ports')
const { accessLogRowKey } = require('../../logging/access-log-layout')
const { accessEntry, serializeEntry } = require('../../logging/access-entry')

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')
const TOKEN = 'cli-log-token-0123456789-012345678'
const ID = `cli${process.pid}`
const N = 37
const BIG_FROM = Date.UTC(2025, 4, 1, 12)
const BIG_ROWS = 20000

// A state dir of its own, so that no token `npm start` left in the checkout's is read.
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cli-state-'))

let app
let env
let deadUrl // nobody listens there

/** @returns {Promise<{ code: number, stdout: string, stderr: string }>} */
function cli (args, extraEnv = env) {
  return new Promise((resolve) => {
    const childEnv = { PATH: process.env.PATH, BEACON_STATE_DIR: STATE_DIR, ...extraEnv }
    execFile(process.execPath, [CLI, ...args], { env: childEnv, timeout: 30000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

/** BIG_ROWS rows of ~1.2 KB from BIG_FROM, 100 ms apart, ids 0-6, into a beacon's log table. */
async function writeBigRows (beacon) {
  const ua = 'u'.repeat(512)
  const puts = Array.from({ length: BIG_ROWS }, (_, i) => {
    const ts = BIG_FROM + i * 100
    const entry = accessEntry({ ts, endpoint: 'sample5', id: String(i % 7), status: 200, ms: 1, ua, ref: ua })
    return { row: accessLogRowKey(i % 16, ts, `big-${i}`), cells: { l: { e: serializeEntry(entry) } } }
  })
  expect((await beacon.client.multiPut(beacon.accessLogTable, puts, { timeout: 30000 })).filter(Boolean)).toEqual([])
}

/** Starts `beacon log scan` over the big range; resolves once its first rows are out, reading paused. */
async function pausedScan (beacon) {
  const range = ['--from', new Date(BIG_FROM).toISOString(), '--to', new Date(BIG_FROM + BIG_ROWS * 100).toISOString()]
  const child = spawn(process.execPath, [CLI, 'log', 'scan', ...range], {
    env: { PATH: process.env.PATH, BEACON_STATE_DIR: STATE_DIR, BEACON_ADMIN_URL: beacon.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })))
  // The first rows arrive; then stop reading, so the scan cannot run ahead to its end.
  await new Promise((resolve) => child.stdout.once('data', resolve))
  child.stdout.pause()
  return { child, exited }
}

beforeAll(async () => {
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN } })
  env = { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
  deadUrl = `http://127.0.0.1:${(await freePorts(1))[0]}`
  // N views of one id through the real endpoint and sink, one other id beside them.
  const answers = await Promise.all([
    ...Array.from({ length: N }, () => request(`${app.url}/api/sample5.js?id=${ID}&callback=cb`)),
    ...Array.from({ length: 5 }, () => request(`${app.url}/api/sample5.js?id=${ID}x&callback=cb`))
  ])
  expect(answers.every((a) => a.status === 200)).toBe(true)
  await app.sinks.get('hbase').flush()
  await writeBigRows(app)
})

afterAll(async () => {
  if (app) await app.close()
  fs.rmSync(STATE_DIR, { recursive: true, force: true })
})

describe('the contracts scripts rely on', () => {
  test('`log count --from -10m --id ID --json` prints one JSON object with the exact count in total', async () => {
    const res = await cli(['log', 'count', '--from', '-10m', '--id', ID, '--json'])
    expect(res).toMatchObject({ code: 0, stderr: '' })
    expect(res.stdout.split('\n')).toEqual([expect.any(String), ''])
    const answer = JSON.parse(res.stdout)
    expect(answer).toMatchObject({ total: N, filters: { id: ID } })
    expect(Date.parse(answer.to) - Date.parse(answer.from)).toBe(10 * 60 * 1000)
  })

  test('`log scan --from -10m --id ID` prints one JSON object per line, with ts, in time order', async () => {
    const res = await cli(['log', 'scan', '--from', '-10m', '--id', ID])
    expect(res).toMatchObject({ code: 0, stderr: '' })
    const lines = res.stdout.split('\n')
    expect(lines.pop()).toBe('')
    const entries = lines.map((l) => JSON.parse(l))
    expect(entries).toHaveLength(N)
    for (const e of entries) expect(e).toMatchObject({ ts: expect.any(Number), endpoint: 'sample5', id: ID, status: 200 })
    expect(entries.map((e) => e.ts)).toEqual(entries.map((e) => e.ts).sort((a, b) => a - b))
  })
})

test('scan: --to, --limit, --after, --csv, --status and --endpoint', async () => {
  const from = new Date(BIG_FROM).toISOString()
  const to = new Date(BIG_FROM + 1000).toISOString()
  const ten = await cli(['log', 'scan', '--from', from, '--to', to])
  const rows = ten.stdout.trim().split('\n').map((l) => JSON.parse(l))
  expect(rows.map((r) => r.ts)).toEqual(Array.from({ length: 10 }, (_, i) => BIG_FROM + i * 100))
  const page1 = (await cli(['log', 'scan', '--from', from, '--to', to, '--limit', '4'])).stdout.trim().split('\n').map((l) => JSON.parse(l))
  const page2 = (await cli(['log', 'scan', '--from', from, '--to', to, '--limit', '4', '--after', page1[3].key]))
    .stdout.trim().split('\n').map((l) => JSON.parse(l))
  expect([...page1, ...page2]).toEqual(rows.slice(0, 8))
  const csv = await cli(['log', 'scan', '--from', from, '--to', to, '--csv', '--id', '3', '--status', '200', '--endpoint', 'sample5'])
  expect(csv.code).toBe(0)
  const lines = csv.stdout.split('\r\n')
  expect(lines[0]).toBe('ts,time,endpoint,id,status,event,variant,ms,ip,ua,ref,key,bot,version')
  expect(lines.slice(1, -1).map((l) => l.split(',')[0])).toEqual([String(BIG_FROM + 300)])
  expect((await cli(['log', 'scan', '--from', from, '--to', to, '--status', '404'])).stdout).toBe('')
})

test('count: text with groups by default, --json, --by minute', async () => {
  const from = new Date(BIG_FROM).toISOString()
  const to = new Date(BIG_FROM + 120000).toISOString()
  const text = await cli(['log', 'count', '--from', from, '--to', to, '--by', 'id'])
  expect(text.code).toBe(0)
  const lines = text.stdout.trimEnd().split('\n')
  expect(lines[0]).toBe(`1200 rows  ${from} .. ${to}`)
  expect(lines.slice(1).map((l) => l.trim().split(/\s+/))).toEqual([
    ['0', '172'], ['1', '172'], ['2', '172'], ['3', '171'], ['4', '171'], ['5', '171'], ['6', '171']
  ])
  const json = JSON.parse((await cli(['log', 'count', '--from', from, '--to', to, '--by', 'minute', '--json'])).stdout)
  expect(json).toMatchObject({
    total: 1200,
    by: 'minute',
    groups: [{ key: from, count: 600 }, { key: new Date(BIG_FROM + 60000).toISOString(), count: 600 }]
  })
})

test('--help for both: usage, the times they take, examples; exit 0 without asking a server', async () => {
  for (const words of [['log', 'scan'], ['log', 'count']]) {
    const res = await cli([...words, '--help'], { BEACON_ADMIN_URL: deadUrl })
    expect(res).toMatchObject({ code: 0, stderr: '' })
    expect(res.stdout).toMatch(new RegExp(`^usage: beacon ${words.join(' ')} --from <time> \\[--to <time>\\]`))
    expect(res.stdout).toContain('-15m')
    expect(res.stdout).toContain('examples:')
  }
  const general = await cli(['--help'])
  expect(general.stdout).toContain('  log scan --from <time>')
  expect(general.stdout).toContain('130 interrupted (Ctrl-C)')
})

describe('exit codes', () => {
  test.each([
    ['from after to', ['log', 'count', '--from', '-1h', '--to', '-2h'], /^beacon: 400: the time range is empty: from must be before to\n$/],
    ['from equal to to', ['log', 'scan', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z'], /the time range is empty/],
    ['an unknown --by', ['log', 'count', '--from', '-1h', '--by', 'ua'], /by must be one of endpoint, id, status, minute/],
    ['a bad --limit', ['log', 'scan', '--from', '-1h', '--limit', '0'], /limit must be a whole number/],
    ['a bad --status', ['log', 'scan', '--from', '-1h', '--status', 'ok'], /status must be an HTTP status/]
  ])('1, as the server judges it: %s', async (name, args, message) => {
    const res = await cli(args)
    expect(res).toMatchObject({ code: 1, stdout: '' })
    expect(res.stderr).toMatch(message)
  })

  test.each([
    ['no --from', ['log', 'count', '--id', '4'], /^beacon: --from is required/],
    ['--from without its value', ['log', 'scan', '--from'], /argument missing/],
    ['an unknown option', ['log', 'scan', '--from', '-1h', '--form', 'x'], /Unknown option '--form'/],
    ['an argument', ['log', 'count', 'extra', '--from', '-1h'], /usage: beacon log count --from <time>/],
    // Times are checked here, so the error names the option first and carries no HTTP status.
    ['a time that is not one', ['log', 'count', '--from', 'yesterday'], /^beacon: --from takes ISO-8601 \(2026-01-31T12:00:00Z\), .*\n$/],
    ['a relative time in the future', ['log', 'scan', '--from', '+5m'], /^beacon: --from takes ISO-8601/],
    ['a day that does not exist', ['log', 'scan', '--from', '2026-02-30'], /^beacon: --from takes ISO-8601/],
    ['a bad --to', ['log', 'scan', '--from', '-1h', '--to', 'soon'], /^beacon: --to takes ISO-8601/]
  ])('1, before asking the server: %s', async (name, args, message) => {
    const res = await cli(args, { BEACON_ADMIN_URL: deadUrl, BEACON_ADMIN_TOKEN: TOKEN })
    expect(res).toMatchObject({ code: 1, stdout: '' })
    expect(res.stderr).toMatch(message)
  })

  test('2: no token, a wrong token, nobody listening', async () => {
    const noToken = await cli(['log', 'count', '--from', '-1h'], { BEACON_ADMIN_URL: app.adminUrl })
    expect(noToken).toEqual({
      code: 2,
      stdout: '',
      stderr: 'beacon: 401: a valid bearer token is required (set BEACON_ADMIN_TOKEN or BEACON_ADMIN_TOKEN_FILE)\n'
    })
    const wrong = await cli(['log', 'scan', '--from', '-1h'], { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: 'nope' })
    expect(wrong).toMatchObject({ code: 2, stdout: '' })
    const nobody = await cli(['log', 'scan', '--from', '-1h'], { BEACON_ADMIN_URL: deadUrl, BEACON_ADMIN_TOKEN: TOKEN })
    expect(nobody).toEqual({ code: 2, stdout: '', stderr: `beacon: cannot reach ${deadUrl}: ECONNREFUSED\n` })
  })

  test('130: Ctrl-C mid-scan ends the request, and the server closes its scanners', async () => {
    const query = app.beacon.logQuery
    const before = query.stats().stoppedEarly
    const { child, exited } = await pausedScan(app)
    expect(query.stats().openScans).toBe(16)
    child.kill('SIGINT')
    child.stdout.resume()
    expect(await exited).toEqual({ code: 130, signal: null, stderr: 'beacon: interrupted\n' })
    await until('the server closed every bucket scan', () => query.stats().openScans === 0, 10000)
    expect(query.stats().stoppedEarly).toBe(before + 1)
  })

  test('0: a reader that closes early (`log scan | head`) ends the scan, and the server closes its scanners', async () => {
    const query = app.beacon.logQuery
    const before = query.stats().stoppedEarly
    const { child, exited } = await pausedScan(app)
    child.stdout.destroy() // what `head` does once it has its lines: the pipe's reader is gone
    expect(await exited).toEqual({ code: 0, signal: null, stderr: '' })
    await until('the server closed every bucket scan', () => query.stats().openScans === 0, 10000)
    expect(query.stats().stoppedEarly).toBe(before + 1)
  })

  test('2: a scan that fails after rows went out is cut short, never taken for a whole one', async () => {
    const doomed = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN } })
    try {
      await writeBigRows(doomed)
      const { child, exited } = await pausedScan(doomed)
      // The table goes away under the paused scan: its next page cannot be read.
      await doomed.client.admin.deleteTable(doomed.accessLogTable)
      child.stdout.resume()
      const { code, stderr } = await exited
      expect({ code, stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^beacon: the scan was cut short: \S+\n$/) })
      expect(doomed.beacon.logQuery.stats()).toMatchObject({ openScans: 0, stoppedEarly: 1 })
    } finally {
      await doomed.close()
    }
  })
})

describe('beacon log check', () => {
  // A beacon of its own that keeps rollups: rows through its sink, and rows written behind it.
  let rolled
  let rolledEnv
  beforeAll(async () => {
    rolled = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { logSinks: { hbase: { rollups: true } } } })
    rolledEnv = { BEACON_ADMIN_URL: rolled.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
    const answers = await Promise.all(Array.from({ length: N }, () => request(`${rolled.url}/api/sample5.js?id=${ID}&callback=cb`)))
    expect(answers.every((a) => a.status === 200)).toBe(true)
    await rolled.sinks.get('hbase').flush()
    await writeBigRows(rolled)
  })
  afterAll(async () => {
    if (rolled) await rolled.close()
  })
  const check = (args) => cli(['log', 'check', ...args], rolledEnv)

  test('rows the sink wrote: marked minutes may differ and are listed, exit 0; once rolled up, equal, exit 0; counts from the rollups ' +
    'equal the scan', async () => {
    const before = await check(['--from', '-10m', '--json'])
    expect(before.code).toBe(0)
    const a = JSON.parse(before.stdout)
    expect(a.exact).toBe(true)
    expect(a.rows).toBe(N)
    expect(a.marked.length).toBeGreaterThan(0)
    expect(a.differences.every((d) => d.marked)).toBe(true)

    const { rollupsAgainstRaw } = require('../support/rollups')
    const done = await rollupsAgainstRaw({
      bootstrap: rolled.client.options.bootstrap,
      logTable: rolled.accessLogTable,
      from: Date.now() - 10 * 60000
    })
    expect(done.differences).toEqual([])
    const after = await check(['--from', '-10m', '--json'])
    expect(after.code).toBe(0)
    expect(JSON.parse(after.stdout)).toMatchObject({ exact: true, marked: [], differences: [] })
    expect((await check(['--from', '-10m'])).stdout).toMatch(/^exact: \d+ minutes, \d+ rows /)
    const counted = JSON.parse((await cli(['log', 'count', '--from', '-10m', '--id', ID, '--json'], rolledEnv)).stdout)
    expect(counted.total).toBe(N)
  })

  test('rows written behind the sink\'s back (no marks, no rollups): every difference reported, exit 3', async () => {
    const from = new Date(BIG_FROM).toISOString()
    const to = new Date(BIG_FROM + 5 * 60000).toISOString()
    const r = await check(['--from', from, '--to', to, '--json'])
    expect(r.code).toBe(3)
    const body = JSON.parse(r.stdout)
    expect(body).toMatchObject({ exact: false, minutes: 5, rows: 3000, marked: [] })
    expect(body.differences.reduce((n, d) => n + d.raw, 0)).toBe(3000)
    expect(body.differences.every((d) => d.rollup === 0 && !d.marked)).toBe(true)
    const text = await check(['--from', from, '--to', to])
    expect(text.code).toBe(3)
    expect(text.stdout).toMatch(/^DIFFERENT: 5 minutes, 3000 rows/)
    expect((await check(['--from', 'yesterday'])).code).toBe(1)
    // Such rows are not in the rollups' counts either; --scan reads them.
    const scanned = JSON.parse((await cli(['log', 'count', '--from', from, '--to', to, '--scan', '--json'], rolledEnv)).stdout)
    expect(scanned).toMatchObject({ total: 3000, source: 'scan' })
  })
})
