'use strict'

// One shutdown budget (api/shutdown-budget.js), end to end on the real `npm start` process
// (server.js: cluster primary + 2 workers) with settings.shutdownTimeoutMs = 6 s:
// - SIGTERM while HBase is down (SIGKILLed) and requests are in flight;
// - the same, while slow clients (partial request headers, headers timeout longer than the
//   budget) hold connections open so the HTTP drain runs to its deadline and is forced;
// - SIGTERM while HBase is stuck (SIGSTOP): the sink's batches hang in flight, and its close
//   must journal them within its share of the budget instead of waiting for their timeouts.
// Every way the primary exits by itself before shutdownTimeoutMs + 2 s (when it would SIGKILL a
// worker), never logs "worker did not stop in time", and every sample5 request the clients saw
// answered is in HBase once HBase is back and a new server on the same state dir has claimed
// and replayed the stopped workers' journals — exactly: row keys are unique per entry, so a
// lost entry or a duplicate shows. sample4's file log is checked the same way.
// HBase is not answering at the first stop, so entries are deliberately left on disk: the loss
// audit lists them (journal files only, their lines = what the restart claims) and the primary
// says so with exit status 75; the restarted server, stopped with HBase up, leaves nothing.
// Runs on its own HBase instance so the shared one is never disturbed.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { startNode, waitForHttp } = require('../../tools/bench')
const { killAfterMs, DRAIN_SHARE } = require('../../api/shutdown-budget')
const { accessLogSplitKeys } = require('../../logging/access-log-layout')
const { countLines } = require('../../logging/count-lines')
const { request } = require('../support/beacon')
const { startLoops, stopRunningLoads } = require('../support/load')
const { until } = require('../support/until')
const { leftOnDisk, totals, expectIdle, expectNothingLeft, recordAudit } = require('../support/loss-audit')

jest.setTimeout(6 * 60 * 1000)

const options = hbase.resolveOptions({
  stateDir: path.join(__dirname, '..', '..', '.state', 'hbase-shutdown-budget'),
  zkPort: 2193,
  masterPort: 16340,
  rsPort: 16360,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 100
})
const SERVER = path.join(__dirname, '..', '..', 'server.js')
const BUDGET_MS = 6000
const KILL_AFTER_MS = killAfterMs(BUDGET_MS) // the primary SIGKILLs a worker after this
const DRAIN_MS = BUDGET_MS * DRAIN_SHARE
const IDS = 20 // ids 1..IDS: every worker has all of them cached long before HBase goes down
const SLOW_CLIENTS = 6
const REPLAY_MS = 120000

let admin // client on this file's HBase instance
let bootstrap
let hbaseDown = false
let hbaseStalled = null // pid of the JVM while it is SIGSTOPped
const children = new Set() // every server process started here, killed by pid in afterAll
const sockets = new Set() // slow clients
const tmpDirs = []

beforeAll(async () => {
  await hbase.wipe(options, { crash: true })
  bootstrap = (await hbase.up(options, { log: () => {} })).bootstrap
  admin = createHBaseClient({ bootstrap, rpcTimeout: 1000, operationTimeout: 3000 })
})

afterAll(async () => {
  if (hbaseStalled) process.kill(hbaseStalled, 'SIGCONT')
  for (const s of sockets) s.destroy()
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {}
    }
  }
  if (admin) await admin.close().catch(() => {})
  await hbase.wipe(options, { crash: true })
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true })
})

afterEach(stopRunningLoads)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function ensureHBaseUp () {
  if (hbaseStalled) {
    process.kill(hbaseStalled, 'SIGCONT')
    hbaseStalled = null
    // Stopped for longer than its ZooKeeper sessions, standalone HBase finds them expired when it
    // resumes and aborts (what a real HBase does after a long pause): start it again then. Its WAL
    // reached the page cache, so nothing it acknowledged is lost.
    try {
      await hbase.up(options, { log: () => {} })
    } catch {
      hbaseDown = true
    }
  }
  if (!hbaseDown) return
  await hbase.up(options, { log: () => {} })
  hbaseDown = false
}

async function killHBase () {
  hbaseDown = true
  await hbase.kill(options)
}

/** HBase stuck rather than gone: calls hang until their timeouts, batches stay in flight. */
async function stallHBase () {
  const { pid } = await hbase.status(options)
  hbaseStalled = pid
  process.kill(pid, 'SIGSTOP')
}

/**
 * One case's world: its own state dir, settings file and access-log table (pre-split).
 * @param {string} tag
 * @param {object} settings the JSON settings file's content
 */
async function prepare (tag, settings) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `beacon-budget-${tag}-`))
  tmpDirs.push(dir)
  const stateDir = path.join(dir, 'state')
  const settingsFile = path.join(dir, 'settings.json')
  fs.writeFileSync(settingsFile, JSON.stringify(settings))
  const table = `budget_${tag}_${Date.now().toString(36)}`
  await admin.admin.createTable(table, { families: ['l'], splits: accessLogSplitKeys(16, 4) })
  return { dir, stateDir, settingsFile, table }
}

/**
 * The real entry point on this file's HBase; every output line kept (the primary's and the
 * workers' JSON logs share its stdout). Resolves once both workers listen.
 */
async function startServer ({ port, stateDir, settingsFile, table }) {
  const lines = []
  const server = startNode(SERVER, [], {
    name: 'beacon',
    log: (line) => lines.push(line.replace(/^\[beacon\] /, '')),
    env: {
      PORT: String(port),
      ADMIN_PORT: String(port + 1),
      HOST: '127.0.0.1',
      BEACON_WORKERS: '2',
      BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
      BEACON_STATE_DIR: stateDir,
      BEACON_CONFIG_FILE: settingsFile,
      BEACON_ACCESS_LOG_TABLE: table,
      BEACON_ACCESS_LOG_DURABLE: '', // the default (non-durable) mode, whatever the caller's env
      BEACON_LOG_LEVEL: 'info'
    }
  })
  children.add(server)
  server.lines = lines
  server.exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })))
  server.logs = () => lines.map((l) => { try { return JSON.parse(l) } catch { return null } }).filter(Boolean)
  await waitForHttp(`http://127.0.0.1:${port}/api/sample1.js?id=1`, { child: server, timeoutMs: 60000 })
  await until('both workers listening', () => server.logs().some((l) => l.msg === 'beacon ready'), 30000)
  return server
}

/** SIGTERM the primary; resolves with its exit and how long after the signal it came. */
async function terminate (server) {
  const termAt = Date.now()
  server.kill('SIGTERM')
  let timer
  const bound = new Promise((resolve) => { timer = setTimeout(resolve, KILL_AFTER_MS + 20000, null) })
  const exit = await Promise.race([server.exited, bound])
  clearTimeout(timer)
  if (!exit) {
    throw new Error(`the primary did not exit within ${KILL_AFTER_MS + 20000} ` +
      `ms of SIGTERM; output:\n${server.lines.slice(-30).join('\n')}`)
  }
  return { ...exit, termAt, stopMs: exit.at - termAt }
}

/** One sample from the cluster-wide /metrics of the admin port. */
async function scrape (port, name, labels) {
  const res = await request(`http://127.0.0.1:${port + 1}/metrics`)
  const want = `${name}{${labels}}`
  const line = res.body.split('\n').find((l) => l.startsWith(want + ' '))
  return line ? Number(line.slice(want.length + 1)) : NaN
}

/**
 * Closed-loop load on sample5 (HBase log) and sample4 (file log), paced to at most 800 requests
 * a second (CPU left for the other test lane); every answer counted. Stops by itself after 2 min.
 */
function startLoad (port) {
  const answers = { sample4: { ok: 0, other: 0, errors: 0 }, sample5: { ok: 0, other: 0, errors: 0 }, otherBodies: [] }
  let n = 0
  const load = startLoops({
    loops: 8,
    paceMs: 10,
    maxMs: 120000,
    async step (i, agent) {
      const endpoint = i % 2 ? 'sample5' : 'sample4'
      const id = 1 + (n++ % IDS)
      try {
        const res = await request(`http://127.0.0.1:${port}/api/${endpoint}.js?id=${id}&callback=cb`, { agent })
        answers[endpoint][res.status === 200 ? 'ok' : 'other']++
        if (res.status !== 200 && answers.otherBodies.length < 5) {
          answers.otherBodies.push(`${endpoint} ${res.status} ${res.body.slice(0, 200)}`)
        }
      } catch {
        answers[endpoint].errors++
        await sleep(20)
      }
    }
  })
  return { answers, stop: load.stop }
}

/**
 * A client that holds its connection open: one whole keep-alive request first (so a worker
 * surely owns the connection), then a request whose headers never end.
 */
function slowClient (port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    sockets.add(socket)
    const state = { socket, closedAt: null, received: '' }
    socket.setEncoding('utf8')
    socket.on('error', () => {})
    socket.on('close', () => { state.closedAt = Date.now() })
    socket.once('connect', () => socket.write('GET /api/sample1.js?id=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'))
    socket.on('data', (chunk) => {
      state.received += chunk
      const head = state.received.indexOf('\r\n\r\n')
      const length = /content-length: *(\d+)/i.exec(state.received)
      // The first answer is complete: start the slow request.
      if (!state.held && head !== -1 && length && state.received.length >= head + 4 + Number(length[1])) {
        state.held = true
        socket.write('GET /api/sample1.js?id=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
        resolve(state)
      }
    })
    socket.once('close', () => { if (!state.held) reject(new Error('slow client: connection closed before its first answer')) })
  })
}

/**
 * The scenario of both cases: load, HBase SIGKILLed, entries spill, (slow clients,) SIGTERM
 * under load; then HBase back, a new server on the same state dir replays the journals.
 */
async function runCase ({ tag, port, slowClients = 0, http, fault = 'kill' }) {
  await ensureHBaseUp()
  const world = await prepare(tag, {
    shutdownTimeoutMs: BUDGET_MS,
    hbase: { rpcTimeoutMs: 500, operationTimeoutMs: 1500 },
    ...(http ? { http } : {})
  })
  const server = await startServer({ port, ...world })
  let restarted = null
  try {
    // Warm up while HBase serves: every id in both workers' caches. A new connection per
    // request, so the primary hands them to the workers in turn (keep-alive connections may all
    // land on one worker, and a worker with nothing cached rightly answers 503 once HBase is
    // down).
    const warmed = { sample4: 0, sample5: 0 }
    for (let id = 1; id <= IDS; id++) {
      for (const endpoint of ['sample4', 'sample5']) {
        for (let i = 0; i < 4; i++) {
          expect((await request(`http://127.0.0.1:${port}/api/${endpoint}.js?id=${id}&callback=cb`)).status).toBe(200)
          warmed[endpoint]++ // answered, so logged: counted with the load's answers
        }
      }
    }
    const load = startLoad(port)
    load.answers.sample4.ok += warmed.sample4
    load.answers.sample5.ok += warmed.sample5
    await until('sample5 warmed up', () => load.answers.sample5.ok >= 400, 60000, 100)
    expect(load.answers.sample5.other + load.answers.sample4.other).toBe(0)

    if (fault === 'stall') await stallHBase()
    else await killHBase()
    const killedAt = Date.now()
    // Entries spill to the journal once a write fails; let the load run on a little longer.
    await until(
      'entries spilled to the journal',
      async () => (await scrape(port, 'beacon_access_log_entries_total', 'sink="hbase",state="spilled"')) > 0,
      30000
    )
    const okAtSpill = load.answers.sample5.ok
    await until('load served while HBase is down', () => load.answers.sample5.ok > okAtSpill + 200, 30000, 100)
    await sleep(1000)

    const slow = []
    for (let i = 0; i < slowClients; i++) slow.push(await slowClient(port))

    const exit = await terminate(server)
    await load.stop()
    const { sample4, sample5 } = load.answers
    const logs = server.logs()
    const shutdownAt = logs.find((l) => l.msg === 'shutting down: draining workers')
    const stopped = logs.filter((l) => l.msg === 'worker stopped')
    const workerStopMs = stopped.map((l) => l.time - (shutdownAt ? shutdownAt.time : NaN))
    // What the stop left on disk, HBase being down: whole journal files, no write-ahead log
    // (default mode) and nothing damaged.
    const leftAtStop = await leftOnDisk(world.stateDir)
    const spilledLines = totals(leftAtStop).lines
    recordAudit({ note: `the stop, HBase down; exit ${exit.code}`, answered: sample5.ok, rows: null, leftOnDisk: leftAtStop })
    const slowHeldMs = slow.map((s) => (s.closedAt ? s.closedAt - exit.termAt : null))

    // The process stopped by itself, in time, and no worker was killed. Its status says whether
    // it left entries on disk: 75 (EX_TEMPFAIL) then, as it must here with HBase not answering.
    // (Was 0 whatever the stop left: the audit's premise is that a 0 means nothing waits.)
    expect(exit.signal).toBeNull()
    expect(exit.code).toBe(spilledLines > 0 ? 75 : 0)
    expect(exit.stopMs).toBeLessThan(KILL_AFTER_MS)
    expect(server.lines.join('\n')).not.toContain('did not stop in time')
    expect(stopped.map((l) => l.reason).sort()).toEqual(['primary', 'primary'])
    if (slowClients) {
      // The slow clients held the drain to its deadline, where it was forced.
      expect(stopped.some((l) => l.forced === true)).toBe(true)
      expect(exit.stopMs).toBeGreaterThanOrEqual(DRAIN_MS)
      for (const ms of slowHeldMs) expect(ms).toBeGreaterThanOrEqual(DRAIN_MS) // held, then cut
    }
    expect(load.answers.otherBodies).toEqual([]) // every answer a 200, outage included
    expect(sample5.other + sample4.other).toBe(0)
    expect(spilledLines).toBeGreaterThan(0)
    expect(leftAtStop.filter((f) => f.kind !== 'journal' || f.lines === null)).toEqual([])

    // HBase back; a new server on the same state dir claims the journals and replays them.
    const upStarted = Date.now()
    await ensureHBaseUp()
    const hbaseUpMs = Date.now() - upStarted
    restarted = await startServer({ port, ...world })
    let rows = NaN
    await until('every answered sample5 request in HBase', async () => {
      rows = await admin.count(world.table)
      return rows >= sample5.ok && await scrape(port, 'beacon_access_log_journal_pending', 'sink="hbase"') === 0
    }, REPLAY_MS, 500)
    const claimed = await scrape(port, 'beacon_access_log_entries_total', 'sink="hbase",state="claimed"')
    const replayed = await scrape(port, 'beacon_access_log_entries_total', 'sink="hbase",state="replayed"')
    await expectIdle(port + 1)
    const restartExit = await terminate(restarted)
    // HBase up at this stop: nothing may be left before the rows are counted.
    const left = await expectNothingLeft(world.stateDir, { answered: sample5.ok })
    rows = await admin.count(world.table)
    recordAudit({ note: 'the restarted server\'s stop, HBase up', answered: sample5.ok, rows, leftOnDisk: left })
    const lines = countLines(path.join(world.stateDir, 'logs'))
    console.log(`shutdown-budget ${tag}: SIGTERM to primary exit ${exit.stopMs} ms (kill would be at ${KILL_AFTER_MS}); workers ` +
      `stopped ${workerStopMs.join('/')} ms after the primary's shutdown line (forced drain: ${stopped.map((l) => l.forced).join('/')})` +
      `${slowClients
        ? `; slow clients cut ${slowHeldMs.join('/')} ms after SIGTERM`
        : ''}; HBase down ${exit.termAt - killedAt} ms before SIGTERM` +
      `; sample5 ${sample5.ok} x 200 -> ${rows} rows; sample4 ${sample4.ok} x 200 ` +
      `-> ${lines} file lines; connection errors ${sample4.errors + sample5.errors}` +
      `; journal entries left at exit ${spilledLines}, claimed ${claimed}, replayed ${replayed} by the restarted server; HBase restart ` +
        `${hbaseUpMs} ms; restarted server stopped in ${restartExit.stopMs} ms`)

    expect(rows).toBe(sample5.ok) // no loss, no duplicate
    expect(lines).toBe(sample4.ok)
    expect(claimed).toBe(spilledLines)
    expect(replayed).toBe(claimed)
    expect(restartExit.code).toBe(0)
    expect(restarted.lines.join('\n')).not.toContain('did not stop in time')
  } finally {
    for (const s of sockets) s.destroy()
    sockets.clear()
    for (const child of [server, restarted]) {
      if (child && child.exitCode === null && child.signalCode === null) await child.stop(KILL_AFTER_MS + 5000)
    }
  }
}

test('SIGTERM while HBase is down and requests are in flight: exits by itself within the budget, every answered request ends up in ' +
  'HBase', async () => {
  await runCase({ tag: 'down', port: 4630 })
})

test('SIGTERM while slow clients hold connections until the drain deadline, HBase down: the drain is forced, exits within the budget, ' +
  'nothing answered is lost', async () => {
  // Headers/request timeouts far beyond the budget: only the drain deadline can cut the slow clients.
  await runCase({ tag: 'slow', port: 4640, slowClients: SLOW_CLIENTS, http: { headersTimeoutMs: 60000, requestTimeoutMs: 60000 } })
})

test('SIGTERM while HBase is stuck (SIGSTOP) and batches hang in flight: the sink journals them within its share of the budget, nothing ' +
  'answered is lost', async () => {
  await runCase({ tag: 'stuck', port: 4650, fault: 'stall' })
})
