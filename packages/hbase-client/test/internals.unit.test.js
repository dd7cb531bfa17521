'use strict'

const fs = require('node:fs')

// Pure logic of the HBase client: no HBase needed.

const { remoteError, CODES, HBaseError, mayHaveApplied } = require('../lib/errors')
const { toBytes, buildPut, buildDelete, columnSelectors, resultToRow } = require('../lib/cells')
const { regionContains, tableNameProto, tableNameString } = require('../lib/meta')
const { METHODS, encodeCall } = require('../lib/protocol')
const { ConnectionPool } = require('../lib/pool')
const { RetryPolicy, BACKOFF, LAST_TRY_MS } = require('../lib/retry')
const { OperationGate } = require('../lib/lifecycle')
const { chunks, runBatch } = require('../lib/batch')
const { parseBootstrap } = require('../lib/client')
const { frameFor, withServer, result, getRequest } = require('./support/fake-regionserver')

describe('remote error classification', () => {
  test.each([
    ['org.apache.hadoop.hbase.NotServingRegionException', 'HBASE_REGION_UNAVAILABLE', true, true],
    ['org.apache.hadoop.hbase.exceptions.RegionMovedException', 'HBASE_REGION_UNAVAILABLE', true, true],
    ['org.apache.hadoop.hbase.RegionTooBusyException', 'HBASE_SERVER_BUSY', true, false],
    ['org.apache.hadoop.hbase.TableNotFoundException', 'HBASE_TABLE_NOT_FOUND', false, false],
    ['org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException', 'HBASE_NO_SUCH_FAMILY', false, false],
    ['org.apache.hadoop.hbase.UnknownScannerException', 'HBASE_SCANNER_EXPIRED', true, false],
    ['org.apache.hadoop.hbase.DoNotRetryIOException', 'HBASE_REMOTE', false, false],
    ['java.io.IOException', 'HBASE_REMOTE', true, false]
  ])('%s → %s', (cls, code, retryable, relocate) => {
    const err = remoteError(cls, `${cls}: details\n\tat stack`)
    expect(err).toBeInstanceOf(HBaseError)
    expect(err.code).toBe(code)
    expect(err.retryable).toBe(retryable)
    expect(err.relocate).toBe(relocate)
    expect(err.message).not.toContain('\tat')
    expect(CODES[code]).toBeTruthy()
  })

  test('do_not_retry from the server wins for unknown classes', () => {
    expect(remoteError('java.io.IOException', 'x', { doNotRetry: true }).retryable).toBe(false)
  })

  test('the library owns only HBase codes (no application codes such as a circuit breaker\'s)', () => {
    expect(Object.keys(CODES).every((code) => code.startsWith('HBASE_'))).toBe(true)
    expect(CODES.HBASE_CIRCUIT_OPEN).toBeUndefined()
    expect(remoteError('org.apache.hadoop.hbase.UnknownScannerException', 'x')).not.toHaveProperty('restartScan')
  })
})

describe('cells', () => {
  test('toBytes accepts Buffer, string (UTF-8), number; rejects others', () => {
    expect(toBytes(Buffer.from([1]))).toEqual(Buffer.from([1]))
    expect(toBytes('é')).toEqual(Buffer.from([0xc3, 0xa9]))
    expect(toBytes(42)).toEqual(Buffer.from('42'))
    expect(() => toBytes({})).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
  })

  test('buildPut groups qualifiers by family, from object or array form', () => {
    const fromObject = buildPut(Buffer.from('r'), { f: { a: '1', b: '2' }, g: { c: '3' } })
    const fromArray = buildPut(Buffer.from('r'), [
      { family: 'f', qualifier: 'a', value: '1' }, { family: 'f', qualifier: 'b', value: '2' }, { family: 'g', qualifier: 'c', value: '3' }
    ])
    expect(fromArray).toEqual(fromObject)
    expect(fromObject.columnValue.map((cv) => [cv.family.toString(), cv.qualifierValue.length])).toEqual([['f', 2], ['g', 1]])
    expect(() => buildPut(Buffer.from('r'), {})).toThrow(/at least one cell/)
  })

  test('buildDelete: whole row, families, columns', () => {
    expect(buildDelete(Buffer.from('r')).columnValue).toEqual([])
    const d = buildDelete(Buffer.from('r'), { families: ['f'], columns: ['g:q'] })
    expect(d.columnValue.map((cv) => cv.family.toString())).toEqual(['f', 'g'])
    expect(() => buildDelete(Buffer.from('r'), { columns: ['noqualifier'] })).toThrow(/family:qualifier/)
  })

  test('columnSelectors merges families and columns; a whole family wins', () => {
    const sel = columnSelectors({ families: ['f'], columns: ['f:a', 'g:b', 'g:c'] })
    expect(sel.map((c) => [c.family.toString(), c.qualifier.map(String)])).toEqual([['f', []], ['g', ['b', 'c']]])
    expect(columnSelectors({})).toBeUndefined()
  })

  test('resultToRow: null for no cells; decodes timestamps', () => {
    expect(resultToRow(null)).toBeNull()
    expect(resultToRow({ cell: [] })).toBeNull()
    const row = resultToRow({
      cell: [{ row: Buffer.from('r'), family: Buffer.from('f'), qualifier: Buffer.from('q'), value: Buffer.from('v'), timestamp: 5 }]
    })
    expect(row).toEqual({ row: Buffer.from('r'), cells: [{ family: 'f', qualifier: 'q', value: Buffer.from('v'), timestamp: 5 }] })
  })
})

describe('regions and table names', () => {
  const region = (start, end) => ({ startKey: Buffer.from(start), endKey: Buffer.from(end) })
  test('regionContains treats an empty end key as unbounded', () => {
    expect(regionContains(region('', ''), Buffer.from('anything'))).toBe(true)
    expect(regionContains(region('b', 'd'), Buffer.from('b'))).toBe(true)
    expect(regionContains(region('b', 'd'), Buffer.from('d'))).toBe(false)
    expect(regionContains(region('b', ''), Buffer.from('a'))).toBe(false)
  })
  test('table names with and without namespace', () => {
    expect(tableNameString(tableNameProto('t1'))).toBe('t1')
    expect(tableNameProto('ns:t1').namespace.toString()).toBe('ns')
    expect(tableNameString(tableNameProto('ns:t1'))).toBe('ns:t1')
  })
  test('bootstrap lists are validated', () => {
    expect(parseBootstrap('a:1, b:2')).toEqual(['a:1', 'b:2'])
    expect(() => parseBootstrap('a')).toThrow(/host:port/)
    expect(() => parseBootstrap('')).toThrow(/at least one/)
  })
})

describe('connection framing over a real socket', () => {
  // A tiny server that speaks the response side of the HBase framing and answers every
  // call in adversarial chunking (byte by byte, or several frames glued together).
  test('responses split byte by byte and glued together, out of order, all resolve correctly', async () => {
    await withServer((socket, calls) => {
      const frames = Buffer.concat(calls.reverse().map((id) => frameFor(id, result(`v${id}`))))
      let i = 0
      const drip = () => {
        if (i >= frames.length) return
        const n = i < 40 ? 1 : 7
        socket.write(frames.subarray(i, i + n))
        i += n
        setImmediate(drip)
      }
      drip()
    }, async (conn) => {
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map(() =>
          conn.call(METHODS.ClientService.Get, { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }, 2000)
        )
      )
      expect(answers.map((a) => a.result.cell[0].value.toString())).toEqual(['v1', 'v2', 'v3', 'v4', 'v5'])
    })
  })

  test('an exception header rejects only that call, typed', async () => {
    await withServer((socket, calls) => {
      for (const id of calls) {
        socket.write(id === 1
          ? frameFor(id, null, {
            exceptionClassName: 'org.apache.hadoop.hbase.NotServingRegionException',
            stackTrace: 'region x not served'
          })
          : frameFor(id, result('ok')))
      }
    }, async (conn) => {
      const req = { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }
      const [a, b] = await Promise.allSettled([
        conn.call(METHODS.ClientService.Get, req, 2000),
        conn.call(METHODS.ClientService.Get, req, 2000)
      ])
      expect(a.reason.code).toBe('HBASE_REGION_UNAVAILABLE')
      expect(a.reason.relocate).toBe(true)
      expect(b.value.result.cell[0].value.toString()).toBe('ok')
    })
  })

  test('a call with no answer times out; a dropped connection fails pending calls', async () => {
    await withServer((socket, calls) => {
      if (calls.includes(2)) socket.destroy()
    }, async (conn) => {
      const req = { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }
      const first = await conn.call(METHODS.ClientService.Get, req, 100).catch((e) => e)
      expect(first.code).toBe('HBASE_CALL_TIMEOUT')
      // A silent server may be a frozen one whose regions were reassigned: look them up again.
      expect(first.relocate).toBe(true)
      const second = await conn.call(METHODS.ClientService.Get, req, 5000).catch((e) => e)
      expect(second.code).toBe('HBASE_CONNECTION')
      expect(conn.closed).toBe(true)
    })
  })

  test('a deadline passed while the event loop was held up: the closed socket read meanwhile decides, not the timer', async () => {
    /** @type {(socket: import('node:net').Socket) => void} */
    let received = () => {}
    const serverHasCall = new Promise((resolve) => { received = resolve })
    await withServer((socket) => received(socket), async (conn) => {
      const call = conn.call(METHODS.ClientService.Get, getRequest, 40).catch((e) => e)
      const serverSocket = await serverHasCall
      serverSocket.destroy() // the server goes away...
      // ...while this process is busy past the call's deadline, until the kernel holds the
      // server's FIN for the client's socket (CLOSE_WAIT in /proc/net/tcp: on a loaded machine
      // its delivery can itself wait for a CPU).
      const held = Date.now() + 200
      while (Date.now() < held || !finReceived(conn.socket.localPort));
      expect((await call).code).toBe('HBASE_CONNECTION')
    })
  })

  /** Whether the local TCP socket on `port` has received its peer's FIN (state 08, CLOSE_WAIT). */
  function finReceived (port) {
    const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')} `
    return fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').some((line) => {
      const [, local, , state] = line.trim().split(/\s+/)
      return local !== undefined && `${local} `.endsWith(hex) && state === '08'
    })
  }

  test('a short call behind a long one still times out on time', async () => {
    await withServer(() => {}, async (conn) => {
      const long = conn.call(METHODS.ClientService.Get, getRequest, 5000).catch((e) => e)
      const short = conn.call(METHODS.ClientService.Get, getRequest, 40).catch((e) => e)
      // Swept at a quarter of its own timeout, not of the long call's (capped at 250 ms): a check of
      // the interval, not of the wall clock, which a loaded machine stretches.
      expect(conn._sweepEvery).toBe(10)
      expect((await short).code).toBe('HBASE_CALL_TIMEOUT')
      conn.close()
      expect((await long).code).toBe('HBASE_CONNECTION')
    })
  })

  test('end() refuses new calls, lets the pending one be answered, then closes', async () => {
    await withServer((socket, calls) => {
      setTimeout(() => { for (const id of calls) socket.write(frameFor(id, result('late'))) }, 100)
    }, async (conn) => {
      const pending = conn.call(METHODS.ClientService.Get, getRequest, 2000)
      await new Promise((resolve) => setTimeout(resolve, 20))
      const ended = conn.end()
      expect(conn.end()).toBeInstanceOf(Promise)
      await expect(conn.call(METHODS.ClientService.Get, getRequest, 2000)).rejects.toMatchObject({ code: 'HBASE_CONNECTION' })
      expect((await pending).result.cell[0].value.toString()).toBe('late')
      await ended
      expect(conn.closed).toBe(true)
    })
  })

  test('close(reason) fails pending calls with that reason', async () => {
    await withServer(() => {}, async (conn) => {
      const pending = conn.call(METHODS.ClientService.Get, getRequest, 5000)
      conn.close(new HBaseError('HBASE_CLIENT_CLOSED', 'gone'))
      await expect(pending).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    })
  })

  test('pool: close() waits for answers; destroy() rejects pending calls with HBASE_CLIENT_CLOSED', async () => {
    await withServer((socket, calls) => {
      setTimeout(() => { for (const id of calls) socket.write(frameFor(id, result('ok'))) }, 100)
    }, async (_conn, address) => {
      const events = []
      const pool = new ConnectionPool({ user: 'test', connectTimeout: 1000, onRpc: (e) => events.push(e) })
      const pending = pool.call(address, 'ClientService', 'Get', getRequest, 2000)
      const closing = pool.close()
      await expect(pool.call(address, 'ClientService', 'Get', getRequest, 2000)).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
      expect((await pending).result.cell[0].value.toString()).toBe('ok')
      await closing
      expect(events.map((e) => e.method)).toEqual(['Get'])
    })
    await withServer(() => {}, async (_conn, address) => {
      const lost = []
      const pool = new ConnectionPool({ user: 'test', connectTimeout: 1000, onServerLost: (a) => lost.push(a) })
      const pending = pool.invoke(address, 'ClientService', 'Get', getRequest, 5000)
      await new Promise((resolve) => setTimeout(resolve, 20))
      pool.destroy()
      pool.destroy()
      await expect(pending).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
      expect(lost).toEqual([]) // not a lost server: the pool was destroyed
    })
  })

  test('encodeCall frames carry the total length', () => {
    const frame = encodeCall(
      7,
      METHODS.ClientService.Get,
      { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } },
      1000
    )
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4)
  })
})

describe('retry policy', () => {
  afterEach(() => jest.restoreAllMocks())

  test('pauses follow HBase\'s backoff schedule, ×3 when the server is overloaded, capped by maxPause', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0)
    const policy = new RetryPolicy({ pause: 10, maxPause: 500, rpcTimeout: 100 })
    expect(BACKOFF.slice(0, 4).map((_, n) => policy.pause(n))).toEqual([10, 20, 30, 50])
    expect(policy.pause(1, { serverOverloaded: true })).toBe(60)
    expect(policy.pause(99)).toBe(500)
  })

  test('rpcTimeout is the smaller of rpcTimeout and what is left, at least 1 ms', () => {
    const policy = new RetryPolicy({ pause: 10, maxPause: 500, rpcTimeout: 100 })
    expect(policy.rpcTimeout(Date.now() + 10000)).toBe(100)
    expect(policy.rpcTimeout(Date.now() + 50)).toBeLessThanOrEqual(50)
    expect(policy.rpcTimeout(Date.now() - 10)).toBe(1)
  })

  test('retry: retryable errors are retried, others pass through, the deadline ends it with HBASE_TIMEOUT', async () => {
    const policy = new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: 100 })
    const busy = new HBaseError('HBASE_SERVER_BUSY', 'busy', { retryable: true })
    let n = 0
    expect(await policy.retry('op', Date.now() + 1000, async () => { if (++n < 3) throw busy; return 'done' })).toBe('done')
    expect(n).toBe(3)
    const fatal = new HBaseError('HBASE_NO_SUCH_FAMILY', 'nope')
    await expect(policy.retry('op', Date.now() + 1000, async () => { throw fatal })).rejects.toBe(fatal)
    const err = await policy.retry('op', Date.now() + 30, async () => { throw busy }).catch((e) => e)
    expect(err.code).toBe('HBASE_TIMEOUT')
    expect(err.cause).toBe(busy)
  })

  test('when the backoff would end past the deadline, one last attempt still runs before it', async () => {
    const policy = new RetryPolicy({ pause: 1000, maxPause: 1000, rpcTimeout: 100 })
    const busy = new HBaseError('HBASE_REGION_UNAVAILABLE', 'opening', { retryable: true })
    const started = Date.now()
    let n = 0
    // What it waits, not the wall clock (a loaded machine runs the timer late): not the 1 s backoff.
    const waits = []
    const sleep = policy.sleep.bind(policy)
    jest.spyOn(policy, 'sleep').mockImplementation((ms) => { waits.push(ms); return sleep(ms) })
    // A full 1 s backoff would give up at once; the last try, just before the deadline, succeeds.
    expect(await policy.retry('op', started + 400, async () => { if (++n === 1) throw busy; return 'done' })).toBe('done')
    expect(n).toBe(2)
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeLessThanOrEqual(400 - LAST_TRY_MS)
    expect(policy.waitBefore(0, undefined, Date.now() + 400)).toBeLessThanOrEqual(400 - LAST_TRY_MS)
    expect(policy.waitBefore(0, undefined, Date.now() + LAST_TRY_MS)).toBeNull()
  })

  test('an aborted signal ends a backoff wait at once with HBASE_CLIENT_CLOSED', async () => {
    const abort = new AbortController()
    const policy = new RetryPolicy({ pause: 5000, maxPause: 5000, rpcTimeout: 100, signal: abort.signal })
    const busy = new HBaseError('HBASE_SERVER_BUSY', 'busy', { retryable: true })
    const started = Date.now()
    const pending = policy.retry('op', Date.now() + 60000, async () => { throw busy }).catch((e) => e)
    setTimeout(() => abort.abort(), 20)
    const err = await pending
    expect(err.code).toBe('HBASE_CLIENT_CLOSED')
    expect(Date.now() - started).toBeLessThan(1000)
  })
})

describe('operation gate (client lifecycle)', () => {
  test('drain() refuses new operations and resolves when the last one in flight ends', async () => {
    const gate = new OperationGate()
    let finish
    const running = gate.run(() => new Promise((resolve) => { finish = resolve }))
    expect(gate.active).toBe(1)
    let drained = false
    const draining = gate.drain().then(() => { drained = true })
    await expect(gate.run(async () => 'late')).rejects.toMatchObject({ code: 'HBASE_CLIENT_CLOSED' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(drained).toBe(false)
    finish('done')
    expect(await running).toBe('done')
    await draining
    expect(gate.active).toBe(0)
  })

  test('abort() resolves a pending drain() and turns failures of operations in flight into HBASE_CLIENT_CLOSED', async () => {
    const gate = new OperationGate()
    let fail
    const running = gate.run(() => new Promise((resolve, reject) => { fail = reject })).catch((e) => e)
    gate.enter() // an operation that never ends, like a scan its consumer left
    const draining = gate.drain()
    gate.abort()
    gate.abort()
    await draining
    expect(gate.signal.aborted).toBe(true)
    fail(new HBaseError('HBASE_CONNECTION', 'lost', { retryable: true }))
    const err = await running
    expect(err.code).toBe('HBASE_CLIENT_CLOSED')
    expect(err.cause.code).toBe('HBASE_CONNECTION')
  })
})

describe('batch chunking', () => {
  test('no Multi RPC carries more than maxBatchActions actions; a large region is split', () => {
    const a = { name: 'a' }
    const b = { name: 'b' }
    const out = chunks([{ region: a, indexes: [0, 1, 2, 3, 4] }, { region: b, indexes: [5, 6] }], 3)
    expect(out.map((c) => c.map((g) => [g.region.name, g.indexes]))).toEqual([
      [['a', [0, 1, 2]]],
      [['a', [3, 4]]],
      [['b', [5, 6]]]
    ])
    expect(chunks([{ region: a, indexes: [0] }, { region: b, indexes: [1] }], 3)).toHaveLength(1)
  })
})

describe('batch results', () => {
  // A RegionServer that answers only some of a region's actions: the others must be sent again,
  // never counted as written (a Multi response is the only word that a put landed).
  test('an action missing from a Multi response is retried, not taken as written', async () => {
    const region = { server: 'rs1', spec: {} }
    const sent = []
    const core = {
      options: { operationTimeout: 2000, maxBatchActions: 100 },
      policy: new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: 1000 }),
      locator: { cached: () => region, invalidate () {} },
      pool: {
        async invoke (server, service, method, request) {
          const indexes = request.regionAction[0].action.map((a) => a.index)
          sent.push(indexes)
          // First round: index 1 has no result. Later rounds: all answered.
          const answered = sent.length === 1 ? indexes.filter((i) => i !== 1) : indexes
          return { regionActionResult: [{ resultOrException: answered.map((index) => ({ index })) }] }
        }
      }
    }
    const actions = [0, 1, 2].map((n) => ({ row: Buffer.from(`r${n}`), mutation: {} }))
    const results = await runBatch(/** @type {any} */ (core), 't', actions)
    expect(sent).toEqual([[0, 1, 2], [1]])
    expect(results).toEqual([null, null, null])

    sent.length = 0
    core.pool.invoke = async (server, service, method, request) => {
      const indexes = request.regionAction[0].action.map((a) => a.index)
      sent.push(indexes)
      return { regionActionResult: [{ resultOrException: indexes.filter((i) => i !== 2).map((index) => ({ index })) }] }
    }
    const never = await runBatch(/** @type {any} */ (core), 't', actions, 600)
    expect(never[0]).toBeNull()
    expect(never[2]).toMatchObject({ code: 'HBASE_TIMEOUT', retryable: true })
    expect(never[2].cause.code).toBe('HBASE_PROTOCOL')
    expect(sent.length).toBeGreaterThan(1)
  })

  // Whether a failed put may have landed: sent and unanswered (an RPC timeout, a connection lost
  // with the call out) may have; a connection that never opened, or the server's refusal, not.
  test('a final error says whether any attempt may have been applied', async () => {
    const region = { server: 'rs1', spec: {} }
    const attempts = []
    const core = {
      options: { operationTimeout: 2000, maxBatchActions: 100 },
      policy: new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: 1000 }),
      locator: { cached: () => region, invalidate () {} },
      pool: {
        async invoke () {
          const next = attempts.shift()
          if (next instanceof Error) throw next
          return next
        }
      }
    }
    const actions = [0, 1].map((n) => ({ row: Buffer.from(`r${n}`), mutation: {} }))
    const timeout = () => new HBaseError('HBASE_CALL_TIMEOUT', 'no answer', { retryable: true })
    const refused = () => Object.assign(new HBaseError('HBASE_CONNECTION', 'refused', { retryable: true }), { unsent: true })
    const busy = { regionActionResult: [{ exception: { name: 'org.apache.hadoop.hbase.RegionTooBusyException' } }] }
    const gone = { regionActionResult: [{ exception: { name: 'org.apache.hadoop.hbase.TableNotFoundException' } }] }

    attempts.push(refused(), refused(), refused(), refused(), refused(), refused(), refused(), refused())
    for (const err of await runBatch(/** @type {any} */ (core), 't', actions, 60)) {
      expect(err).toMatchObject({ code: 'HBASE_TIMEOUT', outcomeUnknown: false })
      expect(mayHaveApplied(err)).toBe(false)
    }
    // One unanswered attempt among refusals and a server's refusal: the outcome stays unknown.
    attempts.length = 0
    attempts.push(busy, timeout(), refused(), busy, gone)
    const results = await runBatch(/** @type {any} */ (core), 't', actions)
    expect(results.map((err) => [err.code, err.outcomeUnknown, mayHaveApplied(err)]))
      .toEqual([['HBASE_TABLE_NOT_FOUND', true, true], ['HBASE_TABLE_NOT_FOUND', true, true]])
    expect(results[0]).not.toBe(results[1]) // each action its own copy of the group's error
    attempts.length = 0
    attempts.push(gone)
    for (const err of await runBatch(/** @type {any} */ (core), 't', actions)) expect(mayHaveApplied(err)).toBe(false)
    // Errors outside a batch say it for their own RPC.
    expect([timeout(), refused(), new HBaseError('HBASE_CONNECTION', 'lost', { retryable: true })].map(mayHaveApplied))
      .toEqual([true, false, true])
    expect(mayHaveApplied(remoteError('org.apache.hadoop.hbase.RegionTooBusyException', ''))).toBe(false)
    expect(mayHaveApplied(null)).toBe(false)
  })
})

describe('scan: joining partial results', () => {
  const { joinPartials } = require('../lib/scan')
  const cell = (row, q) => ({
    row: Buffer.from(row),
    family: Buffer.from('f'),
    qualifier: Buffer.from(q),
    value: Buffer.alloc(0),
    timestamp: 1
  })
  const names = (rows) => rows.map((r) => `${r.row}:${r.cells.map((c) => c.qualifier).join('')}`)

  test('parts of one row are joined, across responses too', () => {
    const rows = []
    const left = joinPartials([{ cell: [cell('a', '1')], partial: true }], null, rows, false)
    expect(rows).toEqual([])
    expect(
      joinPartials([{ cell: [cell('a', '2')], partial: true }, { cell: [cell('a', '3')] }, { cell: [cell('b', '1')] }], left, rows, false)
    ).toBeNull()
    expect(names(rows)).toEqual(['a:123', 'b:1'])
  })

  test('a partial row followed by another row, or by the end of its region, is a row of its own', () => {
    const rows = []
    let left = joinPartials([{ cell: [cell('a', '1')], partial: true }, { cell: [cell('b', '1')], partial: true }], null, rows, false)
    expect(names(rows)).toEqual(['a:1'])
    left = joinPartials([{ cell: [cell('c', '1')], partial: true }], left, rows, false)
    expect(names(rows)).toEqual(['a:1', 'b:1'])
    expect(joinPartials([], left, rows, true)).toBeNull()
    expect(names(rows)).toEqual(['a:1', 'b:1', 'c:1'])
  })
})
