'use strict'

const client = require('prom-client')
const { hotCounter, hotHistogram } = require('../../api/metrics/hot')

const BUCKETS = [0.001, 0.01, 0.1, 1]

// The same updates through prom-client's own metrics and through the hot ones: /metrics must
// not tell them apart (text format, and the cluster aggregator's sum over two workers).
function both (update) {
  const reference = new client.Registry()
  const hot = new client.Registry()
  const refCounter = new client.Counter({ name: 'x_requests_total', help: 'h', labelNames: ['endpoint', 'status'], registers: [reference] })
  const refHistogram = new client.Histogram({
    name: 'x_seconds',
    help: 'h',
    labelNames: ['endpoint'],
    buckets: BUCKETS,
    registers: [reference]
  })
  const hotC = hotCounter({ name: 'x_requests_total', help: 'h', register: hot })
  const hotH = hotHistogram({ name: 'x_seconds', help: 'h', buckets: BUCKETS, register: hot })
  update({
    inc: (labels, n) => { refCounter.labels(labels).inc(n); hotC.child(labels).inc(n) },
    observe: (labels, v) => { refHistogram.labels(labels).observe(v); hotH.child(labels).observe(v) }
  })
  return { reference, hot }
}

function updates ({ inc, observe }) {
  inc({ endpoint: 'sample1', status: '200' }, 1)
  inc({ endpoint: 'sample1', status: '200' }, 4)
  inc({ endpoint: 'sample3', status: '503' }, 1)
  for (const v of [0.0001, 0.001, 0.0011, 0.05, 0.5, 1, 3, 0.001]) observe({ endpoint: 'sample1' }, v)
  observe({ endpoint: 'sample5' }, 0.2)
}

test('the hot counter and histogram print exactly what prom-client prints for the same updates', async () => {
  const { reference, hot } = both(updates)
  const text = await hot.metrics()
  expect(text).toBe(await reference.metrics())
  expect(text).toMatch(/^x_seconds_bucket\{le="0.001",endpoint="sample1"\} 3$/m)
  expect(text).toMatch(/^x_seconds_bucket\{le="\+Inf",endpoint="sample1"\} 8$/m)
  expect(text).toMatch(/^x_requests_total\{endpoint="sample1",status="200"\} 5$/m)
})

test('two workers\' hot metrics sum in the cluster aggregator like prom-client\'s', async () => {
  const a = both(updates)
  const b = both(({ inc, observe }) => { inc({ endpoint: 'sample1', status: '200' }, 2); observe({ endpoint: 'sample1' }, 0.02) })
  const sum = async (x, y) => client.AggregatorRegistry.aggregate([await x.getMetricsAsJSON(), await y.getMetricsAsJSON()]).metrics()
  expect(await sum(a.hot, b.hot)).toBe(await sum(a.reference, b.reference))
})

test('reset zeroes every series but keeps it (callers hold their series)', async () => {
  const { hot } = both(updates)
  hot.resetMetrics()
  const text = await hot.metrics()
  expect(text).toMatch(/^x_requests_total\{endpoint="sample1",status="200"\} 0$/m)
  expect(text).toMatch(/^x_seconds_count\{endpoint="sample5"\} 0$/m)
  expect(text).not.toMatch(/ [1-9]/)
})
