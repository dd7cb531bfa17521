'use strict'

// Declared endpoints beyond the defaults, request coalescing, and graceful shutdown.

const fs = require('node:fs')
const path = require('node:path')
const http = require('node:http')
const { startBeacon, request } = require('../support/beacon')
const { countLines } = require('../../logging/count-lines')

const CB = 'cb'

test('a sample6 declared only in config (hbase + lru + file + hbase logs) serves and logs to both sinks', async () => {
  const app = await startBeacon({
    overrides: {
      endpoints: {
        sample6: { source: 'hbase', cache: 'lru', accessLog: ['file', 'hbase'], defaultConfig: { features: { x: false } } }
      }
    }
  })
  try {
    const n = 40
    for (let i = 0; i < n; i++) {
      const res = await request(`${app.url}/api/sample6.js?id=${(i % 5) + 1}&callback=${CB}`)
      expect(res.status).toBe(200)
    }
    const unknown = await request(`${app.url}/api/sample6.js?id=zzz&callback=${CB}`)
    expect(unknown.body).toContain('"default":true,"config":{"features":{"x":false}}')
    await Promise.all([app.sinks.get('file').flush(), app.sinks.get('hbase').flush()])
    expect(await app.client.count(app.accessLogTable)).toBe(n + 1)
    expect(countLines(path.dirname(app.settings.logSinks.file.path))).toBe(n + 1)
    // the cache absorbed repeats: 5 distinct ids + 1 unknown → 6 misses, each one store read
    expect(app.beacon.endpoints.get('/api/sample6.js').cache.stats()).toMatchObject({ miss: 6 })
  } finally {
    await app.close()
  }
})

test('1,000 concurrent misses on one id become a single HBase read (single-flight)', async () => {
  const app = await startBeacon()
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 100 })
    app.rpcs.length = 0
    const results = await Promise.all(
      Array.from({ length: 1000 }, () => request(`${app.url}/api/sample3.js?id=4242&callback=${CB}`, { agent }))
    )
    agent.destroy()
    expect(results.every((r) => r.status === 200)).toBe(true)
    const reads = app.rpcs.filter((r) => r.method === 'Get' || r.method === 'Multi')
    expect(reads).toHaveLength(1)
    const stats = app.beacon.endpoints.get('/api/sample3.js').cache.stats()
    expect(stats.miss).toBe(1)
    expect(stats.coalesced + stats.hit).toBe(999) // joined the one read in flight, or hit after it
  } finally {
    await app.close()
  }
})

test('sample2 reads HBase on every request, but concurrent reads share multi-get RPCs', async () => {
  const app = await startBeacon()
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 })
    app.rpcs.length = 0
    const n = 500
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => request(`${app.url}/api/sample2.js?id=${(i % 400) + 1}&callback=${CB}`, { agent }))
    )
    agent.destroy()
    expect(results.every((r) => r.status === 200)).toBe(true)
    const reads = app.rpcs.filter((r) => r.method === 'Get' || r.method === 'Multi')
    expect(reads.length).toBeGreaterThan(0)
    expect(reads.length).toBeLessThan(n / 2)
    expect(reads.some((r) => r.method === 'Multi')).toBe(true)
    // and a second round reads HBase again (no cache on sample2)
    app.rpcs.length = 0
    await request(`${app.url}/api/sample2.js?id=1&callback=${CB}`)
    expect(app.rpcs.filter((r) => r.method === 'Get' || r.method === 'Multi')).toHaveLength(1)
  } finally {
    await app.close()
  }
})

test('graceful shutdown under in-flight requests: every request answered, every entry in HBase and the file', async () => {
  const app = await startBeacon()
  let closed = false
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    const n = 400
    let seen = 0
    const someArrived = new Promise((resolve) => app.beacon.publicServer.on('request', () => { if (++seen === 50) resolve() }))
    // distinct uncached ids so requests are genuinely in flight (waiting on HBase) at close time
    const inflight = Array.from({ length: n }, (_, i) =>
      request(`${app.url}/api/${i % 2 ? 'sample5' : 'sample4'}.js?id=${5000 + i}&callback=${CB}`, { agent })
    )
    await someArrived
    const closing = app.beacon.close()
    const results = await Promise.allSettled(inflight)
    await closing
    closed = true
    agent.destroy()
    const ok = results.filter((r) => r.status === 'fulfilled' && r.value.status === 200)
    const refused = results.filter((r) => r.status === 'rejected')
    // Requests already accepted are answered; ones that arrive after close are refused at connect.
    expect(ok.length + refused.length).toBe(n)
    expect(refused.every((r) => /ECONNREFUSED|ECONNRESET|socket hang up/.test(r.reason.message))).toBe(true)
    const admin = require('../support/hbase').testClient()
    try {
      const rows = await admin.count(app.accessLogTable)
      const fileLines = countLines(path.dirname(app.settings.logSinks.file.path))
      const sample5Ok = results.filter((r, i) => i % 2 === 1 && r.status === 'fulfilled' && r.value.status === 200).length
      const sample4Ok = ok.length - sample5Ok
      expect(rows).toBe(sample5Ok)
      expect(fileLines).toBe(sample4Ok)
      expect(ok.length).toBeGreaterThanOrEqual(50)
    } finally {
      await admin.close()
    }
  } finally {
    if (!closed) await app.beacon.close()
    await app.close()
    expect(fs.existsSync(app.stateDir)).toBe(false)
  }
})
