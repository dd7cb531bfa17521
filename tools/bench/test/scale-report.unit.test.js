'use strict'

const { parseLookups, configCase, logSummary, markdown } = require('../lib/scale-report')

/** A /metrics text with the cache outcomes of sample3 and the config RPCs. */
function metrics ({ hit, miss, stale = 0, coalesced = 0, rpcs }) {
  return [
    '# HELP beacon_config_lookups_total Config lookups by endpoint and outcome',
    '# TYPE beacon_config_lookups_total counter',
    `beacon_config_lookups_total{endpoint="sample3",outcome="hit"} ${hit}`,
    `beacon_config_lookups_total{endpoint="sample3",outcome="miss"} ${miss}`,
    `beacon_config_lookups_total{endpoint="sample3",outcome="stale"} ${stale}`,
    `beacon_config_lookups_total{outcome="coalesced",endpoint="sample3"} ${coalesced}`,
    'beacon_config_lookups_total{endpoint="sample3",outcome="refresh_error"} 0',
    'beacon_config_lookups_total{endpoint="sample5",outcome="hit"} 7',
    `beacon_hbase_rpcs_total{kind="config",method="Multi"} ${rpcs}`,
    'beacon_hbase_rpcs_total{kind="log",method="Multi"} 99',
    ''
  ].join('\n')
}

const RUN = { durationMs: 10000, offeredRate: 1000, rps: 1000, requests: 10000, errors: 0, non2xx: 0, late: 3, p50: 1.2, p99: 8.5, max: 20 }

test('parseLookups sums the outcomes per endpoint, whatever the label order', () => {
  const parsed = parseLookups(metrics({ hit: 10, miss: 5, coalesced: 2, rpcs: 3 }))
  expect(parsed.sample3).toEqual({ hit: 10, miss: 5, stale: 0, coalesced: 2, refresh_error: 0 })
  expect(parsed.sample5).toEqual({ hit: 7 })
})

test('a config case: hit ratio, from-memory ratio, store reads and RPCs per second over the window', () => {
  const before = metrics({ hit: 1000, miss: 500, rpcs: 400 })
  const after = metrics({ hit: 8000, miss: 2500, stale: 500, coalesced: 500, rpcs: 1400 })
  const c = configCase({
    lru: 10000,
    endpoint: 'sample3',
    dist: 'zipf',
    before,
    after,
    run: RUN,
    sampled: { app: { cpuUs: 3e6, peakRssMiB: 300 }, hbase: { cpuUs: 1e6 } },
    rssMiB: [60, 120, 121]
  })
  expect(c.lookups).toBe(10000)
  expect(c.lookupsSinceStart).toBe(11500)
  expect(c.hitRatio).toBeCloseTo(0.7)
  expect(c.fromMemoryRatio).toBeCloseTo(0.75)
  expect(c.storeReadsPerSec).toBe(250) // (2000 misses + 500 stale) / 10 s
  expect(c.configRpcsPerSec).toBe(100)
  expect(c.appCpuUsPerReq).toBe(300)
  expect(c.hbaseCpuUsPerReq).toBe(100)
  expect(c.p99).toBe(8.5)
  expect(c.rssMiB).toEqual([60, 120, 121])
})

test('a case with no lookups has no ratios', () => {
  const text = metrics({ hit: 0, miss: 0, rpcs: 0 })
  const c = configCase({ lru: 1, endpoint: 'sample9', dist: 'uniform', before: text, after: text, run: RUN, sampled: {}, rssMiB: [] })
  expect(c.hitRatio).toBeNull()
  expect(c.fromMemoryRatio).toBeNull()
  expect(c.appCpuUsPerReq).toBeNull()
})

/** The log part's measurements for `rows` rows. */
function logPart (rows = 1e6) {
  return {
    day: '2026-11-25',
    requestedRows: rows,
    rows,
    stoppedEarly: false,
    logIds: 100000,
    batchSize: 500,
    rollerIntervalMs: 5000,
    rollerMinutesPerRun: 30,
    write: { seconds: 50, hbaseCpuUs: 25e6, selfCpuUs: 20e6, marks: 2000, walBytes: 300e6 },
    flush: { seconds: 2, hbaseCpuUs: 1e6, selfCpuUs: 0 },
    afterFlush: { bytes: 52e6, files: 16, regions: 8 },
    compaction: { seconds: 14, hbaseCpuUs: 14e6, selfCpuUs: 0 },
    afterCompaction: { bytes: 50e6, files: 8, regions: 8 },
    rollupBytes: { bytes: 2e6, files: 1, regions: 1 },
    roller: {
      minutesRolled: 1440,
      rowsCounted: rows,
      runs: 49,
      caughtUp: true,
      wallSeconds: 300,
      busySeconds: 60,
      cpuUs: 30e6,
      peakRssMiB: 90,
      rssMiB: [60, 90, 80],
      hbaseCpuUs: 12e6
    },
    countFromRollups: { seconds: 0.5, total: rows, rollupMinutes: 1440, scannedMinutes: 0 },
    countFromRaw: { seconds: 10, total: rows },
    scan: { seconds: 2, minutes: 60, rows: rows / 24 },
    erase: { seconds: 5, id: '42', found: 10, deleted: 10, minutes: 10, idRowsBefore: 10, idRowsAfter: 0, dayAfter: rows - 10 }
  }
}

test('the log part per row: bytes on disk, write and roll-up costs, count and scan rates', () => {
  const s = logSummary(logPart())
  expect(s.bytesPerRowFlushed).toBe(52)
  expect(s.bytesPerRowCompacted).toBe(50)
  expect(s.rollupBytesPerRow).toBe(2)
  expect(s.walBytesPerRow).toBe(300)
  expect(s.writeRowsPerSec).toBe(20000)
  expect(s.writeHBaseUsPerRow).toBe(25)
  expect(s.writerUsPerRow).toBe(20)
  expect(s.compactionHBaseUsPerRow).toBe(14)
  expect(s.rollerRowsPerSec).toBeCloseTo(3333.3, 1)
  expect(s.rollerCpuUsPerRow).toBe(30)
  expect(s.rollerCores).toBeCloseTo(0.1)
  expect(s.countRawRowsPerSec).toBe(100000)
  expect(s.scanRowsPerSec).toBeCloseTo(20833.3, 1)
  expect(s.eraseSeconds).toBe(5)
})

test('the markdown has both parts', () => {
  const before = metrics({ hit: 0, miss: 0, rpcs: 0 })
  const after = metrics({ hit: 50, miss: 50, rpcs: 40 })
  const c = configCase({ lru: 100, endpoint: 'sample3', dist: 'zipf', before, after, run: RUN, sampled: {}, rssMiB: [50, 80] })
  const text = markdown({
    date: '2026-11-26T15:00:00.000Z',
    seconds: 600,
    machine: { cores: 2, cpuModel: 'AMD EPYC', node: 'v20' },
    parameters: { command: 'npm run bench:scale', hbaseVersion: '2.6.1', jvm: 'server', heap: '2g', s: 1.1 },
    log: logPart(),
    config: { ids: 1000, seeded: { rows: 1000, seconds: 1 }, cases: [{ ...c, rssAtStartMiB: [50, 70] }] }
  })
  expect(text).toContain('# Scale — 2026-11-26T15:00:00.000Z')
  expect(text).toContain('| **bytes/row on disk** after a major compaction | **50.0** |')
  expect(text).toContain('| 100 | sample3 | zipf | 1,000 | 0.5000 |')
  expect(text).toContain('## Config part')
  for (const line of text.split('\n')) expect(line.length).toBeLessThan(2000)
})

test('what failed or did not check out comes first', () => {
  const text = markdown({
    date: 'd',
    seconds: 60,
    machine: { cores: 2, cpuModel: 'x', node: 'v20' },
    parameters: { command: 'c', hbaseVersion: '2.6.1', jvm: 'server', heap: '2g', s: 1.1 },
    log: { ...logPart(), problems: ['counts disagree: 1 written, 0 from the rollups, 1 raw'] },
    config: null,
    failures: ['config part: Error: boom\n    at somewhere']
  })
  expect(text).toContain('## Problems\n\n- config part: Error: boom\n- log part: counts disagree')
  expect(text.indexOf('## Problems')).toBeLessThan(text.indexOf('## Log part'))
})
