'use strict'

// Exact per-minute rollups of the access log (logging/rollup/), on the real HBase, through the
// same wiring as production (logging/index.js createSinks): rows written by the HBase sink mark
// their minutes; the roller counts marked minutes from the raw rows; the counts equal a scan of
// the raw rows — after late rows land in a counted minute (a journal replay), after the same
// rows are written twice (a retry that had landed), with two rollers racing.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { testClient, uniqueTable } = require('../support/hbase')
const { createSinks } = require('../../logging')
const { accessLogSplitKeys, ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')
const { accessEntry, eventEntry } = require('../../logging/access-entry')
const { ROLLUP_FAMILY, MINUTE_MS, minuteOf, rollupGroupOf, parseGroup, totalsOf } = require('../../logging/rollup/layout')
const { createRoller } = require('../../logging/rollup/roller')
const { checkRollups, exactMinutes, markedMinutes, parkedMinutes, rolledMinutes } = require('../../logging/rollup/read')
const { createLogQuery } = require('../../logging/query')

const BUCKETS = 16
let client
let rollupTable
const tables = []
const dirs = []
const closers = []

beforeAll(async () => {
  client = testClient()
  rollupTable = uniqueTable('rollup')
  await client.admin.createTable(rollupTable, { families: [ROLLUP_FAMILY] })
  tables.push(rollupTable)
})

afterAll(async () => {
  for (const close of closers.reverse()) await close()
  for (const table of tables) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

async function logTable () {
  const table = uniqueTable('rolluplog')
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(BUCKETS, 4) })
  tables.push(table)
  return table
}

/** One HBase sink built as production builds it (the rollup job is not in it: tests run rollers of their own). */
function sinkFor (table, { writerId = 'w' + Math.floor(Math.random() * 1e9), rollups = true } = {}) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-rollup-'))
  dirs.push(stateDir)
  const sinks = createSinks(
    { hbase: { type: 'hbase', table, rollupTable, rollups, buckets: BUCKETS, flushIntervalMs: 10 } },
    { client, stateDir, writerId }
  )
  closers.push(() => sinks.closeAll({ timeoutMs: 5000 }))
  return sinks.get('hbase')
}

function roller (table) {
  return createRoller({ client, logTable: table, rollupTable, buckets: BUCKETS, settleMs: 0 })
}

const STATUSES = [200, 200, 200, 304, 404, 503]
// People and bots (logging/bot-agent.js): a browser, a crawler, and no agent at all (a bot's).
const AGENTS = ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Mozilla/5.0 (compatible; Googlebot/2.1)', null,
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36']

// Rollout variants (lib/toggles/rollout.js): none for an id's own row or the default.
const VARIANTS = [null, 'A', 'B', null, 'B']

/**
 * Entries over the three minutes before the last one, endpoints, ids, statuses and variants
 * mixed, and now and then an event (which names the variant its page showed).
 */
function entries (n, base) {
  return Array.from({ length: n }, (_, i) => {
    const fields = {
      ts: base + (i * 7919) % (3 * MINUTE_MS),
      endpoint: i % 3 ? 'sample5' : 'sample4',
      id: i % 11 === 0 ? null : String(1 + (i % 7)),
      variant: VARIANTS[i % 13 % VARIANTS.length],
      ip: '127.0.0.1',
      ua: AGENTS[i % 5 % AGENTS.length],
      ref: null
    }
    if (i % 17 === 5) return eventEntry({ ...fields, id: fields.id ?? '8', event: 'exposure' })
    return accessEntry({ ...fields, status: STATUSES[i % STATUSES.length], version: 'v1', ms: 1 })
  })
}

/** The counts the test expects, by minute and group, from the entries it wrote. */
function tally (list, into = new Map()) {
  for (const e of list) {
    const minute = minuteOf(e.ts)
    if (!into.has(minute)) into.set(minute, new Map())
    const groups = into.get(minute)
    const group = rollupGroupOf(e)
    groups.set(group, (groups.get(group) || 0) + 1)
  }
  return into
}

async function rolledUp (table, from, to, want) {
  const got = new Map()
  // A minute's groups may come in parts (a partition's row each): added up.
  for await (const m of exactMinutes({ client, rollupTable, logTable: table, buckets: BUCKETS }, from, to, want)) {
    const seen = got.get(m.minute) || { groups: new Map(), from: m.from }
    for (const [group, n] of m.groups) seen.groups.set(group, (seen.groups.get(group) || 0) + n)
    got.set(m.minute, seen)
  }
  return got
}

/** The expected counts, shaped as a question reads them: totals, or one id's groups. */
function shaped (expected, { totals = false, id = null } = {}) {
  const out = new Map()
  for (const [minute, groups] of expected) {
    if (totals) out.set(minute, totalsOf(groups))
    else out.set(minute, new Map([...groups].filter(([g]) => parseGroup(g).id === id)))
  }
  return out
}

/** Totals and one id's counts, as exactMinutes answers them, against what was written. */
async function expectShapes (table, base, expected) {
  expectCounts(await rolledUp(table, base, base + 3 * MINUTE_MS, { totals: true }), shaped(expected, { totals: true }))
  expectCounts(
    await rolledUp(table, base, base + 3 * MINUTE_MS, { only: { endpoints: ['sample4', 'sample5'], id: '3' } }),
    shaped(expected, { id: '3' })
  )
}

function expectCounts (got, expected) {
  expect([...got.keys()].sort()).toEqual([...expected.keys()].sort())
  for (const [minute, groups] of expected) expect(Object.fromEntries(got.get(minute).groups)).toEqual(Object.fromEntries(groups))
}

test('a mark that fails is retried on its own: every row goes to HBase, none to the journal, and the minutes end up marked', async () => {
  const table = await logTable()
  // The real client, but its first write to the rollup table fails the way a busy region does:
  // marks written on their own, or riding in a write of the log (then the log's rows go through).
  let refused = 0
  const flaky = Object.create(client)
  flaky.multiPut = async (name, puts, options) => {
    const isMark = (put) => name === rollupTable || put.table === rollupTable
    if (refused === 0 && puts.some(isMark)) {
      refused++
      const err = Object.assign(new Error('injected: region busy'), { code: 'HBASE_REGION_BUSY', retryable: true })
      const others = puts.filter((put) => !isMark(put))
      const results = others.length ? await client.multiPut(name, others, options) : []
      return puts.map((put) => (isMark(put) ? err : results.shift()))
    }
    return client.multiPut(name, puts, options)
  }
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-rollup-'))
  dirs.push(stateDir)
  const sinks = createSinks({ hbase: { type: 'hbase', table, rollupTable, buckets: BUCKETS, flushIntervalMs: 10 } },
    { client: flaky, stateDir, writerId: 'flakymarks' })
  closers.push(() => sinks.closeAll({ timeoutMs: 5000 }))
  const sink = sinks.get('hbase')
  const base = minuteOf(Date.now()) - 5 * MINUTE_MS
  const written = entries(2000, base)
  for (const e of written) sink.write(e)
  await sink.flush()
  expect(refused).toBe(1)
  expect(sink.stats()).toMatchObject({ written: 2000, spilled: 0, journalPending: 0, journalBuffered: 0, state: 'up' })
  expect(sink.stats().rollup).toMatchObject({ disabled: null, markFailures: 1, markPending: 0 })
  const source = { client, rollupTable, logTable: table, buckets: BUCKETS }
  expect([...await markedMinutes(source, base, base + 3 * MINUTE_MS)]).toHaveLength(3)
  expect(await client.count(table)).toBe(2000)
})

test('rows written by the sink mark their minutes; the roller counts them exactly and clears the marks', async () => {
  const table = await logTable()
  const sink = sinkFor(table)
  const base = minuteOf(Date.now()) - 5 * MINUTE_MS
  const written = entries(3000, base)
  for (const e of written) sink.write(e)
  await sink.flush()
  expect(sink.stats()).toMatchObject({ written: 3000, rollup: { disabled: null, markFailures: 0 } })
  // Batches queued behind the first ones carried the marks of those before them (one RPC each).
  expect(sink.stats().rollup.marksRidden).toBeGreaterThan(0)
  const source = { client, rollupTable, logTable: table, buckets: BUCKETS }
  expect([...await markedMinutes(source, base, base + 3 * MINUTE_MS)]).toHaveLength(3)

  // Before the roller: the marked minutes are counted from the raw rows, exact all the same.
  const expected = tally(written)
  const before = await rolledUp(table, base, base + 3 * MINUTE_MS)
  expectCounts(before, expected)
  expect([...before.values()].every((m) => m.from === 'scan')).toBe(true)
  await expectShapes(table, base, expected)

  const job = roller(table)
  expect(await job.runOnce()).toBe(3)
  expect(job.stats()).toMatchObject({ minutesRolled: 3, rowsCounted: 3000, errors: 0, pendingMinutes: 0, lagSeconds: 0 })
  expect([...await markedMinutes(source, base, base + 3 * MINUTE_MS)]).toEqual([])
  const after = await rolledUp(table, base, base + 3 * MINUTE_MS)
  expectCounts(after, expected)
  expect([...after.values()].every((m) => m.from === 'rollup')).toBe(true)
  await expectShapes(table, base, expected)
  const check = await checkRollups(source, base, base + 3 * MINUTE_MS)
  expect(check).toMatchObject({ minutes: 3, rows: 3000, marked: [], differences: [] })
  // The totals rows: each minute's counts summed over ids, by endpoint and class.
  for await (const { minute, groups } of rolledMinutes(source, base, base + 3 * MINUTE_MS, 't')) {
    expect(Object.fromEntries(groups)).toEqual(Object.fromEntries(totalsOf(expected.get(minute))))
  }
})

test('late rows in a counted minute (a replay) are counted once; the same rows written twice (a retry that had landed) are not counted ' +
  'twice; two rollers racing agree', async () => {
  const table = await logTable()
  const base = minuteOf(Date.now()) - 10 * MINUTE_MS
  const first = entries(1200, base)
  const sink = sinkFor(table)
  for (const e of first) sink.write(e)
  await sink.flush()
  const job = roller(table)
  await job.runOnce()
  const source = { client, rollupTable, logTable: table, buckets: BUCKETS }
  expect((await checkRollups(source, base, base + 3 * MINUTE_MS)).differences).toEqual([])

  // Late rows from another writer (as a replayed journal brings them): the check sees the gap
  // (the minutes are marked), a roller run closes it.
  const late = entries(500, base + 17)
  const other = sinkFor(table)
  for (const e of late) other.write(e)
  await other.flush()
  const gap = await checkRollups(source, base, base + 3 * MINUTE_MS)
  expect(gap.differences.length).toBeGreaterThan(0)
  expect(gap.marked.length).toBeGreaterThan(0)

  // The same rows again, same keys (a write retried after a timeout that had in fact landed).
  const rows = []
  for await (const row of client.scan(table, { startRow: '00', limit: 300 })) rows.push(row)
  const results = await client.multiPut(table, rows.map((r) => ({ row: r.row, cells: { [ACCESS_LOG_FAMILY]: { e: r.cells[0].value } } })))
  expect(results.every((r) => r === null)).toBe(true)
  await client.put(rollupTable, `m/${table}/${String(minuteOf(Number(rows[0].row.toString().slice(2, 15)))).padStart(13, '0')}`, [
    { family: ROLLUP_FAMILY, qualifier: 'retry.1', value: '' }
  ])

  // Two rollers at once (two hosts), then the counts: every row once.
  await Promise.all([roller(table).runOnce(), roller(table).runOnce()])
  const check = await checkRollups(source, base, base + 3 * MINUTE_MS)
  expect(check).toMatchObject({ rows: 1700, marked: [], differences: [] })
  expectCounts(await rolledUp(table, base, base + 3 * MINUTE_MS), tally(late, tally(first)))
})

test('no rollup table: the sink switches its rollups off, says so, and the access log goes on', async () => {
  const table = await logTable()
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-rollup-'))
  dirs.push(stateDir)
  const sinks = createSinks(
    { hbase: { type: 'hbase', table, rollupTable: uniqueTable('missing'), buckets: BUCKETS, flushIntervalMs: 10 } },
    { client, stateDir, writerId: 'nort' }
  )
  closers.push(() => sinks.closeAll({ timeoutMs: 5000 }))
  const sink = sinks.get('hbase')
  for (const e of entries(200, Date.now() - MINUTE_MS)) sink.write(e)
  await sink.flush()
  const stats = sink.stats()
  expect(stats).toMatchObject({ written: 200, shed: 0, failed: 0, journalPending: 0, rollup: { disabled: 'HBASE_TABLE_NOT_FOUND' } })
  expect(await client.count(table)).toBe(200)
})

test('log counts from the rollups equal the raw scan, for every shape of question, part-minutes and marked minutes included', async () => {
  const table = await logTable()
  const base = minuteOf(Date.now()) - 20 * MINUTE_MS
  const sink = sinkFor(table)
  for (const e of entries(2400, base)) sink.write(e)
  await sink.flush()
  await roller(table).runOnce()
  // Late rows in the middle minute: marked, so that minute is scanned, not read from its rollup.
  const other = sinkFor(table)
  for (const e of entries(300, base + MINUTE_MS + 5).filter((e) => minuteOf(e.ts) === base + MINUTE_MS)) other.write(e)
  await other.flush()
  const query = createLogQuery({ client, table, buckets: BUCKETS, maxIdLength: 64, rollupTable, endpoints: ['sample4', 'sample5'] })
  const ranges = [[base, base + 3 * MINUTE_MS], [base + 17000, base + 3 * MINUTE_MS - 4000]]
  const shapes = [
    {},
    { by: 'endpoint' },
    { by: 'id' },
    { by: 'minute' },
    { id: '3' },
    { endpoint: 'sample4' },
    { endpoint: 'sample5', id: '5', by: 'minute' },
    { by: 'bot' },
    { endpoint: 'sample5', by: 'bot' },
    { id: '3', by: 'bot' },
    { by: 'variant' },
    { endpoint: 'sample5', by: 'variant' },
    { id: '3', by: 'variant' },
    { unique: true },
    { endpoint: 'sample5', by: 'variant', unique: true },
    { by: 'minute', unique: true }
  ]
  let fromRollups = 0
  for (const [from, to] of ranges) {
    for (const shape of shapes) {
      const q = { from, to, ...shape }
      const rolled = await query.count(q)
      const scanned = await query.count({ ...q, scan: true })
      expect({ q, total: rolled.total, groups: rolled.groups, unique: rolled.unique }).toEqual(
        { q, total: scanned.total, groups: scanned.groups, unique: scanned.unique })
      expect(rolled.scannedMinutes).toBe(1) // the marked one
      fromRollups += rolled.rollupMinutes
    }
  }
  expect(fromRollups).toBeGreaterThan(0)
  // By bot: people and bots apart, each as many as were written.
  const written = [...entries(2400, base), ...entries(300, base + MINUTE_MS + 5).filter((e) => minuteOf(e.ts) === base + MINUTE_MS)]
  const bots = written.filter((e) => e.bot).length
  expect(bots).toBeGreaterThan(0)
  expect(bots).toBeLessThan(written.length)
  const byBot = await query.count({ from: base, to: base + 3 * MINUTE_MS, by: 'bot' })
  expect(Object.fromEntries(byBot.groups.map((g) => [g.key, g.count]))).toEqual({ bot: bots, human: written.length - bots })
  // By variant: views as written; unique: the distinct ids each variant was served to.
  const sample5 = written.filter((e) => e.endpoint === 'sample5')
  const views = {}
  const ids = {}
  for (const e of sample5) {
    const key = (e.event ? 'event:' : '') + (e.variant ?? '(none)')
    views[key] = (views[key] || 0) + 1
    if (e.id !== null) (ids[key] ??= new Set()).add(e.id)
  }
  const range = { from: base, to: base + 3 * MINUTE_MS, endpoint: 'sample5', by: 'variant' }
  const byVariant = await query.count(range)
  expect(Object.keys(views).sort()).toEqual(['(none)', 'A', 'B', 'event:(none)', 'event:A', 'event:B'])
  expect(Object.fromEntries(byVariant.groups.map((g) => [g.key, g.count]))).toEqual(views)
  const uniqueByVariant = await query.count({ ...range, unique: true })
  expect(uniqueByVariant.unique).toBe(true)
  expect(Object.fromEntries(uniqueByVariant.groups.map((g) => [g.key, g.count]))).toEqual(
    Object.fromEntries(Object.entries(ids).map(([k, set]) => [k, set.size])))
  expect(uniqueByVariant.total).toBe(new Set(sample5.filter((e) => e.id !== null).map((e) => e.id)).size)
  // Past its bound a unique count fails, never answers less.
  const tight = createLogQuery({
    client, table, buckets: BUCKETS, maxIdLength: 64, rollupTable, endpoints: ['sample4', 'sample5'], maxUniquePairs: 3
  })
  await expect(tight.count({ ...range, unique: true })).rejects.toMatchObject({ code: 'TOO_MANY_IDS', statusCode: 422 })
  // An exact status is not the rollups' to answer: scanned.
  expect((await query.count({ from: base, to: base + 3 * MINUTE_MS, status: 404 })).rollupMinutes).toBeUndefined()
})

test('minutes the rollups do not cover (rows a writer with rollups off wrote) are counted from the raw rows, not taken as ' +
  'empty', async () => {
  const table = await logTable()
  const base = minuteOf(Date.now()) - 30 * MINUTE_MS
  const marking = sinkFor(table)
  const first = entries(900, base).filter((e) => minuteOf(e.ts) === base)
  for (const e of first) marking.write(e)
  await marking.flush()
  await roller(table).runOnce()
  // Two minutes later, rows from a writer without rollups: no mark, no rollup row.
  const unmarked = sinkFor(table, { rollups: false })
  const later = entries(900, base).filter((e) => minuteOf(e.ts) === base + MINUTE_MS).map((e) => ({ ...e, ts: e.ts + MINUTE_MS }))
  for (const e of later) unmarked.write(e)
  await unmarked.flush()
  const query = createLogQuery({ client, table, buckets: BUCKETS, maxIdLength: 64, rollupTable, endpoints: ['sample4', 'sample5'] })
  for (const shape of [{}, { by: 'minute' }, { id: '3' }, { by: 'id' }]) {
    const q = { from: base, to: base + 5 * MINUTE_MS, ...shape }
    const rolled = await query.count(q)
    const scanned = await query.count({ ...q, scan: true })
    expect({ q, total: rolled.total, groups: rolled.groups }).toEqual({ q, total: scanned.total, groups: scanned.groups })
    // base from its rollup; base+1 (empty), base+2 (unmarked rows), base+3, base+4 from raw rows.
    expect([rolled.rollupMinutes, rolled.scannedMinutes]).toEqual([1, 4])
  }
  expect((await query.count({ from: base, to: base + 5 * MINUTE_MS })).total).toBe(first.length + later.length)
})

test('a minute that cannot be counted is parked and does not hold up later ones; tried again later, it is counted', async () => {
  const table = await logTable()
  const sink = sinkFor(table)
  const base = minuteOf(Date.now()) - 5 * MINUTE_MS
  const written = entries(1500, base)
  for (const e of written) sink.write(e)
  await sink.flush()
  const source = { client, rollupTable, logTable: table, buckets: BUCKETS }
  const [first, ...later] = [...await markedMinutes(source, base, base + 3 * MINUTE_MS)].sort((a, b) => a - b)
  expect(later).toHaveLength(2)
  // The real client, but every scan of the first minute's raw rows fails, as one too big to count did.
  let broken = true
  const failing = Object.create(client)
  failing.scanBatches = (name, opts) => {
    const from = Number(String(opts.startRow).slice(2, 15))
    if (broken && name === table && from >= first && from < first + MINUTE_MS) {
      throw Object.assign(new Error('injected: too big'), { code: 'E_BIG' })
    }
    return client.scanBatches(name, opts)
  }
  let now = Date.now()
  const job = createRoller({
    client: failing,
    logTable: table,
    rollupTable,
    buckets: BUCKETS,
    settleMs: 0,
    clock: { now: () => now },
    maxAttempts: 3,
    parkAfterMs: 2 * MINUTE_MS
  })
  // Its first failure does not stop the later minutes.
  expect(await job.runOnce()).toBe(2)
  expect(job.stats()).toMatchObject({ minutesRolled: 2, errors: 1, lastError: 'E_BIG', parkedMinutes: 0 })
  expect([...await markedMinutes(source, base, base + 3 * MINUTE_MS)]).toEqual([first])
  // A process that died counting it left an attempt, as every attempt does before it starts.
  now += MINUTE_MS
  const dead = { family: ROLLUP_FAMILY, qualifier: 'try.dead.0', value: '', timestamp: now }
  await client.put(rollupTable, `a/${table}/${String(first).padStart(13, '0')}`, [dead])
  expect(await job.runOnce()).toBe(0)
  expect(job.stats().parkedMinutes).toBe(0) // 3 attempts, but within 2 minutes: not yet
  expect(await parkedMinutes(source, base, base + 3 * MINUTE_MS)).toEqual([])
  now += 2 * MINUTE_MS
  expect(await job.runOnce()).toBe(0)
  expect(job.stats().parkedMinutes).toBe(1)
  expect(await parkedMinutes(source, base, base + 3 * MINUTE_MS)).toEqual([first])
  const check = await checkRollups(source, base, base + 3 * MINUTE_MS)
  expect(check).toMatchObject({ parked: [first], marked: [first], unmarkedDifferences: 0 })
  expect(check.differenceCount).toBeGreaterThan(0)
  // Parked: left alone (no attempt) until an hour after its last attempt, even once it could be counted.
  broken = false
  now += 30 * MINUTE_MS
  expect(await job.runOnce()).toBe(0)
  now += 31 * MINUTE_MS
  expect(await job.runOnce()).toBe(1)
  expect(job.stats()).toMatchObject({ parkedMinutes: 0, lastError: null })
  expect(await parkedMinutes(source, base, base + 3 * MINUTE_MS)).toEqual([])
  expect(await checkRollups(source, base, base + 3 * MINUTE_MS)).toMatchObject({ rows: 1500, marked: [], parked: [], differenceCount: 0 })
  expectCounts(await rolledUp(table, base, base + 3 * MINUTE_MS), tally(written))
})
