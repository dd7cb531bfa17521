'use strict'

// The multi-RegionServer HBase of `BEACON_HBASE_REGIONSERVERS=3 BEACON_HBASE_MASTERS=2 npm run hbase:up`,
// started the way a user starts it (the npm scripts and their env), on a state dir and ports of its
// own so it runs beside the shared test HBase:
// - HBase's own Java client, pointed at its ZooKeeper, sees 3 live RegionServers, an active and a
//   backup master, and the beacon tables' regions on every RegionServer;
// - `hbase:status` prints one line per JVM with pid, port and regions held;
// - `hbase:kill -- --rs 2` is noticed within the ZooKeeper session timeout (seconds, not 90 s), its
//   regions are reassigned, and `hbase:restart -- --rs 2` brings it back;
// - `npm start` with the same env serves from the cluster it finds (or starts);
// - `hbase:down` stops every JVM.

const path = require('node:path')
const fs = require('node:fs')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const hbase = require('../../infra/hbase')
const { isAlive } = require('../../infra/hbase/server-process')
const { startNode, waitForHttp } = require('../../bench/lib/processes')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { until } = require('../support/until')

jest.setTimeout(6 * 60 * 1000)

const ROOT = path.join(__dirname, '..', '..')
const ENV = {
  BEACON_HBASE_REGIONSERVERS: '3',
  BEACON_HBASE_MASTERS: '2',
  BEACON_HBASE_STATE_DIR: path.join(ROOT, '.state', 'hbase-cluster'),
  BEACON_HBASE_ZK_PORT: '2321',
  BEACON_HBASE_MASTER_PORT: '16500',
  BEACON_HBASE_RS_PORT: '16520',
  BEACON_HBASE_MASTER_INFO_PORT: '-1',
  BEACON_HBASE_RS_INFO_PORT: '-1',
  BEACON_SEED_COUNT: '100'
}
const options = hbase.resolveOptions({}, { ...process.env, ...ENV })
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

beforeAll(async () => {
  await hbase.wipe(options, { crash: true })
  const started = Date.now()
  const out = await npm('hbase:up')
  upMs = Date.now() - started
  console.log(`cluster: npm run hbase:up took ${upMs} ms\n${out}`)
})

afterAll(async () => {
  await hbase.wipe(options, { crash: true })
})

test("HBase's Java client sees 3 live RegionServers, an active and a backup master, and regions on each", async () => {
  const view = await hbase.inspectCluster(options)
  const rsAddresses = [16520, 16521, 16522].map((port) => `127.0.0.1:${port}`)
  expect(view.live.map((s) => s.server).sort()).toEqual(rsAddresses)
  expect(view.active).toBe('127.0.0.1:16500')
  expect(view.backups).toEqual(['127.0.0.1:16501'])
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
    `cluster: up in ${upMs} ms; RSS ${memory.join(', ')}; access-log regions per server ${view.live
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
  expect(line('zk')).toMatch(/zookeeper\s+pid \d+\s+port 2321/)
  expect(line('master-1')).toMatch(/active master\s+pid \d+\s+port 16500/)
  expect(line('master-2')).toMatch(/backup master\s+pid \d+\s+port 16501/)
  for (const [i, port] of [[1, 16520], [2, 16521], [3, 16522]]) {
    expect(line(`rs-${i}`)).toMatch(new RegExp(`regionserver\\s+pid \\d+\\s+port ${port}; [1-9]\\d* regions`))
  }
})

test('a RegionServer killed by index is noticed in seconds, its regions move, and it restarts', async () => {
  const before = await hbase.inspectCluster(options)
  const victim = before.live.find((s) => s.server === '127.0.0.1:16521')
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
  expect(after.live.map((s) => s.server)).not.toContain('127.0.0.1:16521')

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
      BEACON_HBASE_BOOTSTRAP: '', // the embedded default: infra/hbase with the env above
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '1',
      BEACON_STATE_DIR: path.join(options.stateDir, 'app'),
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
