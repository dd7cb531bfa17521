'use strict'

// tools/lb with the real haproxy (Debian's package) in front of two tiny HTTP servers on
// loopback: round robin, /readyz health checks taking a host out and back, a refused host's
// requests retried on the other, and start-up failures that say why. The beacon servers behind
// it, crashes under load and the access log are test/faults/lb-failover.test.js.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const { startLoadBalancer, DEFAULTS } = require('..')
const { freePorts } = require('../../../test/support/ports')

let dir
const servers = {}
let ready = {}
let lb
let lbPort

/** A host that answers its name, and /readyz 200 or 503 as the test says. */
function startBackend (name, port) {
  const server = http.createServer((req, res) => {
    if (req.url === '/readyz') res.statusCode = ready[name] ? 200 : 503
    res.end(name)
  })
  servers[name] = server
  return new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
}

function get (pathname = '/x') {
  return new Promise((resolve, reject) => {
    http.get(`http://127.0.0.1:${lbPort}${pathname}`, { agent: false }, (res) => {
      let body = ''
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode, backend: res.headers['x-beacon-backend'], body }))
    }).on('error', reject)
  })
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-lb-'))
  const [a, b, front] = await freePorts(3)
  lbPort = front
  ready = { a: true, b: true }
  await startBackend('a', a)
  await startBackend('b', b)
  lb = await startLoadBalancer({
    dir,
    listen: { host: '127.0.0.1', port: front },
    servers: [
      { name: 'a', host: '127.0.0.1', port: a },
      { name: 'b', host: '127.0.0.1', port: b }
    ]
  })
  await lb.waitFor('a', 'UP', 5000)
  await lb.waitFor('b', 'UP', 5000)
})

afterAll(async () => {
  if (lb) await lb.stop()
  for (const s of Object.values(servers)) s.closeAllConnections()
  for (const s of Object.values(servers)) await new Promise((resolve) => s.close(() => resolve()))
  fs.rmSync(dir, { recursive: true, force: true })
})

test('round robin: consecutive requests alternate between the hosts; the answering host is named in a header', async () => {
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await get())
  expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200))
  expect(answers.map((r) => r.backend)).toEqual(answers.map((r) => r.body))
  for (let i = 1; i < 6; i++) expect(answers[i].backend).not.toBe(answers[i - 1].backend)
})

test('/readyz 503 takes a host out within its checks, 200 brings it back', async () => {
  ready.b = false
  const downMs = await lb.waitFor('b', 'DOWN', 5000)
  const whileDown = []
  for (let i = 0; i < 6; i++) whileDown.push((await get()).backend)
  expect(whileDown).toEqual(Array(6).fill('a'))
  ready.b = true
  const upMs = await lb.waitFor('b', 'UP', 5000)
  // fall 2 / rise 2 at 500 ms: about 1 s each way.
  expect(downMs).toBeLessThan(2500)
  expect(upMs).toBeLessThan(2500)
  expect((await lb.server('b')).checkStatus).toBe('L7OK')
})

test('a host that refuses connections: its requests are retried on the other, and it is marked down', async () => {
  const before = await lb.server('b')
  servers.b.closeAllConnections()
  await new Promise((resolve) => servers.b.close(() => resolve()))
  const answers = []
  for (let i = 0; i < 20; i++) answers.push(await get())
  expect(answers.map((r) => `${r.status} ${r.backend}`)).toEqual(Array(20).fill('200 a'))
  await lb.waitFor('b', 'DOWN', 5000)
  // Every request the balancer gave b was redispatched to a; after errorLimit refusals in a row
  // (observe layer4) b was marked down without waiting for its checks.
  const after = await lb.server('b')
  const redispatched = after.redispatches - before.redispatches
  expect(redispatched).toBeGreaterThan(0)
  expect(redispatched).toBe(after.selected - before.selected)
  expect(redispatched).toBeLessThanOrEqual(DEFAULTS.errorLimit)
})

test('start-up failures say why: missing binary, and haproxy\'s own alert when it cannot bind', async () => {
  const servers1 = [{ name: 'a', host: '127.0.0.1', port: 1 }]
  await expect(
    startLoadBalancer({
      dir,
      listen: { host: '127.0.0.1', port: 1 },
      servers: servers1,
      env: { BEACON_HAPROXY: path.join(dir, 'missing') }
    })
  )
    .rejects.toThrow(/haproxy not found .*apt-get install haproxy/)
  // An address this machine does not have (TEST-NET-1).
  await expect(startLoadBalancer({ dir: path.join(dir, 'second'), listen: { host: '192.0.2.1', port: lbPort }, servers: servers1 }))
    .rejects.toThrow(/haproxy exited \(1\) at start:[\s\S]*cannot bind socket/)
})

test('clientRatePerSecond: past its rate an address gets 429 + Retry-After from HAProxy; another not; X-Forwarded-For passed', async () => {
  const [front] = await freePorts(1)
  let seen = null
  const limited = await startLoadBalancer({
    dir: path.join(dir, 'limited'),
    listen: { host: '127.0.0.1', port: front },
    servers: [{ name: 'a', host: '127.0.0.1', port: servers.a.address().port }],
    clientRatePerSecond: 1
  })
  const probe = (req) => { if (req.url === '/xff') seen = req.headers['x-forwarded-for'] }
  servers.a.on('request', probe)
  try {
    await limited.waitFor('a', 'UP', 5000)
    const from = (localAddress, pathname = '/x') => new Promise((resolve, reject) => {
      http.get(`http://127.0.0.1:${front}${pathname}`, { agent: false, localAddress }, (res) => {
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }))
      }).on('error', reject)
    })
    // 1 a second over 10 s: the 11th request within the window is past it, however slow this machine.
    const greedy = []
    for (let i = 0; i < 15; i++) greedy.push(await from('127.0.0.2'))
    expect(greedy.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(200))
    expect(greedy.slice(11).map((r) => r.status)).toEqual(Array(4).fill(429))
    expect(greedy[14].retryAfter).toBe('10')
    expect((await from('127.0.0.3', '/xff')).status).toBe(200)
    expect(seen).toBe('127.0.0.3')
  } finally {
    servers.a.off('request', probe)
    await limited.stop()
  }
})
