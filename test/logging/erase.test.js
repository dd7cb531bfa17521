'use strict'

// Erasing one id's access-log rows on the real HBase (logging/erase.js), as an operator runs it:
// `beacon log erase` against a real beacon. Rows of the id across every salt bucket and several
// minutes, beside rows the id's server-side filter also lets through (the same id in another
// case) and ids it must not touch (a longer id, others); requests and events. A dry run only
// counts; the erase deletes exactly the id's rows in the range, the rollups of the minutes it
// touched agree with `log check` afterwards, HBase's own Java client counts what is left, and a
// second run finds nothing. A missing or invalid id is refused (400; exit 1).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { startBeacon, request } = require('../support/beacon')
const { runCli } = require('../support/cli')
const { testClient, uniqueTable } = require('../support/hbase')
const { createRoller } = require('../../logging/rollup/roller')
const { ROLLUP_FAMILY, MINUTE_MS, minuteOf } = require('../../logging/rollup/layout')
const { accessEntry, eventEntry } = require('../../logging/access-entry')

const TOKEN = 'erase-token-0123456789-0123456789a'
const VICTIM = `gone${process.pid}`
// Rows the erase must keep: the same id in capitals (HBase's substring filter ignores case, the
// exact test does not), an id it prefixes, another id.
const KEPT = [VICTIM.toUpperCase(), `${VICTIM}2`, `other${process.pid}`]
const T0 = minuteOf(Date.now()) - 10 * MINUTE_MS
const PAST_ROWS = 240 // 3 minutes from T0, 750 ms apart, ids in turn: victim, then each of KEPT
const VIEWS = 6 // the victim's requests now, through sample5
const ROLLUP = uniqueTable('eraseroll')
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-erase-'))
const options = hbase.resolveOptions(JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}'))

let app
let admin

/** `beacon <args>` against the test's beacon, with its token. */
function cli (args) {
  return runCli(args, { BEACON_STATE_DIR: STATE_DIR, BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN })
}

async function json (args) {
  const res = await cli([...args, '--json'])
  expect(res).toMatchObject({ code: 0, stderr: '' })
  return JSON.parse(res.stdout)
}

/** Rows per id, counted from the raw rows (`--scan`) and from the rollups. */
async function countsById () {
  const range = ['--from', new Date(T0).toISOString()]
  const scanned = await json(['log', 'count', ...range, '--by', 'id', '--scan'])
  const rolled = await json(['log', 'count', ...range, '--by', 'id'])
  const byId = (answer) => Object.fromEntries(answer.groups.map((g) => [g.key, g.count]))
  return { scanned: byId(scanned), rolled: byId(rolled) }
}

/** Counts every marked minute now, as the rollup job would (its clock ahead so the minute in progress is due). */
async function rollAll () {
  const clock = { now: () => Date.now() + 120000 }
  const roller = createRoller({ client: admin, logTable: app.accessLogTable, rollupTable: ROLLUP, buckets: 16, settleMs: 0, clock })
  while (await roller.runOnce() > 0);
  expect(roller.stats().lastError).toBeNull()
}

beforeAll(async () => {
  admin = testClient()
  await admin.admin.createTable(ROLLUP, { families: [ROLLUP_FAMILY] })
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { logSinks: { hbase: { rollupTable: ROLLUP } } } })
  // Through the real sink (so the minutes are marked and rolled up like any others): past rows over
  // every salt bucket, requests and events, and the victim's views now.
  const sink = app.sinks.get('hbase')
  for (let i = 0; i < PAST_ROWS; i++) {
    const id = [VICTIM, ...KEPT][i % 4]
    const ts = T0 + i * 750
    sink.write(i % 8 === 0
      ? eventEntry({ ts, endpoint: 'sample5', id, event: 'exposure', variant: 'b' })
      : accessEntry({ ts, endpoint: 'sample5', id, status: 200, ms: 1 }))
  }
  const views = await Promise.all(Array.from({ length: VIEWS }, () => request(`${app.url}/api/sample5.js?id=${VICTIM}&callback=cb`)))
  expect(views.every((v) => v.status === 200)).toBe(true)
  await sink.flush()
  await rollAll()
})

afterAll(async () => {
  if (app) await app.close()
  await admin.admin.deleteTable(ROLLUP).catch(() => {})
  await admin.close()
  fs.rmSync(STATE_DIR, { recursive: true, force: true })
})

test('a dry run counts the id\'s rows and deletes nothing', async () => {
  const before = await countsById()
  const each = PAST_ROWS / 4
  expect(before.scanned).toEqual({ [VICTIM]: each + VIEWS, [KEPT[0]]: each, [KEPT[1]]: each, [KEPT[2]]: each })
  expect(before.rolled).toEqual(before.scanned)
  const dry = await json(['log', 'erase', '--id', VICTIM, '--dry-run'])
  expect(dry).toMatchObject({ id: VICTIM, dryRun: true, found: PAST_ROWS / 4 + VIEWS, deleted: 0 })
  expect((await countsById()).scanned).toEqual(before.scanned)
})

test('the erase deletes exactly the id\'s rows in the range, recounts their minutes, and a second run finds none', async () => {
  // A range first: the victim's rows of the first past minute only.
  const minute = ['--from', new Date(T0).toISOString(), '--to', new Date(T0 + MINUTE_MS).toISOString()]
  const inMinute = PAST_ROWS / 4 / 3 // 80 rows a minute, every fourth the victim's
  expect(await json(['log', 'erase', '--id', VICTIM, ...minute])).toMatchObject({ found: inMinute, deleted: inMinute, minutes: 1 })
  expect((await countsById()).scanned[VICTIM]).toBe(PAST_ROWS / 4 + VIEWS - inMinute)

  // Then the whole log: every row left, in every bucket and minute.
  const text = await cli(['log', 'erase', '--id', VICTIM])
  expect(text).toMatchObject({ code: 0, stderr: '' })
  const rest = PAST_ROWS / 4 + VIEWS - inMinute
  expect(text.stdout).toMatch(new RegExp(`^erased ${rest} of ${rest} rows of id ${VICTIM} in .*; rollups of [34] minutes counted again\\n$`))
  const after = await countsById()
  expect(after.scanned).toEqual({ [KEPT[0]]: PAST_ROWS / 4, [KEPT[1]]: PAST_ROWS / 4, [KEPT[2]]: PAST_ROWS / 4 })
  // The rollups agree at once (no minute left to the rollup job), and with a full check.
  expect(after.rolled).toEqual(after.scanned)
  const check = await json(['log', 'check', '--from', new Date(T0).toISOString()])
  expect(check).toMatchObject({ exact: true, marked: [], differences: [] })
  expect(check.rows).toBe(3 * PAST_ROWS / 4)

  // Safe to run again.
  expect(await json(['log', 'erase', '--id', VICTIM])).toMatchObject({ found: 0, deleted: 0, minutes: 0 })

  // HBase's own Java client: no row of the id, every other row still there.
  const dumpFile = path.join(STATE_DIR, 'dump.tsv')
  const dump = await hbase.dumpTable(options, { table: app.accessLogTable, family: 'l', qualifier: 'e', outFile: dumpFile })
  expect(dump.rows).toBe(3 * PAST_ROWS / 4)
  const ids = fs.readFileSync(dumpFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line.split('\t')[1]).id)
  expect(ids).not.toContain(VICTIM)
  expect(new Set(ids)).toEqual(new Set(KEPT))
})

test('a missing or invalid id is refused: 400 from the error table on the route, exit 1 in the CLI', async () => {
  const missing = await cli(['log', 'erase'])
  expect(missing).toMatchObject({ code: 1, stdout: '' })
  expect(missing.stderr).toMatch(/--id is required/)
  const invalid = await cli(['log', 'erase', '--id', 'a b'])
  expect(invalid).toMatchObject({ code: 1, stdout: '' })
  expect(invalid.stderr).toMatch(/^beacon: 400: id must be letters, digits, _ or -/)

  const post = async (query, headers = { Authorization: `Bearer ${TOKEN}` }) => {
    const res = await fetch(`${app.adminUrl}/admin/log/erase${query}`, { method: 'POST', headers })
    return { status: res.status, body: await res.json() }
  }
  const missingId = { status: 400, code: 'MISSING_ID', message: 'the id query parameter is required' }
  expect(await post('')).toEqual({ status: 400, body: { error: missingId } })
  expect((await post('?id=x&id=y')).body.error.code).toBe('BAD_ID')
  expect((await post('?id=1&from=yesterday')).body.error.code).toBe('BAD_TIME')
  expect((await post(`?id=${VICTIM}`, {})).status).toBe(401)
  const get = await fetch(`${app.adminUrl}/admin/log/erase?id=1`, { headers: { Authorization: `Bearer ${TOKEN}` } })
  expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST'])
})
