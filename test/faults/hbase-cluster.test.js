'use strict'

// The multi-RegionServer HBase of `BEACON_HBASE_REGIONSERVERS=3 BEACON_HBASE_MASTERS=2 npm run hbase:up`,
// started the way a user starts it (the npm scripts and their env). It is the cluster the cluster
// fault files share in a jest run (test/support/fault-cluster.js: its state dir and ports, beside
// the shared test HBase), with tables of this file's own: `hbase:up` starts it when this file is
// the run's first to use it (and the up time is printed), else finds it running, restarts any JVM
// that is not and creates the tables; a master that an earlier file's kill made a backup is made
// active again first, since the checks name the first master as the active one:
// - HBase's own Java client, pointed at its ZooKeeper, sees 3 live RegionServers, an active and a
//   backup master, and the beacon tables' regions on every RegionServer;
// - `hbase:status` prints one line per JVM with pid, port and regions held;
// - `hbase:kill -- --rs 2` is noticed within the ZooKeeper session timeout (seconds, not 90 s), its
//   regions are reassigned, and `hbase:restart -- --rs 2` brings it back;
// - `npm start` with the same env serves from the cluster it finds (or starts);
// - `hbase:down` stops every JVM (the next file that uses the cluster starts it again).

const path = require('node:path')
const fs = require('node:fs')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const hbase = require('../../tools/dev-hbase')
const { isAlive } = require('../../tools/dev-hbase')
const { startNode, waitForHttp } = require('../../tools/bench')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { until } = require('../support/until')
const { ownTables, clusterEnv, claimSharedCluster, restoreMasterRoles } = require('../support/fault-cluster')

jest.setTimeout(6 * 60 * 1000)

const ROOT = path.join(__dirname, '..', '..')
// Tables of its own: created while every RegionServer runs, so spread over all three (the other
// files' kills leave theirs unevenly placed), and split by nobody else.
const ENV = clusterEnv(ownTables('faults_cluster', 100))
const options = hbase.resolveOptions({}, { ...process.env, ...ENV })
const address = (port) => `${options.host}:${port}`
const run = promisify(execFile)

/** Runs an npm script of this checkout with the cluster's env, as a person would. */
async function npm (script, ...args) {
  const { stdout } = await run('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])],
    { cwd: ROOT, env: { ...process.env, ...ENV }, timeout: 240000 })
  return stdout
}

function rssMb (pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)[1]) / 1024
}

let upMs
let upLine // how this file found the cluster, for the report

beforeAll(async () => {
  await claimSharedCluster() // the run's first claim discards what an earlier run left
  const started = Date.now()
  const out = await npm('hbase:up')
  upMs = Date.now() - started
  const startedHere = /hbase: up \(started/.test(out)
  upLine = startedHere ? `up in ${upMs} ms` : `up already (an earlier file of this run started it; hbase:up checked it in ${upMs} ms)`
  console.log(`cluster: ${startedHere ? `npm run hbase:up took ${upMs} ms` : upLine}\n${out}`)
  expect(out).toMatch(/hbase: up \((started|was already running), pid \d+\)/)
  const rolesMs = await restoreMasterRoles(options)
  if (rolesMs !== null) console.log(`cluster: the first master made active again in ${rolesMs} ms`)
})

test("HBase's Java client sees 3 live RegionServers, an active and a backup master, and regions on each", async () => {
  const view = await hbase.inspectCluster(options)
  const rsAddresses = [0, 1, 2].map((i) => address(options.rsPort + i))
  expect(view.live.map((s) => s.server).sort()).toEqual(rsAddresses)
  expect(view.active).toBe(address(options.masterPort))
  expect(view.backups).toEqual([address(options.masterPort + 1)])
  expect(view.inTransition).toBe(0)
  for (const server of view.live) {
    expect(server.tables[options.accessLogTable]).toBeGreaterThanOrEqual(1)
  }
  const regionsOf = (table) => view.live.reduce((n, s) => n + (s.tables[table] || 0), 0)
  expect(regionsOf(options.accessLogTable)).toBe(options.accessLogRegions)
  expect(regionsOf(options.configTable)).toBe(3)
  expect(view.live.filter((s) => s.meta)).toHaveLength(1)

  const memory = (await hbase.status(options)).processes.map((p) => `${p.name} ${rssMb(p.pid).toFixed(0)} MB`)
  console.log(
    `cluster: ${upLine}; RSS ${memory.join(', ')}; access-log regions per server ${view.live
      .map(
        (s) =>
          `${s.server} ${s.tables[options.accessLogTable]}`
      )
      .join(', ')}`
  )
})

test('hbase:status prints one line per JVM: role, pid, port, regions held', async () => {
  const out = await npm('hbase:status')
  const lines = out.split('\n')
  const line = (name) => lines.find((l) => l.trim().startsWith(name + ' '))
  expect(line('zk')).toMatch(new RegExp(`zookeeper\\s+pid \\d+\\s+port ${options.zkPort}`))
  expect(line('master-1')).toMatch(new RegExp(`active master\\s+pid \\d+\\s+port ${options.masterPort}`))
  expect(line('master-2')).toMatch(new RegExp(`backup master\\s+pid \\d+\\s+port ${options.masterPort + 1}`))
  for (const [i, port] of [1, 2, 3].map((n) => [n, options.rsPort + n - 1])) {
    expect(line(`rs-${i}`)).toMatch(new RegExp(`regionserver\\s+pid \\d+\\s+port ${port}; [1-9]\\d* regions`))
  }
})

test('a RegionServer killed by index is noticed in seconds, its regions move, and it restarts', async () => {
  const before = await hbase.inspectCluster(options)
  const victim = before.live.find((s) => s.server === address(options.rsPort + 1))
  const out = await npm('hbase:kill', '--rs', '2')
  const killedAt = Date.now()
  expect(out).toMatch(/killed rs-2 \(pid \d+, SIGKILL\)/)

  // The master learns of the death when ZooKeeper expires the server's session.
  let after = null
  await until('rs-2 declared dead and its regions reassigned', async () => {
    const view = await hbase.inspectCluster(options).catch(() => null)
    after = view
    return Boolean(view && view.live.length === 2 && view.inTransition === 0 &&
      view.live.reduce((n, s) => n + (s.tables[options.accessLogTable] || 0), 0) === options.accessLogRegions)
  }, 60000)
  const recoveredMs = Date.now() - killedAt
  console.log(`cluster: rs-2 (held ${victim.regions} regions${victim.meta ? ', incl. hbase:meta' : ''}) SIGKILLed; ` +
    `dead and every region on the 2 others ${recoveredMs} ms later (session timeout ${options.zkSessionTimeoutMs} ms)`)
  // Seconds, not HBase's default 90 s session timeout: the bound is the session timeout plus the
  // crash procedure and one inspection JVM.
  expect(recoveredMs).toBeLessThan(options.zkSessionTimeoutMs + 25000)
  expect(after.live.map((s) => s.server)).not.toContain(address(options.rsPort + 1))

  const restarted = await npm('hbase:restart', '--rs', '2')
  expect(restarted).toMatch(/rs-2 started pid \d+/)
  await until('rs-2 back among the live servers', async () => {
    const view = await hbase.inspectCluster(options).catch(() => null)
    return Boolean(view && view.live.length === 3)
  }, 60000)
})

test('`npm start` with BEACON_HBASE_REGIONSERVERS=3 serves from the cluster', async () => {
  const [port, adminPort] = await freePorts(2)
  const server = startNode(path.join(ROOT, 'server.js'), [], {
    name: 'beacon',
    env: {
      ...ENV,
      BEACON_HBASE_BOOTSTRAP: '', // the embedded default: tools/dev-hbase with the env above
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '1',
      BEACON_STATE_DIR: path.join(options.stateDir, 'cluster-app'),
      BEACON_LOG_LEVEL: 'warn'
    }
  })
  try {
    await waitForHttp(`http://127.0.0.1:${port}/api/sample1.js?id=1`, { child: server, timeoutMs: 120000 })
    // Ids 1, 5 and 9 live in the config table's three regions, one per RegionServer at creation.
    for (const id of ['1', '5', '9']) {
      const res = await request(`http://127.0.0.1:${port}/api/sample2.js?id=${id}&callback=cb`)
      expect(res.status).toBe(200)
      expect(res.body).toContain(`"id":"${id}"`)
      expect(res.body).toContain('"default":false')
    }
  } finally {
    await server.stop(30000)
  }
})

test('hbase:down stops every JVM of the cluster', async () => {
  const pids = (await hbase.status(options)).processes.map((p) => p.pid)
  expect(pids.every((pid) => pid > 0)).toBe(true)
  const out = await npm('hbase:down')
  expect(out).toMatch(/stopped pids/)
  // isAlive() counts a zombie (exited, not yet reaped by whoever inherited it) as gone.
  expect(pids.filter(isAlive)).toEqual([])
})
