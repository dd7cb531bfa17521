'use strict'

const fs = require('node:fs')
const os = require('node:os')
const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { testClient, uniqueTable } = require('../support/hbase')
const { createHBaseClient } = require('@beacon/hbase-client')
const { accessLogSplitKeys, ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } = require('../../logging/access-log-layout')
const { createHBaseSink } = require('../../logging/hbase-sink')
const { accessEntry } = require('../../logging/access-entry')
const { journalFiles } = require('../../logging/hbase-sink/journal')

let client // on the real test HBase
let deadClient // on a local port nobody listens on
const tables = []
const dirs = []
const sinks = []

async function closedPort () {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function logTable (prefix) {
  const table = uniqueTable(prefix)
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(16, 4) })
  tables.push(table)
  return table
}

function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-hbase-sink-'))
  dirs.push(dir)
  return dir
}

function sink (options) {
  const s = createHBaseSink({ flushIntervalMs: 20, ...options })
  sinks.push(s)
  return s
}

function entry (i) {
  return accessEntry({
    ts: Date.now(),
    endpoint: 'sample5',
    id: String(i),
    status: 200,
    ms: 0.25,
    ip: '127.0.0.1',
    ua: `ua-${i}`,
    ref: null
  })
}

/** accepted (+ adopted orphans) == written + pending + journalBuffered + journalPending + shed (+ corrupt) */
function expectBalanced (stats) {
  expect(stats.accepted + stats.claimed).toBe(
    stats.written + stats.pending + stats.journalBuffered + stats.journalPending + stats.shed + stats.corrupt
  )
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))

async function until (predicate, timeoutMs = 20000) {
  const started = Date.now()
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time')
    await tick(20)
  }
}

beforeAll(async () => {
  client = testClient()
  deadClient = createHBaseClient({
    bootstrap: [`127.0.0.1:${await closedPort()}`],
    rpcTimeout: 200,
    operationTimeout: 400,
    connectTimeout: 200
  })
})

afterAll(async () => {
  for (const s of sinks) await s.close()
  for (const table of tables) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  await deadClient.close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('20,000 writes → flush → 20,000 rows that parse back; the books balance', async () => {
  const table = await logTable('hsink')
  const journalDir = tempDir()
  const s = sink({ client, table, journalDir, writerId: 'w1', batchSize: 500 })
  const n = 20000
  for (let i = 0; i < n; i++) s.write(entry(i))
  expect(s.stats().batches).toBe(0) // write() never calls HBase on the caller's stack
  await s.flush()
  expect(await client.count(table)).toBe(n)
  const stats = s.stats()
  expect(stats).toMatchObject({
    accepted: n,
    written: n,
    pending: 0,
    journalPending: 0,
    spilled: 0,
    shed: 0,
    failed: 0,
    queueDepth: 0,
    oldestPendingMs: 0,
    lastError: null
  })
  expect(stats.batches).toBeGreaterThanOrEqual(n / 500)
  expectBalanced(stats)

  const ids = new Set()
  const buckets = new Map()
  const bad = []
  for await (const row of client.scan(table)) {
    const key = row.row.toString()
    buckets.set(key.slice(0, 2), (buckets.get(key.slice(0, 2)) || 0) + 1)
    const cell = row.cells[0]
    const e = JSON.parse(cell.value.toString())
    const ok = /^[0-9a-f]{2}\d{13}w1-\d+$/.test(key) && row.cells.length === 1 &&
      cell.family === ACCESS_LOG_FAMILY && cell.qualifier === ACCESS_LOG_QUALIFIER &&
      key.slice(2, 15) === String(e.ts).padStart(13, '0') &&
      e.endpoint === 'sample5' && e.status === 200 && e.ua === `ua-${e.id}`
    if (!ok) bad.push({ key, e })
    ids.add(e.id)
  }
  expect(bad).toEqual([])
  expect(ids.size).toBe(n)
  // The rotating salt fills the 16 buckets evenly.
  expect([...buckets.values()]).toEqual(new Array(16).fill(n / 16))
  await s.close()
  expect(journalFiles(journalDir)).toHaveLength(0)
})

test('HBase unreachable: everything spills to the journal; a restarted writer on the real HBase replays it exactly once', async () => {
  const table = await logTable('hsink_outage')
  const journalDir = tempDir()
  const down = sink({ client: deadClient, table, journalDir, writerId: 'crashy' })
  const n = 3000
  for (let i = 0; i < n; i++) {
    down.write(entry(i))
    if (i % 500 === 499) await tick(5)
  }
  await down.flush()
  let stats = down.stats()
  expect(stats).toMatchObject({ accepted: n, written: 0, pending: 0, spilled: n, journalPending: n, state: 'down' })
  expect(['HBASE_TIMEOUT', 'HBASE_CONNECTION', 'HBASE_META_UNAVAILABLE']).toContain(stats.lastError)
  expectBalanced(stats)
  await down.close()
  expectBalanced(down.stats())
  expect(journalFiles(journalDir).length).toBeGreaterThan(0)

  const heir = sink({ client, table, journalDir, writerId: 'heir' })
  expect(await heir.replay()).toBe(true)
  stats = heir.stats()
  expect(stats).toMatchObject({ accepted: 0, claimed: n, written: n, replayed: n, journalPending: 0, corrupt: 0 })
  expectBalanced(stats)
  expect(await client.count(table)).toBe(n)
  expect(journalFiles(journalDir)).toHaveLength(0)
  // A second pass finds nothing more to write: no row is written twice.
  expect(await heir.replay()).toBe(true)
  expect(heir.stats().written).toBe(n)
  expect(await client.count(table)).toBe(n)
})

/**
 * Runs a child process that writes n entries to a sink, reports its stats (after a flush with
 * `flushFirst`, else at once: entries still in memory), and is then SIGKILLed.
 */
async function killedWriter ({
  table, journalDir, n, clientOptions = { bootstrap: client.options.bootstrap }, sinkOptions = {}, flushFirst = false
}) {
  const script = `
    const { createHBaseClient } = require(${JSON.stringify(require.resolve('@beacon/hbase-client'))})
    const { createHBaseSink } = require(${JSON.stringify(path.resolve(__dirname, '../../logging/hbase-sink'))})
    const client = createHBaseClient(${JSON.stringify(clientOptions)})
    const sink = createHBaseSink({
      client,
      table: ${JSON.stringify(table)},
      journalDir: ${JSON.stringify(journalDir)},
      writerId: 'victim',
      ...${JSON.stringify(sinkOptions)}
    })
    for (let i = 0; i < ${n}; i++) {
      sink.write({ ts: Date.now(), endpoint: 'sample5', id: String(i), status: 200, ms: 1, ip: null, ua: null, ref: null })
    }
    const report = () => { process.stdout.write(JSON.stringify(sink.stats()) + '\\n'); setInterval(() => {}, 1000) }
    ${flushFirst ? 'sink.flush().then(report)' : 'report()'}
  `
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  const stats = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(JSON.parse(out))
    })
    child.on('exit', (code) => reject(new Error(`child exited early (${code})`)))
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
  return { stats, pid: child.pid }
}

test('a worker killed with SIGKILL leaves its journal; the next writer claims and replays it', async () => {
  const table = await logTable('hsink_crash')
  const journalDir = tempDir()
  const n = 1500
  // The child spills to the journal (its HBase is unreachable), makes it durable, then is killed.
  const { stats, pid } = await killedWriter({
    table,
    journalDir,
    n,
    clientOptions: { bootstrap: deadClient.options.bootstrap, rpcTimeout: 200, operationTimeout: 400, connectTimeout: 200 },
    sinkOptions: { flushIntervalMs: 10, durability: 'memory' }, // the journal alone
    flushFirst: true
  })
  expect(stats).toMatchObject({ accepted: n, journalPending: n })
  const left = journalFiles(journalDir).map((f) => path.basename(f))
  expect(left.length).toBeGreaterThan(0)
  for (const name of left) expect(name).toMatch(new RegExp(`^j-${pid}-victim-\\d+\\.ndjson$`))

  const heir = sink({ client, table, journalDir, writerId: 'heir2' })
  expect(await heir.replay()).toBe(true)
  expect(heir.stats()).toMatchObject({ claimed: n, written: n, journalPending: 0 })
  expect(await client.count(table)).toBe(n)
  expect(journalFiles(journalDir)).toHaveLength(0)
})

test('durability process (the default): entries a killed writer held in memory are replayed from its write-ahead log', async () => {
  const table = await logTable('hsink_wal')
  const journalDir = tempDir()
  const n = 3000
  const { stats, pid } = await killedWriter({
    table,
    journalDir,
    n,
    sinkOptions: { flushIntervalMs: 600000, batchSize: 100000 }
  })
  expect(stats).toMatchObject({
    accepted: n, written: 0, pending: n, durable: true, durability: 'process', walAppended: n, walPending: n, walFailures: 0
  })
  const left = journalFiles(journalDir).map((f) => path.basename(f))
  expect(left.length).toBeGreaterThan(0)
  for (const name of left) expect(name).toMatch(new RegExp(`^j-${pid}-victim-wal-\\d+\\.ndjson$`))

  const heir = sink({ client, table, journalDir, writerId: 'heir_wal' })
  expect(await heir.replay()).toBe(true)
  expect(heir.stats()).toMatchObject({ claimed: n, claimedFromWal: n, written: n, journalPending: 0 })
  expect(await client.count(table)).toBe(n)
  expect(journalFiles(journalDir)).toHaveLength(0)
})

test('durability memory: the same kill loses what was in memory, and nothing is there to claim', async () => {
  const table = await logTable('hsink_nowal')
  const journalDir = tempDir()
  const n = 3000
  const sinkOptions = { flushIntervalMs: 600000, batchSize: 100000, durability: 'memory' }
  const { stats } = await killedWriter({ table, journalDir, n, sinkOptions })
  expect(stats).toMatchObject({ accepted: n, written: 0, pending: n, durable: false })
  expect(stats.walAppended).toBeUndefined()
  expect(journalFiles(journalDir)).toHaveLength(0)
  const heir = sink({ client, table, journalDir, writerId: 'heir_nowal' })
  expect(await heir.replay()).toBe(true)
  expect(heir.stats()).toMatchObject({ claimed: 0, written: 0 })
  expect(await client.count(table)).toBe(0)
})

test('durability process: write-ahead log segments go away once their entries are in HBase or the journal', async () => {
  const table = await logTable('hsink_walok')
  const journalDir = tempDir()
  const live = sink({ client, table, journalDir, writerId: 'walok', durable: true, journalFileBytes: 1 << 20 })
  for (let i = 0; i < 2500; i++) live.write(entry(i))
  await live.flush()
  expect(live.stats()).toMatchObject({ written: 2500, walAppended: 2500, walPending: 0 })
  await live.close()
  expect(journalFiles(journalDir)).toHaveLength(0) // nothing left to replay: all in HBase
  expect(await client.count(table)).toBe(2500)

  // HBase unreachable: entries are spilled; the WAL lets go of them once the journal has them.
  const down = sink({ client: deadClient, table, journalDir, writerId: 'waldown', durable: true })
  for (let i = 0; i < 700; i++) down.write(entry(10000 + i))
  await down.flush()
  await until(() => down.stats().walPending === 0)
  expect(down.stats()).toMatchObject({ journalPending: 700, written: 0 })
  await down.close()
  const files = journalFiles(journalDir).map((f) => path.basename(f))
  expect(files.length).toBeGreaterThan(0)
  for (const name of files) expect(name).not.toMatch(/-wal-/)
  const heir = sink({ client, table, journalDir, writerId: 'walheir' })
  expect(await heir.replay()).toBe(true)
  expect(heir.stats()).toMatchObject({ claimed: 700, claimedFromWal: 0, written: 700 })
  expect(await client.count(table)).toBe(3200)
})

test('HBase goes away and comes back under the same sink: journal, probe, replay, then live again', async () => {
  const table = await logTable('hsink_flap')
  const journalDir = tempDir()
  let up = false
  // Two real clients behind one switch: the dead one stands for HBase being down.
  const flapping = { multiPut: (...args) => (up ? client : deadClient).multiPut(...args) }
  const s = sink({ client: flapping, table, journalDir, writerId: 'flap', replayBaseMs: 50, replayMaxBackoffMs: 200 })
  for (let i = 0; i < 2000; i++) s.write(entry(i))
  await s.flush()
  expect(s.stats()).toMatchObject({ state: 'down', journalPending: 2000, written: 0 })
  for (let i = 2000; i < 2500; i++) s.write(entry(i)) // straight to the journal while down
  up = true
  await until(() => s.stats().journalPending === 0)
  expect(s.stats()).toMatchObject({ state: 'up', written: 2500, replayed: 2500 })
  for (let i = 2500; i < 3000; i++) s.write(entry(i))
  await s.flush()
  const stats = s.stats()
  expect(stats).toMatchObject({ accepted: 3000, written: 3000, replayed: 2500, spilled: 2500, pending: 0, journalPending: 0 })
  expectBalanced(stats)
  expect(await client.count(table)).toBe(3000)
  await until(() => journalFiles(journalDir).length === 0)
})

test('shed policy: past maxQueue entries are dropped and counted; the rest are kept', async () => {
  const table = await logTable('hsink_shed')
  const journalDir = tempDir()
  const s = sink({
    client: deadClient,
    table,
    journalDir,
    writerId: 'shed',
    overload: 'shed',
    maxQueue: 50,
    batchSize: 20,
    closeTimeoutMs: 1500
  })
  for (let i = 0; i < 500; i++) s.write(entry(i))
  let stats = s.stats()
  expect(stats).toMatchObject({ accepted: 500, shed: 450, pending: 50, queueDepth: 50 })
  expectBalanced(stats)
  await tick(600) // the batches fail; shed mode keeps them queued for retry, not journaled
  stats = s.stats()
  expect(stats).toMatchObject({ shed: 450, pending: 50, spilled: 0 })
  expect(stats.lastError).toMatch(/^HBASE_/)
  expectBalanced(stats)
  await s.close() // HBase still down at the deadline: the 50 go to the journal
  stats = s.stats()
  expect(stats).toMatchObject({ accepted: 500, shed: 450, pending: 0, journalPending: 50, written: 0 })
  expectBalanced(stats)
  s.write(entry(0))
  expect(s.stats().rejectedAfterClose).toBe(1)
})

test('spill policy: past maxQueue entries go to the journal and are replayed', async () => {
  const table = await logTable('hsink_overflow')
  const s = sink({ client, table, journalDir: tempDir(), writerId: 'over', maxQueue: 100, batchSize: 50, flushIntervalMs: 60000 })
  for (let i = 0; i < 1000; i++) s.write(entry(i))
  // Handed to the journal, still in memory until its write (a later tick) is done.
  expect(s.stats()).toMatchObject({ accepted: 1000, pending: 100, spilled: 900, journalBuffered: 900, journalPending: 0 })
  await s.flush()
  expect(s.stats()).toMatchObject({ journalBuffered: 0, journalPending: 900 })
  expect(await s.replay()).toBe(true)
  const stats = s.stats()
  expect(stats).toMatchObject({ written: 1000, replayed: 900, journalPending: 0, pending: 0 })
  expectBalanced(stats)
  expect(await client.count(table)).toBe(1000)
})

test('close with entries still queued writes them all, then refuses more', async () => {
  const table = await logTable('hsink_close')
  const journalDir = tempDir()
  const s = sink({ client, table, journalDir, writerId: 'closer', batchSize: 100000, flushIntervalMs: 60000 })
  for (let i = 0; i < 5000; i++) s.write(entry(i))
  expect(s.stats()).toMatchObject({ pending: 5000, written: 0 })
  const closing = s.close()
  expect(s.close()).toBe(closing)
  s.write(entry(1))
  await closing
  const stats = s.stats()
  expect(stats).toMatchObject({ accepted: 5000, written: 5000, pending: 0, journalPending: 0, rejectedAfterClose: 1 })
  expectBalanced(stats)
  expect(await client.count(table)).toBe(5000)
  expect(journalFiles(journalDir)).toHaveLength(0)
})

test('close keeps to its budget when HBase hangs: what could not be written is journaled, nothing lost', async () => {
  // A server that accepts connections and never answers: every write hangs until its timeout.
  const sockets = []
  const blackHole = net.createServer((socket) => sockets.push(socket))
  await new Promise((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
  const hung = createHBaseClient({
    bootstrap: [`127.0.0.1:${blackHole.address().port}`],
    rpcTimeout: 10000,
    operationTimeout: 20000,
    connectTimeout: 1000
  })
  const journalDir = tempDir()
  const s = sink({ client: hung, table: 'never_written', journalDir, writerId: 'budget', batchSize: 50 })
  try {
    for (let i = 0; i < 400; i++) s.write(entry(i))
    await tick(100) // batches are in flight, the rest queued
    const started = Date.now()
    await s.close({ timeoutMs: 1000 })
    const tookMs = Date.now() - started
    expect(tookMs).toBeLessThan(1300)
    const stats = s.stats()
    expect(stats).toMatchObject({ accepted: 400, written: 0, pending: 0, journalPending: 400 })
    expectBalanced(stats)
    const lines = journalFiles(journalDir).reduce((n, f) => n + fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length, 0)
    expect(lines).toBe(400)
  } finally {
    hung.destroy()
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => blackHole.close(resolve))
  }
})

test('a missing table is not retried: entries are journaled as failed, and replayed once it exists', async () => {
  const table = uniqueTable('hsink_missing')
  const s = sink({ client, table, journalDir: tempDir(), writerId: 'miss', replayBaseMs: 50, replayMaxBackoffMs: 100 })
  for (let i = 0; i < 300; i++) s.write(entry(i))
  await s.flush()
  let stats = s.stats()
  expect(stats).toMatchObject({ failed: 300, spilled: 300, journalPending: 300, written: 0, lastError: 'HBASE_TABLE_NOT_FOUND' })
  expectBalanced(stats)
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY] })
  tables.push(table)
  await until(() => s.stats().journalPending === 0)
  stats = s.stats()
  expect(stats).toMatchObject({ written: 300, replayed: 300 })
  expectBalanced(stats)
  expect(await client.count(table)).toBe(300)
})

test('a missing column family is not retried either', async () => {
  const table = uniqueTable('hsink_family')
  await client.admin.createTable(table, { families: ['x'] })
  tables.push(table)
  const s = sink({ client, table, journalDir: tempDir(), writerId: 'fam' })
  for (let i = 0; i < 10; i++) s.write(entry(i))
  await s.flush()
  expect(s.stats()).toMatchObject({ failed: 10, journalPending: 10, lastError: 'HBASE_NO_SUCH_FAMILY' })
  expectBalanced(s.stats())
})

describe('with an injected clock', () => {
  function fakeClock () {
    return { t: 1_800_000_000_000, now () { return this.t } }
  }

  test('a partial batch waits flushIntervalMs of clock time after its oldest entry', async () => {
    const table = await logTable('hsink_clock')
    const clock = fakeClock()
    const s = sink({ client, table, journalDir: tempDir(), writerId: 'clk', batchSize: 1000, flushIntervalMs: 30, clock })
    for (let i = 0; i < 5; i++) s.write(entry(i))
    await tick(150) // several timer rounds: the clock has not moved, so nothing is due
    expect(s.stats()).toMatchObject({ batches: 0, pending: 5, oldestPendingMs: 0 })
    clock.t += 29
    await tick(100)
    expect(s.stats()).toMatchObject({ batches: 0, oldestPendingMs: 29 })
    clock.t += 1
    await until(() => s.stats().written === 5, 2000)
    expect(s.stats().batches).toBe(1)
    expect(await client.count(table)).toBe(5)
  })

  test('a full batch goes at once, whatever the clock says', async () => {
    const table = await logTable('hsink_full')
    const s = sink({ client, table, journalDir: tempDir(), writerId: 'full', batchSize: 100, flushIntervalMs: 60000, clock: fakeClock() })
    for (let i = 0; i < 250; i++) s.write(entry(i))
    await until(() => s.stats().written === 200, 5000)
    expect(s.stats().pending).toBe(50)
    await s.flush()
    expect(s.stats().written).toBe(250)
  })

  test('retryable failures are retried until retryMaxMs of clock time, then spilled', async () => {
    const clock = fakeClock()
    // shed mode: a failing batch stays in memory for retries instead of switching to the journal
    const s = sink({
      client: deadClient,
      table: 'never_written',
      journalDir: tempDir(),
      writerId: 'budget',
      overload: 'shed',
      retryMaxMs: 60000,
      retryBaseMs: 10,
      retryMaxBackoffMs: 20,
      clock
    })
    for (let i = 0; i < 10; i++) s.write(entry(i))
    clock.t += 20 // the partial batch is due
    await until(() => s.stats().lastError !== null, 5000)
    expect(s.stats()).toMatchObject({ batches: 1, pending: 10, spilled: 0 })
    await tick(100) // the retry is not due on the clock yet
    expect(s.stats().batches).toBe(1)
    clock.t += 100
    await until(() => s.stats().batches >= 2, 5000) // retried, failed again: still within budget
    await tick(50)
    expect(s.stats()).toMatchObject({ pending: 10, spilled: 0 })
    clock.t += 60000
    // Spilled, then on disk: the journal writes its buffer a moment later (journalBuffered till then).
    await until(() => s.stats().spilled === 10 && s.stats().journalBuffered === 0, 5000)
    const stats = s.stats()
    expect(stats).toMatchObject({ pending: 0, journalPending: 10, failed: 0 })
    expectBalanced(stats)
  })
})

test('invalid options are rejected by name', () => {
  expect(() => createHBaseSink({ client, table: 't', journalDir: tempDir(), writerId: 'x', overload: 'drop' })).toThrow(/overload/)
  expect(() => createHBaseSink({ client, table: 't', journalDir: tempDir(), writerId: 'bad id' })).toThrow(/writerId/)
  expect(() => createHBaseSink({ client, table: 't', journalDir: tempDir(), writerId: 'x', batchSize: 0 })).toThrow(/batchSize/)
})
