'use strict'

// The client's traffic counters (lib/traffic.js) against a fake RegionServer on a real
// socket: what they count must be what went over the wire.

const { METHODS, encodeCall } = require('../lib/protocol')
const { ConnectionPool } = require('../lib/pool')
const { KindTally } = require('../lib/traffic')
const { runBatch } = require('../lib/batch')
const { RetryPolicy } = require('../lib/retry')
const { createHBaseClient } = require('../lib')
const { frameFor, withServer, result, getRequest } = require('./support/fake-regionserver')

const Get = METHODS.ClientService.Get
const answerAll = (socket, calls) => { for (const id of calls) socket.write(frameFor(id, result('v'))) }
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('traffic counters', () => {
  test('calls of one event-loop turn leave in one socket write; frames and bytes are the ones sent and read', async () => {
    await withServer(answerAll, async (conn) => {
      const kind = new KindTally()
      // The preamble is the connection's first write.
      expect(conn._tally).toMatchObject({ connects: 1, socketWrites: 1, requestFrames: 0 })
      await Promise.all([1, 2, 3].map(() => conn.call(Get, getRequest, 2000, kind)))
      await conn.call(Get, getRequest, 2000, kind)
      const sent = [1, 2, 3, 4].reduce((n, id) => n + encodeCall(id, Get, getRequest, 2000).length, 0)
      const read = [1, 2, 3, 4].reduce((n, id) => n + frameFor(id, result('v')).length, 0)
      expect(conn._tally).toMatchObject({
        socketWrites: 3,
        requestFrames: 4,
        requestBytes: sent,
        responseFrames: 4,
        responseBytes: read
      })
      expect(conn._tally.socketReads).toBeGreaterThanOrEqual(2)
      expect(kind).toMatchObject({ calls: { Get: 4 }, requestFrames: 4, requestBytes: sent, responseFrames: 4, responseBytes: read })
    })
  })

  test('coalescing calls of one loop iteration share a socket write; a call that does not wait takes them along', async () => {
    await withServer(answerAll, async (conn) => {
      const kind = new KindTally()
      const inOnePhase = (coalesce) => new Promise((resolve) => {
        // Two immediates queued in one tick run in one check phase, each its own callback (and
        // tick). Not two timers: each reads the clock when set, so they can fall in two phases.
        const calls = []
        const fire = () => calls.push(conn.call(Get, getRequest, 2000, kind, coalesce))
        setImmediate(fire)
        setImmediate(() => {
          fire()
          resolve(Promise.all(calls))
        })
      })
      const writes = () => conn._tally.socketWrites
      await inOnePhase(false) // warm: the preamble and the first calls
      let before = writes()
      await inOnePhase(false)
      expect(writes() - before).toBe(2) // one write per tick
      before = writes()
      await inOnePhase(true)
      expect(writes() - before).toBe(1) // one for the iteration
      // A call that does not wait, in the tick after a coalescing one: both leave at that tick's end.
      before = writes()
      const waiting = conn.call(Get, getRequest, 2000, kind, true)
      await Promise.resolve()
      const eager = conn.call(Get, getRequest, 2000, kind)
      await Promise.all([waiting, eager])
      expect(writes() - before).toBe(1)
      await nextTurn() // the check-phase uncork finds nothing left to send
      expect(writes() - before).toBe(1)
      expect(kind.requestFrames).toBe(8)
    })
  })

  test('an answer after its call timed out counts on the connection, not the kind', async () => {
    let held = []
    await withServer((socket, calls) => { held = held.concat(calls) }, async (conn) => {
      const kind = new KindTally()
      await expect(conn.call(Get, getRequest, 40, kind)).rejects.toMatchObject({ code: 'HBASE_CALL_TIMEOUT' })
      const late = frameFor(held[0], result('late'))
      conn._onData(late)
      expect(conn._tally).toMatchObject({ responseFrames: 1, responseBytes: late.length })
      expect(kind).toMatchObject({ requestFrames: 1, responseFrames: 0, responseBytes: 0 })
    })
  })

  test('the pool counts per kind and per server and service, across reconnects', async () => {
    await withServer(answerAll, async (_conn, address) => {
      const pool = new ConnectionPool({ user: 'test', connectTimeout: 1000 })
      await Promise.all([
        pool.call(address, 'ClientService', 'Get', getRequest, 2000, 'config'),
        pool.call(address, 'ClientService', 'Get', getRequest, 2000, 'config'),
        pool.call(address, 'ClientService', 'Get', getRequest, 2000, 'log')
      ])
      pool._connections.get(`ClientService@${address}`).close()
      await nextTurn()
      await pool.call(address, 'ClientService', 'Get', getRequest, 2000)
      const stats = pool.traffic.snapshot()
      expect(Object.keys(stats.kinds).sort()).toEqual(['config', 'log', 'other'])
      expect(stats.kinds.config).toMatchObject({ calls: { Get: 2 }, requestFrames: 2, responseFrames: 2 })
      expect(stats.kinds.log.calls).toEqual({ Get: 1 })
      expect(stats.kinds.other.calls).toEqual({ Get: 1 })
      expect(stats.connections).toHaveLength(1)
      // Two connections: each its preamble, then one write per turn with calls.
      expect(stats.connections[0]).toMatchObject({
        server: address, service: 'ClientService', connects: 2, socketWrites: 4, requestFrames: 4, responseFrames: 4
      })
      const bytes = (k) => stats.kinds[k].requestBytes
      expect(bytes('config') + bytes('log') + bytes('other')).toBe(stats.connections[0].requestBytes)
      // A copy: counting goes on without changing what was read.
      stats.kinds.config.calls.Get = 99
      expect(pool.traffic.snapshot().kinds.config.calls.Get).toBe(2)
      await pool.close()
    })
  })

  test('a client view counts its operations under its kind, unless an operation names its own', async () => {
    await withServer(answerAll, async (_conn, address) => {
      const client = createHBaseClient({ bootstrap: address })
      const region = { server: address, spec: getRequest.region }
      client._core.locator.cached = () => region // no meta: the fake server holds every row
      const config = client.withKind('config')
      await config.get('t', 'r')
      await config.get('t', 'r', { kind: 'refresh' })
      await client.get('t', 'r')
      await client.withKind('changes').get('t', 'r')
      const { kinds } = config.trafficStats()
      expect(Object.fromEntries(Object.entries(kinds).map(([k, t]) => [k, t.calls])))
        .toEqual({ config: { Get: 1 }, refresh: { Get: 1 }, other: { Get: 1 }, changes: { Get: 1 } })
      expect(() => client.withKind('')).toThrow(/kind/)
      await config.close()
      expect(client.closed).toBe(true)
    })
  })

  test('a batch sends its kind with every Multi, retries included', async () => {
    const kinds = []
    let calls = 0
    const region = { server: 'rs1', spec: {} }
    const core = {
      options: { operationTimeout: 2000, maxBatchActions: 100 },
      policy: new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: 1000 }),
      locator: { cached: () => region, invalidate () {} },
      pool: {
        async invoke (server, service, method, request, timeout, kind) {
          kinds.push(kind)
          const indexes = request.regionAction[0].action.map((a) => a.index)
          // The first answer leaves out the last action: it is sent again.
          const answered = calls++ === 0 ? indexes.slice(0, -1) : indexes
          return { regionActionResult: [{ resultOrException: answered.map((index) => ({ index })) }] }
        }
      }
    }
    const actions = [0, 1].map((n) => ({ row: Buffer.from(`r${n}`), mutation: {} }))
    await runBatch(/** @type {any} */ (core), 't', actions, undefined, 'log')
    expect(kinds).toEqual(['log', 'log'])
  })

  test('actions on several tables whose regions share a server go in one Multi, a RegionAction per region', async () => {
    const sent = []
    const regionOf = (name) => ({ server: 'rs1', spec: { type: 1, value: Buffer.from(`${name},,1`) } })
    const regions = { t: regionOf('t'), m: regionOf('m') }
    const located = []
    const core = {
      options: { operationTimeout: 2000, maxBatchActions: 100 },
      policy: new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: 1000 }),
      locator: { cached: (table) => { located.push(table); return regions[table] }, invalidate () {} },
      pool: {
        async invoke (server, service, method, request, timeout, kind, coalesce) {
          sent.push({ server, kind, coalesce, regions: request.regionAction.map((ra) => ra.region.value.toString()) })
          const answer = (ra) => ({ resultOrException: ra.action.map((a) => ({ index: a.index })) })
          return { regionActionResult: request.regionAction.map(answer) }
        }
      }
    }
    const actions = [
      { row: Buffer.from('a'), mutation: {} },
      { row: Buffer.from('b'), mutation: {} },
      { row: Buffer.from('m1'), mutation: {}, table: 'm' }
    ]
    const results = await runBatch(/** @type {any} */ (core), 't', actions, undefined, 'log', true)
    expect(results).toEqual([null, null, null])
    expect(located).toEqual(['t', 't', 'm'])
    expect(sent).toEqual([{ server: 'rs1', kind: 'log', coalesce: true, regions: ['t,,1', 'm,,1'] }])
  })
})
