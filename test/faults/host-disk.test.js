'use strict'

// The app host's own disk, under load, against real processes and a real HBase (an instance of
// this file's own):
// 1. the state dir on a 4 MiB tmpfs that fills up while HBase is SIGKILLed and sample4/sample5
//    are under load: no crash, no 5xx, answers stay fast, the event loop never stalls; /readyz
//    and /metrics say what is happening; every entry is written, on disk, in memory within the
//    configured bound or counted as shed (reason disk_full), at every sample; when HBase and
//    the space return the backlog drains by itself, and rows / lines match exactly;
// 2. HBase up (durability process) while the file log's disk is full: the file sink's losses are
//    visible and counted, nothing else is lost.
// Both mount tmpfs file systems, which needs root; without it they are skipped, and say so. Rows
// are counted only after the loss audit: the running beacon's sink idle on /metrics. Torn and
// damaged journal files: torn-files.test.js.

const fs = require('node:fs')
const path = require('node:path')
const hbase = require('../../tools/dev-hbase')
const { startBeacon, request } = require('../support/beacon')
const { startLoops, stopRunningLoads } = require('../support/load')
const { until } = require('../support/until')
const { monitorLoopStalls } = require('../support/loop-stall')
const { CAN_MOUNT, mountTmpfs, unmount, unmountAllUnder, fillDisk } = require('../support/tmpfs')
const { createHBaseClient } = require('@beacon/hbase-client')
const { countLines } = require('../../logging/count-lines')
const { expectIdle, recordAudit } = require('../support/loss-audit')
const { watchSinks, scrape, readyz, p99 } = require('../support/sink-watch')

jest.setTimeout(4 * 60 * 1000)

const ROOT = path.join(__dirname, '..', '..')
const options = hbase.resolveOptions({
  stateDir: path.join(ROOT, '.state', 'hbase-host-disk'),
  zkPort: 2361,
  masterPort: 16900,
  rsPort: 16920,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 100
})
const MOUNTS = path.join(ROOT, '.state', 'host-disk-mounts')
const IDS = 40
const TIMEOUTS = { rpcTimeoutMs: 500, operationTimeoutMs: 1500 }
// Memory bounds given to the sinks (settings), small so that a few seconds of load reach them.
const BOUNDS = { maxQueue: 2000, journalMaxBuffered: 3000, maxPendingLines: 3000 }
const needsRoot = CAN_MOUNT ? test : test.skip
if (!CAN_MOUNT) console.warn('host-disk: the full-disk tests are SKIPPED: mounting a small tmpfs needs root')

let bootstrap
const mounted = []

beforeAll(async () => {
  // A run killed before its afterAll leaves its tmpfs mounted here, and the rmdir below would fail.
  if (CAN_MOUNT) {
    const left = unmountAllUnder(MOUNTS)
    if (left.length) console.warn(`host-disk: unmounted what an earlier run left: ${left.join(', ')}`)
  }
  await hbase.wipe(options, { crash: true })
  bootstrap = (await hbase.up(options, { log: () => {} })).bootstrap
})

afterAll(async () => {
  for (const dir of [...mounted]) unmountOwn(dir)
  fs.rmSync(MOUNTS, { recursive: true, force: true })
  await hbase.wipe(options, { crash: true })
})

afterEach(stopRunningLoads)

/** A fresh tmpfs of `mib` MiB at a directory of this file's own. */
function mountFresh (name, mib) {
  const dir = mountTmpfs(path.join(MOUNTS, name), mib)
  mounted.push(dir)
  return dir
}

function unmountOwn (dir) {
  const i = mounted.indexOf(dir)
  if (i === -1) return
  mounted.splice(i, 1)
  unmount(dir)
}

/** The beacon on a state dir of its own, with small memory bounds. */
function startOn (stateDir, { durable = false } = {}) {
  return startBeacon({
    bootstrap,
    env: { BEACON_STATE_DIR: stateDir },
    clientOptions: { rpcTimeout: TIMEOUTS.rpcTimeoutMs, operationTimeout: TIMEOUTS.operationTimeoutMs },
    overrides: {
      hbase: TIMEOUTS,
      logSinks: {
        file: { maxPendingLines: BOUNDS.maxPendingLines },
        hbase: { maxQueue: BOUNDS.maxQueue, journalMaxBuffered: BOUNDS.journalMaxBuffered, durable }
      }
    }
  })
}

async function warm (app) {
  for (let id = 1; id <= IDS; id++) {
    for (const endpoint of ['sample4', 'sample5']) {
      expect((await request(`${app.url}/api/${endpoint}.js?id=${id}&callback=cb`)).status).toBe(200)
    }
  }
}

/** Closed-loop load on sample4 and sample5; every answer's status and time kept. */
function startLoad (url, loops = 8) {
  const answers = { sample4: [], sample5: [] }
  let n = 0
  const load = startLoops({
    loops,
    maxMs: 180000,
    async step (i, agent) {
      const endpoint = i % 2 ? 'sample5' : 'sample4'
      const at = Date.now()
      const res = await request(`${url}/api/${endpoint}.js?id=${1 + (n++ % IDS)}&callback=cb`, { agent }).catch((err) => ({
        status: 0,
        error: err.message
      }))
      answers[endpoint].push({ status: res.status, ms: Date.now() - at })
    }
  })
  return { answers, stop: () => load.stop() }
}

/**
 * A beacon on a fresh 4 MiB tmpfs of its own, warmed up, its disk filled but for `leaveBytes`,
 * under load, its sinks watched and the event loop's delay measured; close() undoes it all.
 */
async function fullDiskRig (name, leaveBytes, startOptions = {}) {
  const stateDir = mountFresh(name, 4)
  const rig = {
    stateDir,
    filler: '',
    app: /** @type {any} */ (null),
    loop: monitorLoopStalls({ resolution: 10 }),
    counter: createHBaseClient({ bootstrap }),
    load: /** @type {any} */ (null),
    watch: /** @type {any} */ (null),
    async close () {
      rig.loop.disable()
      if (rig.watch) rig.watch.stop()
      if (rig.load) await rig.load.stop()
      await rig.counter.close()
      if (rig.app) await rig.app.close()
      unmountOwn(stateDir)
    }
  }
  try {
    rig.app = await startOn(stateDir, startOptions)
    await warm(rig.app)
    rig.filler = fillDisk(stateDir, leaveBytes)
    rig.load = startLoad(rig.app.url)
    rig.watch = watchSinks(rig.app)
    rig.loop.enable()
  } catch (err) {
    await rig.close()
    throw err
  }
  return rig
}

needsRoot('HBase SIGKILLed and the state dir\'s disk full under sample4/sample5 load: counted, visible, bounded, fast; drains by itself ' +
  'once HBase and the space return', async () => {
  const rig = await fullDiskRig('outage', 1536 * 1024)
  const { stateDir, app, loop, counter, load, watch, filler } = rig
  const hs = app.sinks.get('hbase')
  const fsink = app.sinks.get('file')
  let hbaseDown = false
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const killedAt = Date.now()
    hbaseDown = true
    await hbase.kill(options)

    // The journal and the file log fill the disk, then the bounds are reached and entries shed.
    await until(
      'both sinks see the disk full',
      () => hs.stats().writeFailing === 'ENOSPC' && fsink.stats().writeFailing === 'ENOSPC',
      60000
    )
    const fullAt = Date.now()
    await until('both sinks shedding for the full disk', () => hs.stats().shedBy.disk_full > 0 && fsink.stats().shedBy.disk_full > 0, 60000)
    const during = await readyz(app)
    expect(during.status).toBe(503)
    expect(during.checks['accessLog.hbase']).toMatch(/^journal cannot be written: ENOSPC \(\d+ entries in memory, \d+ shed\)$/)
    expect(during.checks['accessLog.file']).toMatch(/^file log cannot be written: ENOSPC \(\d+ entries in memory, \d+ shed\)$/)
    const m = await scrape(app)
    expect(m('beacon_access_log_shed_total{sink="hbase",reason="disk_full"}')).toBeGreaterThan(0)
    expect(m('beacon_access_log_shed_total{sink="file",reason="disk_full"}')).toBeGreaterThan(0)
    expect(m('beacon_access_log_write_failing{sink="hbase"}')).toBe(1)
    expect(m('beacon_access_log_write_failing{sink="file"}')).toBe(1)
    expect(m('beacon_access_log_journal_buffered{sink="hbase"}')).toBeGreaterThan(0)
    const atFull = { hbase: hs.stats(), file: fsink.stats() }

    // HBase returns, the disk is still full: what waits in memory goes to HBase directly, the
    // journal files are replayed (and deleted).
    // The replay deletes each journal file it has written to HBase, which gives the disk some
    // room back: the file log may recover from that alone, before the filler goes.
    const restartAt = Date.now()
    watch.w.recovery = restartAt
    await hbase.up(options, { log: () => {} })
    hbaseDown = false
    const upAt = Date.now()
    await until('the HBase sink drained', () => {
      const s = hs.stats()
      return s.state === 'up' && s.journalBuffered === 0 && s.journalPending === 0 && s.pending < BOUNDS.maxQueue / 2
    }, 90000).catch((err) => { throw new Error(`${err.message}: ${JSON.stringify(hs.stats())}`) })

    // The space returns: whatever the file log still holds is written by itself.
    fs.rmSync(filler)
    const spaceAt = Date.now()
    await until('the file sink drained', () => fsink.stats().writeFailing === null && fsink.stats().pending < 1000, 30000)
      .catch((err) => { throw new Error(`${err.message}: ${JSON.stringify(fsink.stats())}`) })
    await until('/readyz 200 again', async () => (await readyz(app)).status === 200, 30000)
    const readyAt = Date.now()
    loop.disable()
    await load.stop()
    watch.stop()

    await hs.flush()
    await fsink.flush()
    await until('the HBase sink quiet', () => hs.stats().pending === 0 && hs.stats().journalPending === 0, 30000)
    const idle = await expectIdle(app.adminUrl)
    const h = hs.stats()
    const f = fsink.stats()
    const { sample4, sample5 } = load.answers
    const ok4 = sample4.filter((a) => a.status === 200).length + IDS // + the warm-up requests
    const ok5 = sample5.filter((a) => a.status === 200).length + IDS
    const rows = await counter.count(app.accessLogTable)
    recordAudit({ note: `${h.shed} shed for the full disk, ${h.shedUnconfirmed} of them unconfirmed`, answered: ok5, rows, idle })
    const lines = countLines(path.join(stateDir, 'logs'))
    const q = await scrape(app)
    const entriesOf = (state) => q(`beacon_access_log_entries_total{sink="hbase",state="${state}"}`)
    const metricSum = ['written', 'shed', 'corrupt'].reduce((n, s) => n + entriesOf(s), 0) +
      q('beacon_access_log_pending{sink="hbase"}') +
      q('beacon_access_log_journal_buffered{sink="hbase"}') +
      q('beacon_access_log_journal_pending{sink="hbase"}')
    console.log(`host disk full + HBase killed: disk full ${fullAt - killedAt} ms after the kill; at the ` +
      `peak: hbase ${JSON.stringify(pick(atFull.hbase))}, file ${JSON.stringify(pick(atFull.file))}\n` +
      `  final hbase: accepted ${h.accepted} = written ${h.written} + journal ${h.journalPending} + memory ` +
      `${h.pending + h.journalBuffered} + shed ${h.shed} ${JSON.stringify(h.shedBy)} (unconfirmed ${h.shedUnconfirmed}); ` +
        `rows ${rows} for ${ok5} answered sample5\n` +
      `  final file: accepted ${f.accepted} = written ${f.written} + memory ${f.pending} + ` +
      `shed ${f.shed} ${JSON.stringify(f.shedBy)}; lines ${lines} for ${ok4} answered sample4\n` +
      `  recovery (ms from the HBase restart): HBase serving ${upAt - restartAt} (restart call returned), HBase sink journal empty ` +
        `${watch.w.hbaseDrainedAt - restartAt}, file sink writing again ${watch.w.fileDrainedAt - restartAt}, filler removed ` +
        `${spaceAt - restartAt}, /readyz 200 ${readyAt - restartAt}\n` +
      `  max held in memory: hbase ${watch.w.maxHeld} (bound ${BOUNDS.maxQueue + BOUNDS.journalMaxBuffered}), ` +
      `file ${watch.w.maxFilePending} (bound ${BOUNDS.maxPendingLines}); ${watch.w.samples} samples\n` +
      `  answers: sample4 ${sample4.length} (p99 ${p99(sample4)} ms, max ${Math.max(...sample4.map((a) => a.ms))} ms), sample5 ` +
        `${sample5.length} (p99 ${p99(sample5)} ms, max ${Math.max(...sample5.map((a) => a.ms))} ms); event loop delay max ` +
        `${(loop.max / 1e6).toFixed(1)} ms (${loop.busyMaxMs.toFixed(1)} ms of a hold-up busy), ` +
        `p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms`)

    // No crash, no 5xx, no dropped connection, answers fast, loop never stalled by work of its own
    // (a loaded machine's waits for a CPU are not the server's: test/support/loop-stall.js).
    for (const list of [sample4, sample5]) {
      expect(list.filter((a) => a.status !== 200)).toEqual([])
      expect(p99(list)).toBeLessThan(250)
      expect(Math.max(...list.map((a) => a.ms))).toBeLessThan(2000)
    }
    expect(loop.busyMaxMs).toBeLessThan(1000)
    // The books balanced at every sample, and memory stayed within its bounds.
    expect(watch.w.samples).toBeGreaterThan(100)
    expect(watch.w.unbalanced).toEqual([])
    expect(watch.w.maxHeld).toBeLessThanOrEqual(BOUNDS.maxQueue + BOUNDS.journalMaxBuffered)
    expect(watch.w.maxFilePending).toBeLessThanOrEqual(BOUNDS.maxPendingLines)
    // Exact: what was answered is in HBase / the file, or counted as shed for the full disk. Of the
    // shed, those whose write went out and got no answer (HBase killed, or slow as it came back)
    // may be rows after all: the sink counts them apart, and the rows beyond `written` are those.
    expectDiskShed(h)
    expect(h).toMatchObject({ accepted: ok5, claimed: 0, corrupt: 0, pending: 0, journalBuffered: 0, journalPending: 0 })
    expect(h.written).toBe(ok5 - h.shed)
    expect(rows).toBeGreaterThanOrEqual(h.written)
    expect(rows - h.written).toBeLessThanOrEqual(h.shedUnconfirmed)
    expect(entriesOf('shedUnconfirmed')).toBe(h.shedUnconfirmed)
    expectDiskShed(f)
    expect(f).toMatchObject({ accepted: ok4, pending: 0, writeFailing: null })
    expect(lines).toBe(ok4 - f.shed)
    // /metrics tells the same story.
    expect(q('beacon_access_log_entries_total{sink="hbase",state="accepted"}')).toBe(h.accepted)
    expect(metricSum).toBe(h.accepted)
    for (const [sink, s] of [['hbase', h], ['file', f]]) {
      for (const [reason, count] of Object.entries(s.shedBy)) {
        expect(q(`beacon_access_log_shed_total{sink="${sink}",reason="${reason}"}`)).toBe(count)
      }
    }
    expect(q('beacon_access_log_write_failing{sink="file"}')).toBe(0)
  } finally {
    if (hbaseDown) await hbase.up(options, { log: () => {} }) // for the next test
    await rig.close()
  }
})

/**
 * Shed for the disk only: disk_full while it refused writes, write_backlog when a write had just
 * worked again but the bound was still full (the disk gaining room a little at a time).
 */
function expectDiskShed (s) {
  expect(s.shedBy.disk_full).toBeGreaterThan(0)
  expect(s.shed).toBe(s.shedBy.disk_full + s.shedBy.write_backlog)
}

function pick (s) {
  const keys = ['accepted', 'written', 'pending', 'journalBuffered', 'journalPending', 'shed', 'writeFailing']
  return Object.fromEntries(keys.filter((k) => k in s).map((k) => [k, s[k]]))
}

needsRoot('HBase up, the file log\'s disk full (durability process): the file sink\'s losses are visible and counted, the event loop runs, ' +
  'nothing else is lost', async () => {
  const rig = await fullDiskRig('file-full', 256 * 1024, { durable: true })
  const { stateDir, app, loop, counter, load, watch, filler } = rig
  const hs = app.sinks.get('hbase')
  const fsink = app.sinks.get('file')
  try {
    await until('the file sink sees the disk full', () => fsink.stats().writeFailing === 'ENOSPC', 60000)
    await until('the file sink shedding', () => fsink.stats().shedBy.disk_full > 0, 60000)
    const during = await readyz(app)
    expect(during.status).toBe(503)
    expect(during.checks['accessLog.file']).toMatch(/^file log cannot be written: ENOSPC \(\d+ entries in memory, \d+ shed\)$/)
    // The HBase log's write-ahead log shares the disk: when a write of it found no room just now,
    // /readyz says so too (its entries still go to HBase, only not crash-proof meanwhile).
    expect(during.checks['accessLog.hbase']).toMatch(
      /^(ok|write-ahead log cannot be written: ENOSPC \(\d+ entries answered without it; a crash would lose those in memory\))$/)
    const m = await scrape(app)
    expect(m('beacon_access_log_shed_total{sink="file",reason="disk_full"}')).toBeGreaterThan(0)
    expect(m('beacon_access_log_write_failing{sink="file"}')).toBe(1)
    const walFailures = hs.stats().walFailures

    fs.rmSync(filler)
    const spaceAt = Date.now()
    await until('the file sink drained', () => fsink.stats().writeFailing === null && fsink.stats().pending < 1000, 30000)
    const drainedMs = Date.now() - spaceAt
    await until('/readyz 200 again', async () => (await readyz(app)).status === 200, 30000)
    loop.disable()
    await load.stop()
    watch.stop()
    await hs.flush()
    await fsink.flush()
    // flush() resolves once each entry is in HBase or in the journal: only an idle sink means
    // every entry is a row.
    const idle = await expectIdle(app.adminUrl)

    const h = hs.stats()
    const f = fsink.stats()
    const { sample4, sample5 } = load.answers
    const ok4 = sample4.filter((a) => a.status === 200).length + IDS
    const ok5 = sample5.filter((a) => a.status === 200).length + IDS
    const rows = await counter.count(app.accessLogTable)
    recordAudit({ answered: ok5, rows, idle })
    const lines = countLines(path.join(stateDir, 'logs'))
    console.log(`file log disk full, HBase up, durable: file accepted ${f.accepted} = written ${f.written} + memory ${f.pending} + shed ` +
      `${f.shed} ${JSON.stringify(f.shedBy)}; lines ${lines} for ${ok4} answered sample4; drained ${drainedMs} ms after space returned; ` +
      `max pending ${watch.w.maxFilePending}\n` +
      `  hbase: ${rows} rows for ${ok5} answered sample5, written ${h.written}, shed ${h.shed}; write-ahead-log appends the full disk ` +
        `refused: ${walFailures} (entries still written to HBase)\n` +
      `  answers: sample4 p99 ${p99(sample4)} ms, max ${Math.max(...sample4.map((a) => a.ms))} ` +
      `ms; sample5 p99 ${p99(sample5)} ms; event loop delay max ${(loop.max / 1e6).toFixed(1)} ms ` +
      `(${loop.busyMaxMs.toFixed(1)} ms of a hold-up busy)`)

    for (const list of [sample4, sample5]) {
      expect(list.filter((a) => a.status !== 200)).toEqual([])
      expect(p99(list)).toBeLessThan(250)
    }
    expect(loop.busyMaxMs).toBeLessThan(1000)
    expect(watch.w.unbalanced).toEqual([])
    expect(watch.w.maxFilePending).toBeLessThanOrEqual(BOUNDS.maxPendingLines)
    expectDiskShed(f)
    expect(f).toMatchObject({ accepted: ok4, pending: 0 })
    expect(lines).toBe(ok4 - f.shed)
    expect(h).toMatchObject({ accepted: ok5, written: ok5, shed: 0 })
    expect(rows).toBe(ok5)
  } finally {
    await rig.close()
  }
})
