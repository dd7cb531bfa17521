'use strict'

// What /readyz and /metrics say about access-log sinks whose local disk refuses writes, from
// the sinks' stats (stood in for here; the real sinks on a real full disk are in
// test/faults/host-disk.test.js).

const { createReadiness } = require('../../api/admin/readiness')
const { createMetrics } = require('../../api/metrics')

function sinkStub (type, stats, extra = {}) {
  return { type, stats: () => stats, ...extra }
}

const HBASE_FAILING = {
  accepted: 1000,
  claimed: 0,
  written: 400,
  pending: 0,
  journalBuffered: 300,
  journalPending: 200,
  shed: 100,
  shedBy: { overload: 0, disk_full: 100, write_error: 0, write_backlog: 0 },
  corrupt: 0,
  quarantinedFiles: 2,
  writeFailing: 'ENOSPC',
  state: 'down'
}
const FILE_FAILING = {
  accepted: 500,
  written: 300,
  pending: 150,
  shed: 50,
  shedBy: { disk_full: 50, write_error: 0, write_backlog: 0 },
  writeFailing: 'ENOSPC'
}

function readiness (sinks) {
  return createReadiness({
    client: { ping: async () => {} },
    pingTimeoutMs: 100,
    endpoints: new Map(),
    sinks: new Map(Object.entries(sinks)),
    closing: () => false
  })()
}

test('/readyz: a sink whose disk refuses writes makes the process not ready, and says why with the counts', async () => {
  const r = await readiness({
    hbase: sinkStub('hbase', HBASE_FAILING, { maxQueue: 50000, overload: 'spill' }),
    file: sinkStub('file', FILE_FAILING)
  })
  expect(r.ready).toBe(false)
  expect(r.checks['accessLog.hbase']).toBe('journal cannot be written: ENOSPC (300 entries in memory, 100 shed)')
  expect(r.checks['accessLog.file']).toBe('file log cannot be written: ENOSPC (150 entries in memory, 50 shed)')

  const healthy = await readiness({
    hbase: sinkStub('hbase', { ...HBASE_FAILING, writeFailing: null, state: 'up' }, { maxQueue: 50000 }),
    file: sinkStub('file', { ...FILE_FAILING, writeFailing: null })
  })
  expect(healthy).toMatchObject({ ready: true, checks: { 'accessLog.hbase': 'ok', 'accessLog.file': 'ok' } })
})

test('/metrics: shed by reason, entries waiting in memory for the journal, the failing flag, damaged lines and quarantined ' +
  'files', async () => {
  const metrics = createMetrics({ collectDefault: false })
  let stats = HBASE_FAILING
  metrics.watchSinks(new Map([['hbase', { stats: () => stats }], ['file', { stats: () => FILE_FAILING }]]))
  const value = (text, series) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '))
    return line === undefined ? undefined : Number(line.slice(series.length + 1))
  }
  let text = await metrics.metrics()
  expect(value(text, 'beacon_access_log_shed_total{sink="hbase",reason="disk_full"}')).toBe(100)
  expect(value(text, 'beacon_access_log_shed_total{sink="hbase",reason="overload"}')).toBe(0)
  expect(value(text, 'beacon_access_log_shed_total{sink="file",reason="disk_full"}')).toBe(50)
  expect(value(text, 'beacon_access_log_entries_total{sink="hbase",state="shed"}')).toBe(100)
  expect(value(text, 'beacon_access_log_journal_buffered{sink="hbase"}')).toBe(300)
  expect(value(text, 'beacon_access_log_journal_pending{sink="hbase"}')).toBe(200)
  expect(value(text, 'beacon_access_log_write_failing{sink="hbase"}')).toBe(1)
  expect(value(text, 'beacon_access_log_write_failing{sink="file"}')).toBe(1)
  expect(value(text, 'beacon_access_log_quarantined_files_total{sink="hbase"}')).toBe(2)
  expect(value(text, 'beacon_access_log_entries_total{sink="hbase",state="corrupt"}')).toBe(0)

  stats = { ...HBASE_FAILING, writeFailing: null, shed: 130, shedBy: { ...HBASE_FAILING.shedBy, disk_full: 130 }, corrupt: 4 }
  text = await metrics.metrics()
  expect(value(text, 'beacon_access_log_shed_total{sink="hbase",reason="disk_full"}')).toBe(130)
  expect(value(text, 'beacon_access_log_write_failing{sink="hbase"}')).toBe(0)
  expect(value(text, 'beacon_access_log_entries_total{sink="hbase",state="corrupt"}')).toBe(4)
})

test('/readyz: parked rollup minutes are a warning that names them, never a reason to be unready', async () => {
  const check = (parked) => createReadiness({
    client: { ping: async () => {} },
    pingTimeoutMs: 100,
    endpoints: new Map(),
    sinks: new Map(),
    rollups: { parked },
    closing: () => false
  })()
  expect(await check(async () => [])).toMatchObject({ ready: true, checks: { rollups: 'ok' } })
  const minutes = [0, 60000, 120000, 180000]
  expect(await check(async () => minutes)).toMatchObject({
    ready: true,
    checks: {
      rollups: 'warning: 4 minute(s) parked, not counted (1970-01-01T00:00:00.000Z, 1970-01-01T00:01:00.000Z, ' +
        '1970-01-01T00:02:00.000Z, …; see beacon log check)'
    }
  })
  const unread = await check(async () => { throw Object.assign(new Error('down'), { code: 'HBASE_CONNECTION' }) })
  expect(unread).toMatchObject({ ready: true, checks: { rollups: 'not read: HBASE_CONNECTION' } })
})

test('/readyz: a file log whose rotations deleted young history warns, and stays ready; the metric counts them', async () => {
  const history = { keptMs: 90 * 60000, promisedMs: 13 * 86400000, earlyRotations: 7, short: true }
  const r = await readiness({ file: sinkStub('file', { ...FILE_FAILING, writeFailing: null, history }) })
  expect(r.ready).toBe(true)
  expect(r.checks['accessLog.file']).toBe("warning: the file log's rotated files hold 1.5 h of history, less than the 312 h keepFiles " +
    'promise (rotating on size: raise rotateSize or keepFiles)')
  const metrics = createMetrics({ collectDefault: false })
  metrics.watchSinks(new Map([['file', sinkStub('file', { ...FILE_FAILING, history })]]))
  expect(await metrics.metrics()).toContain('beacon_access_log_file_early_rotations_total{sink="file"} 7')
})

test('/metrics: beacon_access_rollup_enabled reads 0 for an HBase sink with its rollups off, not nothing', async () => {
  const metrics = createMetrics({ collectDefault: false })
  metrics.watchSinks(new Map([
    ['off', sinkStub('hbase', HBASE_FAILING)], // no `rollup` in its stats: rollups off
    ['on', sinkStub('hbase', { ...HBASE_FAILING, rollup: { disabled: false, markPending: 0 } })],
    ['file', sinkStub('file', FILE_FAILING)]
  ]))
  const text = await metrics.metrics()
  expect(text).toContain('beacon_access_rollup_enabled{sink="off"} 0')
  expect(text).toContain('beacon_access_rollup_enabled{sink="on"} 1')
  expect(text).not.toContain('beacon_access_rollup_enabled{sink="file"}')
})
