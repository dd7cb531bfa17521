'use strict'

const { parseTraffic, trafficDelta, trafficRun, summarizeTraffic, trafficTables, totalLines } = require('../lib/hbase-traffic')
const { stats, spread } = require('../lib/cpu-report')

/** The server's /metrics as the primary sums it, with the HBase traffic families at `n`. */
function metricsText (n) {
  return [
    '# TYPE beacon_hbase_rpcs_total counter',
    `beacon_hbase_rpcs_total{kind="log",method="Multi"} ${2 * n}`,
    `beacon_hbase_rpcs_total{kind="rollup-mark",method="Multi"} ${2 * n}`,
    `beacon_hbase_rpcs_total{kind="config",method="Get"} ${n}`,
    `beacon_hbase_rpcs_total{kind="config",method="Multi"} ${n}`,
    'beacon_hbase_rpcs_total{kind="meta",method="Scan"} 1',
    `beacon_hbase_request_bytes_total{kind="log"} ${20000 * n}`,
    `beacon_hbase_request_bytes_total{kind="rollup-mark"} ${200 * n}`,
    `beacon_hbase_request_bytes_total{kind="config"} ${100 * n}`,
    'beacon_hbase_request_bytes_total{kind="meta"} 80',
    `beacon_hbase_response_frames_total{kind="log"} ${2 * n}`,
    `beacon_hbase_response_bytes_total{kind="log"} ${60 * n}`,
    `beacon_hbase_socket_writes_total{service="ClientService",server="127.0.0.1:16020"} ${3 * n}`,
    'beacon_hbase_socket_writes_total{service="ClientMetaService",server="127.0.0.1:16000"} 1',
    `beacon_hbase_socket_reads_total{service="ClientService",server="127.0.0.1:16020"} ${4 * n}`,
    `beacon_access_log_entries_total{sink="hbase",state="written"} ${100 * n}`,
    `beacon_access_log_entries_total{sink="hbase",state="accepted"} ${999 * n}`,
    'beacon_hbase_rpc_duration_seconds_count{method="Multi"} 7',
    `beacon_access_rollup_rows_total{sink="hbase"} ${90 * n}`,
    `beacon_cluster_process_cpu_seconds_total{process="rollup"} ${0.009 * n}`,
    `beacon_cluster_process_cpu_seconds_total{process="w1"} ${5 * n}`
  ].join('\n')
}

test('a scrape gives the counts by kind and method, the socket writes and the rows the log wrote', () => {
  const t = parseTraffic(metricsText(10))
  expect(t.kinds.config).toEqual({ rpcs: 20, methods: { Get: 10, Multi: 10 }, requestBytes: 1000 })
  expect(t.kinds.log).toEqual({ rpcs: 20, methods: { Multi: 20 }, requestBytes: 200000 })
  expect(t).toMatchObject({ socketWrites: 31, logWritten: 1000, rollupRows: 900 })
  expect(t.rollupCpuSeconds).toBeCloseTo(0.09, 9)
})

test('a run\'s traffic: the difference of two scrapes, per request, idle kinds left out', () => {
  const delta = trafficDelta(parseTraffic(metricsText(10)), parseTraffic(metricsText(30)))
  expect(Object.keys(delta.kinds).sort()).toEqual(['config', 'log', 'rollup-mark'])
  expect(delta).toMatchObject({ socketWrites: 60, logWritten: 2000 })
  const run = trafficRun(delta, 2000)
  expect(run.kinds.log).toMatchObject({ rpcs: 40, framesPerReq: 0.02, bytesPerFrame: 10000 })
  expect(run.kinds['rollup-mark']).toMatchObject({ framesPerReq: 0.02, bytesPerFrame: 100 })
  expect(run).toMatchObject({ frames: 120, framesPerReq: 0.06, socketWritesPerReq: 0.03, framesPerWrite: 2, entriesPerLogFrame: 50 })
  expect(trafficRun(delta, 0)).toBeNull()
})

test('the runs of a case are summed up as medians, and tabled beside the CPU per kind', () => {
  const zero = parseTraffic(metricsText(0))
  const runs = [10, 20, 30].map((n) => ({ hbase: trafficRun(trafficDelta(zero, parseTraffic(metricsText(n))), 1000) }))
  const hbase = summarizeTraffic([...runs, { hbase: null }], stats)
  expect(hbase.kinds.log.framesPerReq).toEqual({ median: 0.04, min: 0.02, max: 0.06, n: 3 })
  expect(hbase.kinds.config.methods).toEqual(['Get', 'Multi'])
  expect(summarizeTraffic([{ hbase: null }], stats)).toBeNull()
  const idle = trafficDelta(zero, zero)
  const cases = {
    'sample5 closed loop': { shape: 'saturation', appUsPerReq: stats([40, 41]), hbase },
    'sample1 closed loop': {
      shape: 'saturation', appUsPerReq: stats([22]), hbase: summarizeTraffic([{ hbase: trafficRun(idle, 10) }], stats)
    },
    'bare node:http closed loop': { shape: 'saturation', appUsPerReq: stats([15]), hbase: null }
  }
  const md = trafficTables(cases, spread, 1000).join('\n')
  expect(md).toContain('| sample5 closed loop | 40.5 (40–41) | 0.06 (0.03–0.09) | 2 (2–2) | 50 (50–50) | log (Multi) ' +
    '| 0.04 (0.02–0.06) | 10000 (10000–10000) |')
  expect(md).toContain('| | | | | | rollup-mark (Multi) |')
  expect(md).toContain('| sample1 closed loop | 22 | 0 |  |  | (none) |')
  expect(md).not.toContain('bare node:http')
  expect(trafficTables({ x: { shape: 'rate', hbase: null } }, spread, 1000)).toEqual([])
})

test('the scenario\'s whole traffic per logged row', () => {
  const total = { seconds: 60, ...trafficDelta(parseTraffic(metricsText(0)), parseTraffic(metricsText(5))) }
  const md = totalLines(total).join('\n')
  expect(md).toContain('500 access-log rows written')
  expect(md).toContain('| log (Multi) | 10 | 100,000 | 0.02 | 200 |')
  // The rollup process's CPU alone (not w1's): 45 ms for 450 rows counted, 500 rows written.
  expect(md).toContain('0.045 s of CPU for 450 raw rows counted, **100 µs per row counted**, 90 µs per access-log row written.')
  expect(totalLines(undefined)).toEqual([])
  const none = { ...total, rollupRows: 0 }
  expect(totalLines(none).join('\n')).toContain('The rollup job counted no rows meanwhile.')
})
