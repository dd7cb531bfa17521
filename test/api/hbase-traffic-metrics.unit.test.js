'use strict'

const client = require('prom-client')
const { createMetrics } = require('../../api/metrics')

/** What a client's trafficStats() returns (packages/hbase-client/lib/traffic.js), with `n` in every count. */
function stats (n) {
  const kind = (calls) => ({ calls, requestFrames: n, requestBytes: 100 * n, responseFrames: n, responseBytes: 10 * n })
  return {
    kinds: { log: kind({ Multi: n }), config: kind({ Get: n, Multi: 2 * n }) },
    connections: [{
      server: 'rs:16020',
      service: 'ClientService',
      connects: 1,
      requestFrames: 3 * n,
      requestBytes: 200 * n,
      socketWrites: n + 1,
      socketReads: 2 * n,
      responseFrames: 3 * n,
      responseBytes: 20 * n
    }]
  }
}

/** A worker's metrics over a client whose counts are `n`, then `n` again after `more`. */
function worker (n) {
  const metrics = createMetrics({ collectDefault: false })
  let now = stats(n)
  metrics.watchHBaseTraffic({ trafficStats: () => now })
  metrics.watchHBaseTraffic({ trafficStats: () => stats(1000) }) // once per registry
  return { metrics, more: (m) => { now = stats(m) } }
}

test('the client\'s traffic counters are read at scrape time, by kind and method, and by connection', async () => {
  const w = worker(3)
  let text = await w.metrics.metrics()
  expect(text).toMatch(/^# TYPE beacon_hbase_rpcs_total counter$/m)
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="log",method="Multi"\} 3$/m)
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="config",method="Multi"\} 6$/m)
  expect(text).toMatch(/^beacon_hbase_request_bytes_total\{kind="config"\} 300$/m)
  expect(text).toMatch(/^beacon_hbase_response_bytes_total\{kind="log"\} 30$/m)
  expect(text).toMatch(/^beacon_hbase_socket_writes_total\{service="ClientService",server="rs:16020"\} 4$/m)
  w.more(5)
  text = await w.metrics.metrics()
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="log",method="Multi"\} 5$/m)
})

test('the cluster\'s /metrics sums the workers\' counts', async () => {
  const [a, b] = [worker(3), worker(4)]
  const json = await Promise.all([a.metrics.register.getMetricsAsJSON(), b.metrics.register.getMetricsAsJSON()])
  const text = await client.AggregatorRegistry.aggregate(json).metrics()
  expect(text).toMatch(/^beacon_hbase_rpcs_total\{kind="config",method="Get"\} 7$/m)
  expect(text).toMatch(/^beacon_hbase_socket_writes_total\{service="ClientService",server="rs:16020"\} 9$/m)
})
