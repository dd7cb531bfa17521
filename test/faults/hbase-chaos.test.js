'use strict'

// Chaos under load, the short seeded run CI can afford (the bench's `--scenario chaos` runs the
// same for 3 minutes and more): a 3-RegionServer cluster with a backup master; the server
// cluster (server.js, 2 workers) under closed-loop load on sample2, sample3 and sample5 while the
// seeded driver kills and restarts RegionServers, restarts one gracefully, moves regions, splits
// the access-log table and kills the active master, one action every 10–20 s. Counted afterwards
// with HBase's own Java client, not beacon's:
// - cached endpoints (sample3, sample5) answer 200 to every request;
// - every 2xx of sample5 is one row of the access-log table (found by the request's unique
//   User-Agent): none missing, no duplicates, nothing else;
// - sample2 answers 503 only while a region is in transition (from an action until HBase's Java
//   client sees every region online again, plus one request deadline), each within the deadline;
// - no worker died, the server stopped cleanly, and left nothing in its state dir (the loss
//   audit: runChaos counts the rows after the stop, when the state dir is as the audit sees it).
// Runs on the cluster the cluster fault files share in a jest run (test/support/fault-cluster.js),
// never the shared test HBase, with tables of its own that no other file writes or splits: the
// rows counted are this file's alone. The driver leaves every JVM running for the next file, and
// the tables are dropped at the end.

const fs = require('node:fs')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { runChaos, chaosMarkdown, CHAOS_KINDS: KINDS } = require('../../tools/chaos')
const { startLoops, stopRunningLoads } = require('../support/load')
const { request } = require('../support/beacon')
const { freePorts } = require('../support/ports')
const { expectNothingLeft, recordAudit } = require('../support/loss-audit')
const { ownTables, clusterOptions, sharedCluster, dropTables } = require('../support/fault-cluster')

jest.setTimeout(15 * 60 * 1000)

// The server (runChaos passes it the tables of these options) and the count use these tables.
const OWN = ownTables('faults_chaos', 200)
const options = clusterOptions(OWN)
const SEED = Number(process.env.BEACON_CHAOS_SEED || 11)
// The server's state dir, emptied before each run: discarding the cluster removes the HBase data
// only, and a journal an earlier run left here would be claimed into this run's table (same name)
// and show as rows nobody answered.
const APP_STATE_DIR = path.join(options.stateDir, 'chaos-app')
const CHAOS_MS = 70000
// Closed loops, each with a think time: a request, then the rest of PACE_MS. Unpaced loops on this
// 2-core machine would take the CPU the six HBase JVMs need to keep their ZooKeeper sessions.
const LOOPS_PER_ENDPOINT = 3
const PACE_MS = 20

let cluster
let bootstrap

beforeAll(async () => {
  fs.rmSync(APP_STATE_DIR, { recursive: true, force: true })
  cluster = await sharedCluster(OWN)
  bootstrap = cluster.bootstrap
})

afterAll(async () => {
  if (cluster) await dropTables(cluster)
})

afterEach(stopRunningLoads)

/** @type {import('../../tools/chaos').StartLoad} */
function closedLoops ({ url, ids, nextMark, record }) {
  const endpoints = ['sample2', 'sample3', 'sample5']
  return startLoops({
    loops: LOOPS_PER_ENDPOINT * endpoints.length,
    maxMs: 10 * 60 * 1000,
    async step (i, agent) {
      const endpoint = endpoints[i % endpoints.length]
      const id = String(1 + Math.floor(Math.random() * ids))
      const headers = endpoint === 'sample5' ? { 'user-agent': nextMark() } : {}
      const sent = Date.now()
      try {
        const res = await request(`${url}/api/${endpoint}.js?id=${id}&callback=cb`, { agent, headers })
        record({ endpoint, id, mark: headers['user-agent'], sent, done: Date.now(), status: res.status })
      } catch (err) {
        record({ endpoint, id, mark: headers['user-agent'], sent, done: Date.now(), status: 0, error: err.code || err.message })
      }
      await sleep(Math.max(0, sent + PACE_MS - Date.now()))
    }
  })
}

test('chaos under load: cached endpoints always 200, every sample5 2xx one access-log row, sample2 503s only while a region is in ' +
  'transition', async () => {
  const [port, adminPort] = await freePorts(2)
  const lines = []
  const r = await runChaos({
    hbaseOptions: options,
    bootstrap,
    durationMs: CHAOS_MS,
    seed: SEED,
    startLoad: closedLoops,
    ports: { port, adminPort },
    stateDir: APP_STATE_DIR,
    log: (line) => lines.push(line)
  })
  console.log(`chaos (seed ${SEED}):\n${chaosMarkdown(r).join('\n')}\n\ndriver ` +
    `and server log:\n${lines.filter((l) => l.startsWith('chaos')).join('\n')}`)

  // It was chaos: the faults the issue names all ran (a graceful restart too when a slot found
  // every RegionServer up: the deck deals it, but a RegionServer killed earlier may still be
  // rejoining; the bench's 3 minutes have room for every kind), none failed, HBase recovered from each.
  const kinds = new Set(r.actions.map((a) => a.kind))
  for (const kind of ['kill-rs', 'move-region', 'split-region', 'kill-master']) expect(kinds).toContain(kind)
  expect(KINDS).toEqual(expect.arrayContaining([...kinds]))
  expect(r.actions.filter((a) => a.error)).toEqual([])
  expect(r.actions.filter((a) => a.reassignedMs === null)).toEqual([])
  expect(r.sample2.failures).toBeGreaterThan(0) // a RegionServer with a config region was down

  // Cached endpoints: 200 to every request, chaos or not.
  expect(r.cachedFailures).toEqual([])
  for (const name of ['sample3', 'sample5']) expect(r.answers[name].requests).toBeGreaterThan(1000)

  // sample2: only 503s, within the deadline, while a region was in transition.
  expect(r.sample2.notServiceUnavailable).toEqual([])
  expect(r.sample2.overDeadline).toEqual([])
  expect(r.sample2.outsideWindows).toEqual([])

  // Nothing left on disk by the stop (the server exited before the table was dumped, and its
  // state dir has not changed since), then every 2xx of sample5 is exactly one row, as HBase's
  // Java client reads the table.
  const left = await expectNothingLeft(APP_STATE_DIR, { answered: r.answers.sample5.ok })
  recordAudit({ answered: r.answers.sample5.ok, rows: r.dump.rows, leftOnDisk: left })
  expect(r.accessLog.ok).toBe(r.answers.sample5.ok)
  expect(r.accessLog).toMatchObject({ rowsFound: r.accessLog.ok, duplicates: 0, missing: 0, extra: 0, otherRows: 0 })
  expect(r.dump.rows).toBe(r.accessLog.ok)

  // The server never crashed and stopped cleanly.
  expect(r.crashed).toEqual({ workerDeaths: [], primaryAlive: true, exitCode: 0 })
})
