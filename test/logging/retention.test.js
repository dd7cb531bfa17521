'use strict'

// Retention on the real HBase (logging/retention.js): the tables that hbase:up's setup tool
// creates get the settings' TTLs; `beacon status` and `beacon log retention` show them; `beacon
// log retention --set` applies a TTL of seconds to the existing tables, after which the rows vanish
// from `log scan`, `log count --scan` and HBase's own Java client, while the per-minute rollups keep
// their own horizon; a count that read raw rows past the horizon says so (JSON and stderr).
// One beacon, its own log and rollup tables; one JVM for the setup tool and one for the Java check.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { startBeacon, request } = require('../support/beacon')
const { runCli } = require('../support/cli')
const { testClient, uniqueTable } = require('../support/hbase')
const { createRoller } = require('../../logging/rollup/roller')
const { minuteOf, MINUTE_MS } = require('../../logging/rollup/layout')

const TOKEN = 'retention-token-0123456789-0123456'
const ID = `ret${process.pid}`
const N = 12
const TTL_S = 3
const LOG = uniqueTable('retlog')
const ROLLUP = uniqueTable('retroll')
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-retention-'))
const options = hbase.resolveOptions({
  ...JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}'),
  accessLogTable: LOG,
  rollupTable: ROLLUP,
  accessLogRetention: '1h',
  rollupRetention: '2h'
})

let app
let admin
let setup

/** `beacon <args>` against the test's beacon, with its token. */
function cli (args) {
  return runCli(args, { BEACON_STATE_DIR: STATE_DIR, BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until a cell HBase took at `writtenAt` is past a TTL of `seconds` (HBase and this test share a clock). */
async function pastTtl (writtenAt, seconds) {
  await sleep(Math.max(0, writtenAt + seconds * 1000 + 500 - Date.now()))
}

/** Counts every marked minute now (a roller of the test's own, its clock ahead so the minute in progress is due). */
async function rollAll () {
  const clock = { now: () => Date.now() + 120000 }
  const roller = createRoller({ client: admin, logTable: LOG, rollupTable: ROLLUP, buckets: 16, settleMs: 0, clock })
  while (await roller.runOnce() > 0);
  expect(roller.stats().lastError).toBeNull()
}

async function count (range, extra = []) {
  const res = await cli(['log', 'count', '--from', range.from, '--to', range.to, '--id', ID, '--json', ...extra])
  expect(res.code).toBe(0)
  return { ...JSON.parse(res.stdout), stderr: res.stderr }
}

beforeAll(async () => {
  admin = testClient()
  // The tables as `npm run hbase:up` and the server's start create them: HBase's Java client, in the setup tool.
  setup = await hbase.setupTables(options)
  app = await startBeacon({
    env: { BEACON_ADMIN_TOKEN: TOKEN },
    overrides: { logSinks: { hbase: { table: LOG, rollupTable: ROLLUP, retention: '1h', rollupRetention: '2h' } } }
  })
})

afterAll(async () => {
  if (app) await app.close()
  for (const table of [LOG, ROLLUP]) await admin.admin.deleteTable(table).catch(() => {})
  await admin.close()
  fs.rmSync(STATE_DIR, { recursive: true, force: true })
})

test('tables created by the setup tool get the settings\' retention; status and log retention show it', async () => {
  expect(setup.created).toEqual(expect.arrayContaining([LOG, ROLLUP]))
  expect(await admin.admin.familyTtls(LOG)).toEqual({ l: 3600 })
  expect(await admin.admin.familyTtls(ROLLUP)).toEqual({ r: 7200 })

  const shown = JSON.parse((await cli(['log', 'retention', '--json'])).stdout)
  expect(shown).toEqual({
    log: { table: LOG, retention: '1h', seconds: 3600, configured: '1h' },
    rollups: { table: ROLLUP, retention: '2h', seconds: 7200, configured: '2h' }
  })
  // status shows what the host read last (within a minute), under its checks.
  const status = await cli(['status'])
  expect(status.code).toBe(0)
  expect(status.stdout).toMatch(new RegExp(`\\n  retention\\n    ${LOG}\\s+1h\\n    ${ROLLUP}\\s+2h`))
  // A bad duration is a usage error, and changes nothing.
  const bad = await cli(['log', 'retention', '--set', '90'])
  expect(bad.code).toBe(1)
  expect(bad.stderr).toMatch(/400: a retention must be a duration like 30s/)
  expect(await admin.admin.familyTtls(LOG)).toEqual({ l: 3600 })
})

test('past a retention of seconds, rows vanish from scan, count --scan and the Java client; the rollups keep theirs', async () => {
  const answers = await Promise.all(Array.from({ length: N }, () => request(`${app.url}/api/sample5.js?id=${ID}&callback=cb`)))
  expect(answers.every((a) => a.status === 200)).toBe(true)
  await app.sinks.get('hbase').flush()
  const writtenAt = Date.now()
  await rollAll()
  const rows = (await cli(['log', 'scan', '--from', '-10m', '--id', ID])).stdout.trim().split('\n').map((l) => JSON.parse(l))
  expect(rows).toHaveLength(N)
  // Whole minutes around the rows: the rollups can answer all of it.
  const first = Math.min(...rows.map((r) => r.ts))
  const last = Math.max(...rows.map((r) => r.ts))
  const whole = { from: new Date(minuteOf(first)).toISOString(), to: new Date(minuteOf(last) + MINUTE_MS).toISOString() }
  expect(await count(whole, ['--scan'])).toMatchObject({ total: N, source: 'scan', horizon: { known: true, complete: true }, stderr: '' })
  expect(await count(whole)).toMatchObject({ total: N, source: { scannedMinutes: 0 }, horizon: { complete: true }, stderr: '' })

  // Applied to the existing table: every row is older than the new TTL.
  const set = await cli(['log', 'retention', '--set', `${TTL_S}s`])
  expect(set).toMatchObject({ code: 0, stderr: '' })
  expect(set.stdout).toMatch(new RegExp(`^${LOG}\\s+3s  \\(the settings say 1h`))
  await pastTtl(writtenAt, TTL_S)

  expect((await cli(['log', 'scan', '--from', '-10m', '--id', ID])).stdout).toBe('')
  const scanned = await count(whole, ['--scan'])
  expect(scanned).toMatchObject({ total: 0, horizon: { known: true, retention: '3s', complete: false } })
  expect(scanned.stderr).toMatch(/^beacon: part of this range was counted from raw rows older than .* \(retention 3s\)/)
  // The rollups keep the minutes' counts for their own retention: complete from them alone.
  expect(await count(whole)).toMatchObject({ total: N, horizon: { complete: true, rollupRetention: '2h' }, stderr: '' })
  // A range that starts inside a minute reads that part from raw rows past the horizon: said.
  const partly = { from: new Date(minuteOf(first) - 30000).toISOString(), to: whole.to }
  const counted = await count(partly)
  expect(counted).toMatchObject({ total: N, horizon: { complete: false } })
  expect(counted.stderr).toMatch(/retention 3s.*the per-minute rollups are kept 2h/)

  // The rollups past their own retention: their minutes are no longer covered, so read raw (and said).
  const setRollups = await cli(['log', 'retention', '--set-rollups', `${TTL_S}s`, '--json'])
  expect(JSON.parse(setRollups.stdout).rollups).toMatchObject({ retention: '3s', configured: '2h' })
  await pastTtl(writtenAt, TTL_S)
  expect(await count(whole)).toMatchObject({ total: 0, source: { rollupMinutes: 0 }, horizon: { complete: false } })

  // HBase's own Java client finds no row either.
  const dumpFile = path.join(STATE_DIR, 'dump.tsv')
  const dump = await hbase.dumpTable(options, { table: LOG, family: 'l', qualifier: 'e', outFile: dumpFile })
  expect(dump.rows).toBe(0)
  expect(fs.readFileSync(dumpFile, 'utf8')).toBe('')
})
