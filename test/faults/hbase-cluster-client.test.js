'use strict'

// @beacon/hbase-client, beacon's own HBase client, against a real multi-RegionServer HBase (tools/dev-hbase:
// ZooKeeper, an active and a backup master, 3 RegionServers, each its own JVM): the cluster the
// cluster fault files share in a jest run (test/support/fault-cluster.js), beside the shared test
// HBase; the file's data lives in tables of its own (cc_span, cc_reshape), dropped at the end with
// the beacon tables the cluster was brought up with. Every test leaves the cluster whole (3 live
// RegionServers, 2 masters) for the next, and for the next file. The balancer is switched off so
// that regions stay where the tests put them, and on again at the end.
// - gets, multi-gets and multi-puts whose rows span every RegionServer: one Multi RPC per server,
//   one result per action;
// - a region moved, a split and a merge, each under load: the client follows by itself;
// - a RegionServer SIGKILLed while the client is busy: calls on its regions fail typed within
//   their deadline or succeed after relocation, calls on other regions never fail, RPCs to the
//   dead server fail at once (no hang), and the same client serves every region once they are
//   reassigned;
// - a RegionServer frozen (SIGSTOP: its sockets stay open, nothing answers): the same, with RPCs
//   to it given up after rpcTimeout, and the client follows its regions once meta moved them;
// - the server holding hbase:meta SIGKILLed: the same, and a client started meanwhile (nothing
//   cached) reads everything once meta is back;
// - the active master SIGKILLed with a backup running: reads and writes never notice; admin calls
//   fail typed until the backup is active, then work, also from a client that knew the old master.
// Each fault logs its timeline: kill → first failure, last failure and first success on the
// affected regions, how failures were typed, and the slowest call against its deadline.

const hbase = require('../../tools/dev-hbase')
const { createHBaseClient, findCell } = require('@beacon/hbase-client')
const { regionContains } = require('@beacon/hbase-client/lib/meta')
const { stopRunningLoads } = require('../support/load')
const { until } = require('../support/until')
const { startClientLoad, recordOf, timeline, describeTimeline } = require('../support/client-load')
const { ownTables, clusterOptions, sharedCluster, dropTables } = require('../support/fault-cluster')

jest.setTimeout(120000)

const OWN = ownTables('faults_client', 100)
const options = clusterOptions(OWN)
const SERVERS = Array.from({ length: options.regionServers }, (_, i) => `${options.host}:${options.rsPort + i}`)
const MASTERS = Array.from({ length: options.masters }, (_, i) => `${options.host}:${options.masterPort + i}`)
const CLIENT = { rpcTimeout: 1000, operationTimeout: 3000 }
// A call ends by its deadline, or when its connection's sweeper (every quarter of the RPC's
// timeout, 250 ms at most) finds its last RPC expired; plus event-loop lag on this shared machine.
const DEADLINE_MS = CLIENT.operationTimeout + 250 + 150
// 6 regions, two per RegionServer; rows interleaved so that consecutive gets hit different regions.
const SPAN = 'cc_span'
const SPAN_SPLITS = ['1', '2', '3', '4', '5']
const SPAN_ROWS = [0, 1, 2, 3, 4].flatMap((k) => ['0', ...SPAN_SPLITS].map((d) => `${d}-${k}`))
// Split at "c" (region b..d) and merge regions d.. and f.. under load.
const RESHAPE = 'cc_reshape'
const RESHAPE_ROWS = [0, 1, 2].flatMap((k) => ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((c) => `${c}-${k}`))
const BOUND_MS = 60000
const SIGNAL_SETTLE_MS = 20
const POLL_MS = 250

let cluster
let bootstrap
let admin // placement and admin calls
let client // the client under test: data calls only, every RPC observed
/** @type {Array<import('@beacon/hbase-client/lib/pool').RpcEvent & { at: number }>} */
const rpcs = []
const report = []

beforeAll(async () => {
  cluster = await sharedCluster(OWN)
  bootstrap = cluster.bootstrap
  admin = createHBaseClient({ bootstrap, ...CLIENT })
  client = createHBaseClient({ bootstrap, ...CLIENT, onRpc: (event) => rpcs.push({ ...event, at: Date.now() }) })
  expect(await admin.admin.setBalancer(false)).toBe(true) // tools/dev-hbase runs the cluster with it on
  expect(await admin.admin.setBalancer(false)).toBe(false)
  await admin.admin.createTable(SPAN, { families: ['f'], splits: SPAN_SPLITS })
  await admin.admin.createTable(RESHAPE, { families: ['f'], splits: ['b', 'd', 'f'] })
  await spread(SPAN)
  await spread(RESHAPE)
  expect(await admin.multiPut(SPAN, SPAN_ROWS.map((row) => ({ row, cells: { f: { v: row } } })))).toEqual(SPAN_ROWS.map(() => null))
  expect(
    await admin.multiPut(
      RESHAPE,
      RESHAPE_ROWS.map((row) => ({ row, cells: { f: { v: row } } }))
    )
  ).toEqual(RESHAPE_ROWS.map(() => null))
}, 180000)

afterEach(stopRunningLoads)

afterAll(async () => {
  if (report.length) console.log(`cluster client report:\n${report.join('\n')}`)
  try {
    if (admin) await admin.admin.setBalancer(true) // as tools/dev-hbase runs the cluster, for the next file
  } finally {
    for (const c of [client, admin]) if (c) await c.destroy()
  }
  if (cluster) await dropTables(cluster, [SPAN, RESHAPE])
}, 180000)

/** Polls a real condition, up to BOUND_MS. */
function waitFor (what, predicate) {
  return until(what, predicate, BOUND_MS, POLL_MS)
}

/** HBase's own Java client's view, once it satisfies `ok` (nothing in transition either). */
async function javaView (what, ok) {
  let view = null
  await waitFor(what, async () => {
    view = await hbase.inspectCluster(options).catch(() => null)
    return Boolean(view && view.inTransition === 0 && ok(view))
  })
  return view
}

/** The cluster whole again: every RegionServer live, an active master and its backups. */
function whole () {
  return javaView(
    'the cluster whole again',
    (v) => v.live.length === SERVERS.length && Boolean(v.active) && v.backups.length === MASTERS.length - 1
  )
}

/**
 * Moves the regions of `table` so that region i sits on RegionServer i mod N. A server that has
 * just rejoined may refuse its first opens (the master then places the region elsewhere), so
 * the moves are repeated until the placement holds, up to BOUND_MS.
 */
async function spread (table) {
  const wanted = (i) => SERVERS[i % SERVERS.length]
  let placed = []
  await waitFor(`the regions of ${table} spread over every RegionServer`, async () => {
    for (const [i, region] of (await admin.regions(table)).entries()) {
      if (region.server !== wanted(i)) await admin.admin.moveRegion(region.name, { to: wanted(i) })
    }
    placed = await admin.regions(table)
    return placed.every((r, i) => r.server === wanted(i))
  })
  return placed
}

function p50 (values) {
  return values.length ? [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] : null
}

function regionOf (regions, row) {
  return regions.find((r) => regionContains(r, Buffer.from(row)))
}

/** "Multi host:port" of each RPC seen since `from`, sorted. */
function multisSince (from) {
  return rpcs.slice(from).map((e) => `${e.method} ${e.server}`).sort()
}

const oneMultiEach = SERVERS.map((s) => `Multi ${s}`).sort()

test('gets, multi-gets and multi-puts whose rows span every RegionServer: one Multi RPC per server, a result per action', async () => {
  const regions = await admin.regions(SPAN)
  expect(new Set(regions.map((r) => r.server))).toEqual(new Set(SERVERS))
  await client.multiGet(SPAN, SPAN_ROWS) // the client learns the regions (meta lookups)

  let from = rpcs.length
  const sample = SPAN_ROWS.slice(0, regions.length)
  for (const row of sample) expect(findCell(await client.get(SPAN, row), 'f', 'v').value.toString()).toBe(row)
  expect(rpcs.slice(from).map((e) => `${e.method} ${e.server}`)).toEqual(sample.map((row) => `Get ${regionOf(regions, row).server}`))

  const puts = SPAN_ROWS.map((row) => ({ row: `${row}-m`, cells: { f: { v: `m ${row}` } } }))
  from = rpcs.length
  expect(await client.multiPut(SPAN, puts)).toEqual(puts.map(() => null))
  expect(multisSince(from)).toEqual(oneMultiEach)

  const absent = ['0', ...SPAN_SPLITS].map((d) => `${d}-absent`)
  from = rpcs.length
  const got = await client.multiGet(SPAN, [...puts.map((p) => p.row), ...absent])
  expect(multisSince(from)).toEqual(oneMultiEach)
  expect(got.slice(0, puts.length).map((r) => findCell(r, 'f', 'v').value.toString())).toEqual(puts.map((p) => `m ${p.row.slice(0, -2)}`))
  expect(got.slice(puts.length)).toEqual(absent.map(() => null))

  // One action the server refuses (no such family) fails alone and is not retried.
  const mixed = [...puts.slice(0, 6), { row: puts[6].row, cells: { nope: { q: 'x' } } }]
  from = rpcs.length
  const results = await client.multiPut(SPAN, mixed)
  expect(results.slice(0, 6)).toEqual([null, null, null, null, null, null])
  expect(results[6]).toMatchObject({ code: 'HBASE_NO_SUCH_FAMILY' })
  expect(multisSince(from)).toEqual(oneMultiEach)
})

test('a region moved to another server under load: the client follows by itself, no call fails', async () => {
  const regions = await admin.regions(SPAN)
  const [region] = regions
  const to = SERVERS.find((s) => s !== region.server)
  const ofRegion = (row) => regionOf(regions, row) === region
  const load = startClientLoad(client, SPAN, SPAN_ROWS)
  await waitFor('the load running', () => load.records.length > 50)
  const from = rpcs.length
  const movedAt = Date.now()
  await admin.admin.moveRegion(region.name, { to })
  const moveMs = Date.now() - movedAt
  await waitFor('the load reading the moved region again', () =>
    load.records.some((r) => r.t0 > movedAt + moveMs && ofRegion(r.row) && r.ok)
  )
  await load.stop()

  const t = timeline(load.records, movedAt, ofRegion, DEADLINE_MS)
  report.push(`move (${moveMs} ms): ${describeTimeline('region moved', t)}`)
  expect(t.failures).toBe(0)
  expect(t.overDeadline).toBe(0)
  // The old server turned the client away (the region had moved), and the client found it anew.
  expect(rpcs.slice(from).some((e) => e.server === region.server && e.error && e.error.relocate)).toBe(true)
  const last = rpcs.length
  await client.get(SPAN, SPAN_ROWS.find(ofRegion))
  expect(rpcs.slice(last).map((e) => e.server)).toEqual([to])
  await spread(SPAN)
})

test('a split and a merge under load: the client follows to the new regions, every acknowledged write is there', async () => {
  const before = await admin.regions(RESHAPE)
  // The split takes region b..d, the merge d..f and f..: rows from "b" on. Rows "a-*" stay put.
  const reshaped = (row) => row >= 'b'
  const load = startClientLoad(client, RESHAPE, RESHAPE_ROWS, { writes: true })
  await waitFor('the load running', () => load.written.length > 0)
  const from = rpcs.length
  const startedAt = Date.now()
  await admin.admin.splitRegion(RESHAPE, 'c')
  const splitAt = Date.now()
  await admin.admin.mergeRegions(before.filter((r) => ['d', 'f'].includes(r.startKey.toString())).map((r) => r.name))
  const mergedAt = Date.now()
  await waitFor('a multi-get and a multi-put after the merge', () =>
    ['multiGet', 'multiPut'].every((op) => load.records.some((r) => r.op === op && r.t0 > mergedAt))
  )
  await load.stop()

  const after = await admin.regions(RESHAPE)
  expect(after.map((r) => r.startKey.toString())).toEqual(['', 'b', 'c', 'd'])
  const t = timeline(load.records, startedAt, reshaped, DEADLINE_MS)
  report.push(`split (${splitAt - startedAt} ms) then merge (${mergedAt - splitAt} ms): ` +
    `${describeTimeline('split + merge', t)}; ${load.written.length} rows written meanwhile`)
  // While a parent is closed and its new regions are not open yet, calls on its rows may run out
  // of deadline; they fail typed, in time, and nothing else fails.
  expect(Object.keys(t.codes).every((code) => code.startsWith('HBASE_TIMEOUT<-HBASE_'))).toBe(true)
  expect(t.overDeadline).toBe(0)
  expect(t.otherFailures).toBe(0)
  // The parents turned the client away, and it found the new regions: every call started once
  // the split (for rows b..d) or the merge (for the rest) was done succeeded.
  expect(rpcs.slice(from).some((e) => e.error && e.error.relocate)).toBe(true)
  const settled = (r) => r.t0 > (r.row < 'd' ? splitAt : mergedAt)
  expect(load.records.filter((r) => settled(r) && !r.ok)).toEqual([])
  expect(load.records.filter((r) => settled(r) && r.row >= 'b').length).toBeGreaterThan(0)
  const back = await client.multiGet(RESHAPE, load.written)
  expect(back.filter((r) => !r || r instanceof Error)).toEqual([])
})

/**
 * SIGKILLs (or with `freeze`, SIGSTOPs: a process that holds its sockets open and never answers,
 * like a long GC pause) the RegionServer `victim` while the client is busy on SPAN; waits until
 * meta has its regions on the live servers and the client served a multi-get started after that;
 * checks and reports the timeline; restarts the server and spreads the regions again (also on
 * failure, so the next test finds the cluster whole).
 * @param {string} what
 * @param {string} victim "host:port"
 * @param {{ freeze?: boolean, meanwhile?: (killedAt: number) => Promise<void> }} [how]
 *   meanwhile: runs right after the kill
 */
async function killRegionServer (what, victim, { freeze = false, meanwhile = async () => {} } = {}) {
  const regions = await admin.regions(SPAN)
  const hit = regions.filter((r) => r.server === victim)
  expect(hit.length).toBeGreaterThan(0)
  const affected = (row) => hit.includes(regionOf(regions, row))
  const target = { role: 'regionserver', index: SERVERS.indexOf(victim) + 1 }
  const { pid } = (await hbase.status(options)).processes.find((p) => p.role === target.role && p.index === target.index)
  const load = startClientLoad(client, SPAN, SPAN_ROWS, { gets: 3 })
  await waitFor('the load running', () => load.records.length > 50)
  const from = rpcs.length
  const killedAt = Date.now()
  try {
    if (freeze) process.kill(pid, 'SIGSTOP') // our own cluster's RegionServer, by its pid file
    else await hbase.kill(options, target) // returns once the process has exited
    const goneAt = Date.now()
    await meanwhile(killedAt)
    // HBase's own record: meta names a live server for every region (written once it is open).
    await waitFor(`the regions of ${victim} reassigned`, async () => {
      const now = await admin.regions(SPAN).catch(() => [])
      return now.length === regions.length && now.every((r) => r.server && r.server !== victim)
    })
    const reassignedAt = Date.now()
    await waitFor('a multi-get started after the reassignment', () => load.records.some((r) => r.op === 'multiGet' && r.t0 > reassignedAt))
    await load.stop()

    const t = timeline(load.records, killedAt, affected, DEADLINE_MS)
    // RPCs sent once the victim was surely gone: a signal is delivered to every thread of a JVM
    // within a few ms of kill() returning, and an RPC sent just before may still be answered.
    const toVictim = rpcs.slice(from).filter((e) => e.server === victim && e.at - e.ms >= goneAt + SIGNAL_SETTLE_MS)
    const slowest = Math.max(0, ...toVictim.map((e) => e.ms))
    const victimEndings = {}
    for (const e of toVictim) {
      const ending = e.error ? e.error.code : 'answered'
      victimEndings[ending] = (victimEndings[ending] || 0) + 1
    }
    // Rows on live servers while the victim's regions failed: a single get is not held up; a
    // multi-get that also carries rows of those regions answers only when they settle.
    const outageEnd = killedAt + (t.lastFailureMs ?? 0)
    const live = (op) =>
      p50(load.records.filter((r) => r.op === op && r.t0 >= goneAt && r.t1 <= outageEnd && !affected(r.row)).map((r) => r.t1 - r.t0))
    report.push(`${what}: regions reassigned in meta by ${((reassignedAt - killedAt) / 1000).toFixed(1)} s; ${describeTimeline(what, t)};` +
      ` ${toVictim.length} RPCs sent to the ${freeze ? 'frozen' : 'dead'} server ` +
      `(${JSON.stringify(victimEndings)}), the slowest ended after ${slowest.toFixed(0)} ms;` +
      ` rows on live servers meanwhile: get p50 ${live('get')} ms, multi-get p50 ${live('multiGet')} ms`)
    // Calls on its regions failed typed (the operation's deadline, with the last error as cause)
    // and within their deadline; nothing else failed.
    expect(Object.keys(t.codes).every((code) => code.startsWith('HBASE_TIMEOUT<-HBASE_'))).toBe(true)
    expect(t.overDeadline).toBe(0)
    expect(t.otherFailures).toBe(0)
    // A dead server refuses at once; a frozen one is given up on after rpcTimeout. Either way no
    // call waited longer for an answer that could not come.
    expect(toVictim.length).toBeGreaterThan(0)
    expect(victimEndings).toEqual({ [freeze ? 'HBASE_CALL_TIMEOUT' : 'HBASE_CONNECTION']: toVictim.length })
    // The same client serves every region again: every call it started after the reassignment
    // succeeded (a frozen server still holds its connections open: only meta says where to go).
    expect(load.records.filter((r) => r.t0 > reassignedAt && !r.ok)).toEqual([])
  } finally {
    await load.stop()
    await hbase.kill(options, target) // a frozen one too: its regions are gone, and it would abort on waking
    await hbase.restart(options, target)
    await whole()
    await spread(SPAN)
  }
}

test('a RegionServer SIGKILLed under load: its regions fail typed within the deadline, then the same client serves them from their new ' +
  'servers', async () => {
  const view = await whole()
  await killRegionServer('RegionServer SIGKILL', view.live.find((s) => !s.meta).server)
}, 180000)

test('a RegionServer frozen (SIGSTOP) under load: the client gives up on it after rpcTimeout and follows its regions to their new ' +
  'servers', async () => {
  const view = await whole()
  await killRegionServer('RegionServer SIGSTOP', view.live.find((s) => !s.meta).server, { freeze: true })
}, 180000)

test('the server holding hbase:meta SIGKILLed: the same, and a client started meanwhile reads everything once meta is back', async () => {
  const view = await whole()
  const victim = view.live.find((s) => s.meta).server
  let cold
  // Nothing cached: every read needs meta, which is on the dead server.
  const meanwhile = async (killedAt) => {
    const fresh = createHBaseClient({ bootstrap, ...CLIENT })
    const failures = {}
    try {
      await waitFor('a client started after the kill reading every row', async () => {
        const rows = await fresh.multiGet(SPAN, SPAN_ROWS)
        const failed = rows.filter((r) => r instanceof Error)
        for (const { code, cause } of failed.map((err) => recordOf('multiGet', '', 0, err))) {
          failures[`${code}<-${cause}`] = (failures[`${code}<-${cause}`] || 0) + 1
        }
        return failed.length === 0 && rows.every((r, i) => findCell(r, 'f', 'v').value.toString() === SPAN_ROWS[i])
      })
      cold = { ms: Date.now() - killedAt, failures }
    } finally {
      await fresh.close()
    }
  }
  await killRegionServer('meta server SIGKILL', victim, { meanwhile })
  report.push('meta server SIGKILL: a client started after the kill read every row at ' +
    `${(cold.ms / 1000).toFixed(1)} s; its failures before: ${JSON.stringify(cold.failures)}`)
  expect(Object.keys(cold.failures).length).toBeGreaterThan(0) // it did start while meta was away
}, 180000)

test('the active master SIGKILLed with a backup running: reads and writes never notice; admin calls wait for the backup, then ' +
  'work', async () => {
  const view = await whole()
  const index = MASTERS.indexOf(view.active) + 1
  expect(await admin.admin.tableExists(SPAN)).toBe(true) // the admin client knows the active master
  const load = startClientLoad(client, SPAN, SPAN_ROWS, { writes: true })
  await waitFor('the load running', () => load.written.length > 0)
  const probe = createHBaseClient({ bootstrap, ...CLIENT })
  const fresh = createHBaseClient({ bootstrap, ...CLIENT })
  const adminCalls = []
  let freshRead
  let restarted = false
  try {
    const killedAt = Date.now()
    await hbase.kill(options, { role: 'master', index })
    // No master now: a client started meanwhile still finds meta (bootstrap from any server) and reads.
    freshRead = { rows: await fresh.multiGet(SPAN, SPAN_ROWS), at: Date.now() }
    await waitFor('an admin call answered by the new active master', async () => {
      const t0 = Date.now()
      const result = await probe.admin.tableExists(SPAN).catch((err) => err)
      adminCalls.push(recordOf('tableExists', SPAN, t0, result))
      return result === true
    })
    const adminUpAt = Date.now()
    // The old master comes back as a backup. The admin client still thinks it is the active one.
    await hbase.restart(options, { role: 'master', index })
    restarted = true
    const after = await whole()
    expect(after.active).toBe(view.backups[0])
    expect(after.backups).toEqual([view.active])
    const asked = Date.now()
    expect(await admin.admin.tableExists(SPAN)).toBe(true)
    const [region] = await admin.regions(SPAN)
    await admin.admin.moveRegion(region.name, { to: SERVERS.find((s) => s !== region.server) })
    const staleAdminMs = Date.now() - asked
    await load.stop()

    const data = timeline(load.records, killedAt, () => true, DEADLINE_MS)
    const adminT = timeline(adminCalls, killedAt, () => true, CLIENT.operationTimeout + 400)
    report.push(`master SIGKILL: ${describeTimeline('data path', data)}; ${describeTimeline('admin (tableExists)', adminT)};` +
      ' a client started after the kill read every row at ' +
      `${((freshRead.at - killedAt) / 1000).toFixed(1)} s, before any master was active` +
      ` (${((adminUpAt - killedAt) / 1000).toFixed(1)} s); the admin client ` +
      `that knew the old master: tableExists + moveRegion in ${staleAdminMs} ms`)
    expect(data.failures).toBe(0)
    expect(data.overDeadline).toBe(0)
    expect(freshRead.rows.every((r) => r && !(r instanceof Error))).toBe(true)
    expect(freshRead.at).toBeLessThan(adminUpAt)
    expect(adminT.failures).toBeGreaterThan(0) // admin calls do need the master
    expect(Object.keys(adminT.codes).every((code) => code.startsWith('HBASE_TIMEOUT<-'))).toBe(true)
    expect(adminT.overDeadline).toBe(0)
  } finally {
    await Promise.all([probe.destroy(), fresh.destroy()])
    if (!restarted) await hbase.restart(options, { role: 'master', index })
  }
}, 180000)
