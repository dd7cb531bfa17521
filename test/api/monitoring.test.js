'use strict'

// The shipped Grafana dashboard only queries metrics the server really exports.

const fs = require('node:fs')
const path = require('node:path')
const { startBeacon, request } = require('../support/beacon')

const dashboard = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'tools', 'monitoring', 'grafana-dashboard.json'), 'utf8'))

test('every metric in the Grafana dashboard exists in a live /metrics', async () => {
  const app = await startBeacon()
  try {
    for (let i = 1; i <= 5; i++) await request(`${app.url}/api/sample5.js?id=${i}&callback=cb`)
    await app.sinks.get('hbase').flush()
    const text = (await request(`${app.adminUrl}/metrics`)).body
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]))
    const queried = new Set(
      dashboard.panels.flatMap((p) =>
        p.targets.flatMap((t) => [...t.expr.matchAll(/\bbeacon_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')))
      )
    )
    expect(queried.size).toBeGreaterThan(8)
    // Default process metrics are off in the test harness; the event-loop gauge is one of them.
    const missing = [...queried].filter((name) => !exported.has(name) && !name.startsWith('beacon_nodejs_'))
    expect(missing).toEqual([])
  } finally {
    await app.close()
  }
})
