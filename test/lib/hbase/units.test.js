'use strict'

// Pure logic of the HBase client: no HBase needed.

const net = require('node:net')
const protobuf = require('protobufjs')
const { remoteError, CODES, HBaseError } = require('../../../lib/hbase/errors')
const { toBytes, buildPut, buildDelete, columnSelectors, resultToRow } = require('../../../lib/hbase/cells')
const { regionContains, tableNameProto, tableNameString } = require('../../../lib/hbase/locator')
const { types, METHODS, encodeCall } = require('../../../lib/hbase/protocol')
const { Connection } = require('../../../lib/hbase/connection')
const { parseBootstrap } = require('../../../lib/hbase/client')

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
    const row = resultToRow({ cell: [{ row: Buffer.from('r'), family: Buffer.from('f'), qualifier: Buffer.from('q'), value: Buffer.from('v'), timestamp: 5 }] })
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
  function frameFor (callId, message, exception) {
    const writer = types.ResponseHeader.encodeDelimited(exception ? { callId, exception } : { callId })
    if (!exception) types.GetResponse.encodeDelimited(message, writer)
    const body = Buffer.from(writer.finish())
    const out = Buffer.alloc(4 + body.length)
    out.writeUInt32BE(body.length, 0)
    body.copy(out, 4)
    return out
  }

  async function withServer (respond, fn) {
    const server = net.createServer((socket) => {
      let buf = Buffer.alloc(0)
      let preambleSeen = false
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk])
        if (!preambleSeen) {
          if (buf.length < 10) return
          const headerLength = buf.readUInt32BE(6)
          if (buf.length < 10 + headerLength) return
          buf = buf.subarray(10 + headerLength)
          preambleSeen = true
        }
        const calls = []
        while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
          const size = buf.readUInt32BE(0)
          const reader = protobuf.Reader.create(buf.subarray(4, 4 + size))
          calls.push(types.RequestHeader.decodeDelimited(reader).callId)
          buf = buf.subarray(4 + size)
        }
        if (calls.length) respond(socket, calls)
      })
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    const conn = new Connection({ host: '127.0.0.1', port: server.address().port, service: 'ClientService', user: 'test', connectTimeout: 1000 })
    try {
      await fn(conn)
    } finally {
      conn.close()
      server.close()
    }
  }

  const result = (v) => ({ result: { cell: [{ row: Buffer.from('r'), family: Buffer.from('f'), qualifier: Buffer.from('q'), value: Buffer.from(v), timestamp: 1 }] } })

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
      const answers = await Promise.all([1, 2, 3, 4, 5].map(() => conn.call(METHODS.ClientService.Get, { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }, 2000)))
      expect(answers.map((a) => a.result.cell[0].value.toString())).toEqual(['v1', 'v2', 'v3', 'v4', 'v5'])
    })
  })

  test('an exception header rejects only that call, typed', async () => {
    await withServer((socket, calls) => {
      for (const id of calls) {
        socket.write(id === 1
          ? frameFor(id, null, { exceptionClassName: 'org.apache.hadoop.hbase.NotServingRegionException', stackTrace: 'region x not served' })
          : frameFor(id, result('ok')))
      }
    }, async (conn) => {
      const req = { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }
      const [a, b] = await Promise.allSettled([conn.call(METHODS.ClientService.Get, req, 2000), conn.call(METHODS.ClientService.Get, req, 2000)])
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
      const second = await conn.call(METHODS.ClientService.Get, req, 5000).catch((e) => e)
      expect(second.code).toBe('HBASE_CONNECTION')
      expect(conn.closed).toBe(true)
    })
  })

  test('encodeCall frames carry the total length', () => {
    const frame = encodeCall(7, METHODS.ClientService.Get, { region: { type: 1, value: Buffer.from('x') }, get: { row: Buffer.from('r') } }, 1000)
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4)
  })
})
