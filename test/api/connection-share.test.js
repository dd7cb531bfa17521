'use strict'

// Connections over real sockets (issue 35), with the default per-client rate limit: one
// address's share of a worker's connections (past it, each request gets 429 RATE_LIMITED and
// Connection: close, while another address and a trusted proxy are let in), the finite number
// of requests a keep-alive connection serves, and the default limit itself refusing a greedy
// address.

const net = require('node:net')
const { startBeacon } = require('../support/beacon')
const { until } = require('../support/until')
const { DEFAULTS } = require('../../config/defaults')

const SHARE = 4
const PER_SOCKET = 3
let app
// The beacon's clock, the buckets' included: it stands still unless a test moves it.
let clock = 1e6

beforeAll(async () => {
  app = await startBeacon({
    env: { BEACON_RATE_LIMIT: '' }, // the default limit
    now: () => clock,
    overrides: { http: { maxConnectionsPerClient: SHARE, maxRequestsPerSocket: PER_SOCKET }, rateLimit: { trustedProxies: ['127.0.0.3'] } }
  })
})
afterAll(() => app && app.close())

/** An open connection from a chosen loopback address, and a way to send requests on it. */
async function connect (localAddress) {
  const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(app.url).port), localAddress })
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let text = ''
  socket.on('data', (chunk) => { text += chunk.toString('latin1') })
  return {
    socket,
    /** Sends one GET and resolves with its status and headers once its whole answer is in. */
    async get (path) {
      const start = text.length
      socket.write(`GET ${path} HTTP/1.1\r\nHost: beacon\r\n\r\n`)
      let answer = null
      await until('an answer', () => (answer = parse(text.slice(start))) !== null, 5000, 5)
      return answer
    },
    ended: () => socket.readableEnded || socket.destroyed
  }
}

function parse (text) {
  const head = text.indexOf('\r\n\r\n')
  if (head === -1) return null
  const lines = text.slice(0, head).split('\r\n')
  const field = (line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]
  const headers = Object.fromEntries(lines.slice(1).map(field))
  const length = Number(headers['content-length'] || 0)
  if (text.length < head + 4 + length) return null
  return { status: Number(lines[0].split(' ')[1]), headers, body: text.slice(head + 4, head + 4 + length) }
}

test('past its share of connections an address gets 429 and Connection: close; others and a trusted proxy do not', async () => {
  const held = []
  for (let i = 0; i < SHARE; i++) held.push(await connect('127.0.0.2'))
  const extra = await connect('127.0.0.2')
  const refused = await extra.get('/api/sample3.js?id=1&callback=cb')
  expect(refused.status).toBe(429)
  expect(refused.headers).toMatchObject({ connection: 'close', 'retry-after': '1' })
  expect(refused.body).toContain('RATE_LIMITED')
  await until('the refused connection closed', () => extra.ended(), 5000)
  // Those within the share are served; another address, and a proxy with more, are too.
  for (const c of held) expect((await c.get('/api/sample3.js?id=1')).status).toBe(200)
  expect((await (await connect('127.0.0.5')).get('/api/sample3.js?id=1')).status).toBe(200)
  const proxy = []
  for (let i = 0; i < SHARE + 2; i++) proxy.push(await connect('127.0.0.3'))
  for (const c of proxy) expect((await c.get('/api/sample3.js?id=1')).status).toBe(200)
  // A closed connection gives its place back.
  held[0].socket.destroy()
  await until('a place again', async () => (await (await connect('127.0.0.2')).get('/api/sample3.js?id=1')).status === 200, 5000)
  for (const c of [...held, ...proxy]) c.socket.destroy()
})

test('a keep-alive connection serves maxRequestsPerSocket requests, the last with Connection: close', async () => {
  const c = await connect('127.0.0.6')
  const answers = []
  for (let i = 0; i < PER_SOCKET; i++) answers.push(await c.get('/api/sample1.js?id=1'))
  expect(answers.map((a) => a.status)).toEqual(Array(PER_SOCKET).fill(200))
  expect(answers.map((a) => a.headers.connection)).toEqual([...Array(PER_SOCKET - 1).fill('keep-alive'), 'close'])
  await until('the connection closed', () => c.ended(), 5000)
})

test('the default limit refuses a greedy address past its burst, and counts it', async () => {
  const { perSecond } = DEFAULTS.rateLimit
  expect(perSecond).toBeGreaterThan(0)
  const burst = 2 * perSecond
  const statuses = []
  // From the trusted proxy's own address (no X-Forwarded-For: it is its own client), which has
  // no share of connections: the connections each request cap closes may linger a moment.
  let c = await connect('127.0.0.3')
  for (let i = 0; i < 3 * burst; i++) {
    if (i > 0 && i % PER_SOCKET === 0) c = await connect('127.0.0.3')
    statuses.push((await c.get(`/api/sample1.js?id=${i}`)).status)
  }
  expect(statuses).toEqual([...Array(burst).fill(200), ...Array(2 * burst).fill(429)])
  // A second later perSecond more are let through, and no more.
  clock += 1000
  const later = []
  for (let i = 0; i <= perSecond; i++) {
    if (i % PER_SOCKET === 0) c = await connect('127.0.0.3')
    later.push((await c.get(`/api/sample1.js?id=later${i}`)).status)
  }
  expect(later).toEqual([...Array(perSecond).fill(200), 429])
  const text = await app.metrics.register.getSingleMetricAsString('beacon_rate_limited_total')
  expect(text.split('\n')).toContain(`beacon_rate_limited_total{endpoint="sample1"} ${2 * burst + 1}`)
})
