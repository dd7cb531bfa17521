'use strict'

// An endpoint's logPolicy over real sockets (issue 35): with `count`, its 4xx answers and its
// views of ids with no config are answered as ever but are counted in the metrics instead of
// written to the access log; a known id is written as before; an endpoint without the policy
// logs everything, on JSONP and on OFREP alike.

const { startBeacon, request } = require('../support/beacon')

let app
beforeAll(async () => {
  app = await startBeacon({
    overrides: { endpoints: { sample5: { logPolicy: { clientErrors: 'count', unknownIds: 'count' } } } }
  })
})
afterAll(() => app && app.close())

async function counted (endpoint, reason) {
  const metric = app.metrics.register.getSingleMetric('beacon_access_log_counted_only_total')
  if (!metric) return 0
  const { values } = await metric.get()
  return values.filter((v) => v.labels.endpoint === endpoint && v.labels.reason === reason).reduce((n, v) => n + v.value, 0)
}

test('sample5 counts 4xx and unknown ids without entries; a known id is an entry; sample4 writes them all', async () => {
  const sink = app.sinks.get('hbase')
  const before = sink.stats().accepted
  const answers = [
    await request(`${app.url}/api/sample5.js?id=1&callback=cb`), // known: an entry
    await request(`${app.url}/api/sample5.js?id=no-such-id-77&callback=cb`), // unknown: counted
    await request(`${app.url}/api/sample5.js?id=bad%20id&callback=cb`), // 400: counted
    await request(`${app.url}/api/sample5.js?callback=cb`) // 400: counted
  ]
  expect(answers.map((r) => r.status)).toEqual([200, 200, 400, 400])
  expect(answers[1].body).toContain('"default":true')
  const body = JSON.stringify({ context: { targetingKey: 'no-such-id-78' } })
  const headers = { 'content-type': 'application/json' }
  const ofrep = await fetch(`${app.url}/api/sample5/ofrep/v1/evaluate/flags`, { method: 'POST', headers, body })
  expect(ofrep.status).toBe(200)
  await sink.flush()
  expect(sink.stats().accepted - before).toBe(1)
  expect(await counted('sample5', 'unknown_id')).toBe(2)
  expect(await counted('sample5', 'client_error')).toBe(2)
  // sample4 keeps the default policy: every answer an entry of its file sink.
  const file = app.sinks.get('file')
  const fileBefore = file.stats().accepted
  expect((await request(`${app.url}/api/sample4.js?id=no-such-id-79&callback=cb`)).status).toBe(200)
  expect((await request(`${app.url}/api/sample4.js?id=bad%20id&callback=cb`)).status).toBe(400)
  expect(file.stats().accepted - fileBefore).toBe(2)
  expect(await counted('sample4', 'unknown_id')).toBe(0)
})
