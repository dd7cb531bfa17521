'use strict'

const net = require('node:net')
const http = require('node:http')
const { runOpenLoop } = require('../lib/open-loop')
const { startFixture } = require('./fixture-server')

/** Runs `use` with the port of an http server on `handler`, then closes the server. */
async function withServer (handler, use) {
  const server = http.createServer(handler)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    return await use(server.address().port)
  } finally {
    server.close()
  }
}

describe('open-loop generator', () => {
  describe('modes', () => {
    let fixture
    beforeAll(async () => { fixture = await startFixture() })
    afterAll(() => fixture.close())
    const next = () => () => ({ path: '/x' })

    test('spreads arrivals evenly: the number sent is rate × duration, timers or polling', async () => {
      for (const precise of [false, true]) {
        const r = await runOpenLoop({
          host: '127.0.0.1',
          port: fixture.port,
          rate: 500,
          durationMs: 1000,
          connections: 3,
          precise,
          next: next()
        })
        expect(r.sent).toBe(500)
        expect(r.requests).toBe(500)
        expect(r.ok).toBe(500)
        expect(r.min).toBeGreaterThan(0)
        expect(r.min).toBeLessThanOrEqual(r.p50)
        expect(r.p50).toBeLessThanOrEqual(r.p99)
        expect(r.p99).toBeLessThanOrEqual(r.max)
      }
    })

    test('a refused connection is an error per request, and nothing is counted as answered', async () => {
      // A port that was just free: nothing listens on it.
      const probe = net.createServer()
      await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve))
      const port = probe.address().port
      await new Promise((resolve) => probe.close(resolve))
      const r = await runOpenLoop({ host: '127.0.0.1', port, rate: 200, durationMs: 250, connections: 2, next: next() })
      expect(r.requests).toBe(0)
      expect(r.errors + r.unsent).toBe(50)
      expect(r.errors).toBeGreaterThan(0)
    })

    test('per-request headers and outcomes reach the caller', async () => {
      const seen = []
      await withServer((req, res) => {
        seen.push(req.headers['user-agent'])
        res.writeHead(req.url === '/fail' ? 503 : 200, { 'content-length': 0 })
        res.end()
      }, async (port) => {
        const outcomes = []
        let i = 0
        const started = Date.now()
        const r = await runOpenLoop({
          host: '127.0.0.1',
          port,
          rate: 100,
          durationMs: 300,
          connections: 2,
          next: () => {
            const n = i++
            return { path: n % 2 ? '/fail' : '/ok', headers: { 'user-agent': `m/${n}` }, n }
          },
          onAnswer: (req, o) => outcomes.push({ n: req.n, ...o })
        })
        expect(r.sent).toBe(30)
        expect(outcomes).toHaveLength(r.sent)
        expect(r.errors).toBe(0)
        expect(r.non2xx).toBe(15)
        expect([...seen].sort()).toEqual(outcomes.map((o) => `m/${o.n}`).sort())
        for (const o of outcomes) {
          expect(o.status).toBe(o.n % 2 ? 503 : 200)
          expect(o.due <= o.sent + 1 && o.sent <= o.done).toBe(true)
          expect(Math.abs(o.done - started)).toBeLessThan(5000) // epoch ms
        }
      })
    })

    test('a request with a method and a body (an OFREP POST) is sent whole on a keep-alive connection', async () => {
      const seen = []
      await withServer((req, res) => {
        let body = ''
        req.setEncoding('utf8')
        req.on('data', (c) => { body += c })
        req.on('end', () => {
          seen.push({ method: req.method, type: req.headers['content-type'], length: req.headers['content-length'], body })
          res.writeHead(200, { 'content-length': 2 })
          res.end('{}')
        })
      }, async (port) => {
        let i = 0
        const r = await runOpenLoop({
          host: '127.0.0.1',
          port,
          rate: 50,
          durationMs: 200,
          connections: 1,
          next: () => ({
            path: '/api/sample5/ofrep/v1/evaluate/flags',
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ context: { targetingKey: `é${i++}` } })
          })
        })
        expect(r.errors).toBe(0)
        expect(r.ok).toBe(r.requests)
        expect(seen.length).toBe(r.requests)
        expect(r.requests).toBeGreaterThanOrEqual(2) // one connection: each body ended where the next request began
        seen.forEach((s, n) => {
          expect(s).toMatchObject({ method: 'POST', type: 'application/json', length: String(Buffer.byteLength(s.body)) })
          expect(JSON.parse(s.body)).toEqual({ context: { targetingKey: `é${n}` } })
        })
      })
    })

    test('a server that never answers: requests time out and are counted as errors', async () => {
      const silent = net.createServer(() => {})
      await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
      try {
        const r = await runOpenLoop({
          host: '127.0.0.1',
          port: silent.address().port,
          rate: 20,
          durationMs: 200,
          connections: 2,
          timeoutMs: 200,
          next: next()
        })
        expect(r.requests).toBe(0)
        expect(r.errors).toBeGreaterThan(0)
        expect(r.errorCodes.TIMEOUT).toBeGreaterThan(0)
      } finally {
        silent.close()
      }
    })
  })
})
