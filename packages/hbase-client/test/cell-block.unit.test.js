'use strict'

// KeyValueCodec cell blocks (lib/cell-block.js) against KeyValue bytes built by hand from
// the format's definition, and the frames protocol.js makes with them. No HBase needed.

const protobuf = require('protobufjs')
const { TYPE, KEY_VALUE_CODEC, encodeCellBlock, decodeCellBlock, moveCellsToBlock, attachCells } = require('../lib/cell-block')
const { types, METHODS, encodeCall, connectionPreamble, decodeResponseHeader, decodeResponseBody } = require('../lib/protocol')
const { buildPut, buildDelete } = require('../lib/cells')

const int32 = (n) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b }
const int16 = (n) => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b }
const int64 = (n) => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(n)); return b }
const LATEST = Buffer.from('7fffffffffffffff', 'hex')

/** One KeyValue as KeyValueCodec frames it, from its parts (no tags). */
function handKeyValue ({ row, family, qualifier, timestamp, type, value }) {
  const key = Buffer.concat([int16(row.length), row, Buffer.from([family.length]), family, qualifier, timestamp, Buffer.from([type])])
  const kv = Buffer.concat([int32(key.length), int32(value.length), key, value])
  return Buffer.concat([int32(kv.length), kv])
}

const b = (s) => Buffer.from(s, 'utf8')

describe('encodeCellBlock', () => {
  test('a put without timestamp is the KeyValue bytes, LATEST_TIMESTAMP for the server to stamp', () => {
    const block = encodeCellBlock([{ row: b('row-1'), family: b('l'), qualifier: b('e'), value: b('{"a":1}'), type: TYPE.PUT }])
    expect(block).toEqual(
      handKeyValue({ row: b('row-1'), family: b('l'), qualifier: b('e'), timestamp: LATEST, type: 4, value: b('{"a":1}') })
    )
    // 4 + 4 + 4 + key (2 + 5 + 1 + 1 + 1 + 8 + 1 = 19) + value 7
    expect(block.length).toBe(38)
    expect(block.readInt32BE(0)).toBe(34)
  })

  test('several cells follow each other; timestamps above 2^32, empty qualifier and value, delete types', () => {
    const ts = 1_700_000_000_123
    const cells = [
      { row: b('r'), family: b('f'), qualifier: b('q'), value: b('v'), timestamp: ts, type: TYPE.PUT },
      { row: b('r'), family: b('g'), qualifier: null, value: null, type: TYPE.DELETE_FAMILY },
      { row: b('r'), family: b('f'), qualifier: b('x'), value: Buffer.alloc(0), timestamp: 0, type: TYPE.DELETE_COLUMN }
    ]
    expect(encodeCellBlock(cells)).toEqual(Buffer.concat([
      handKeyValue({ row: b('r'), family: b('f'), qualifier: b('q'), timestamp: int64(ts), type: 4, value: b('v') }),
      handKeyValue({ row: b('r'), family: b('g'), qualifier: Buffer.alloc(0), timestamp: LATEST, type: 14, value: Buffer.alloc(0) }),
      handKeyValue({ row: b('r'), family: b('f'), qualifier: b('x'), timestamp: int64(0), type: 12, value: Buffer.alloc(0) })
    ]))
  })

  test('rows and families longer than a KeyValue can say, and bad timestamps, are bad arguments', () => {
    const cell = { row: b('r'), family: b('f'), qualifier: b('q'), value: b('v'), type: TYPE.PUT }
    expect(() => encodeCellBlock([{ ...cell, row: Buffer.alloc(32768) }])).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
    expect(() => encodeCellBlock([{ ...cell, family: Buffer.alloc(128) }])).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
    expect(() => encodeCellBlock([{ ...cell, timestamp: -1 }])).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
    expect(encodeCellBlock([{ ...cell, row: Buffer.alloc(32767, 1) }]).length).toBe(24 + 32767 + 3)
  })
})

describe('decodeCellBlock', () => {
  test('reads hand-built KeyValues as protobuf-shaped cells, values as views into the frame', () => {
    const big = Buffer.alloc(70000, 9)
    const block = Buffer.concat([
      handKeyValue({ row: b('id-7'), family: b('c'), qualifier: b('json'), timestamp: int64(1_795_000_000_000), type: 4, value: big }),
      handKeyValue({ row: b('id-7'), family: b('c'), qualifier: Buffer.alloc(0), timestamp: int64(5), type: 4, value: Buffer.alloc(0) })
    ])
    const frame = Buffer.concat([b('xyz'), block, b('after')])
    const cells = decodeCellBlock(frame, 3, block.length)
    expect(cells).toHaveLength(2)
    expect(cells[0]).toMatchObject({ row: b('id-7'), family: b('c'), qualifier: b('json'), timestamp: 1_795_000_000_000, cellType: 4 })
    expect(cells[0].value.equals(big)).toBe(true)
    expect(cells[0].value.buffer).toBe(frame.buffer)
    expect(cells[1]).toMatchObject({ qualifier: Buffer.alloc(0), value: Buffer.alloc(0), timestamp: 5 })
  })

  test('round-trips what encodeCellBlock writes', () => {
    const cells = [
      { row: b('a'), family: b('f'), qualifier: b('q1'), value: b('one'), timestamp: 42, type: TYPE.PUT },
      { row: b('b'), family: b('ff'), qualifier: b(''), value: b(''), timestamp: 2 ** 40 + 3, type: TYPE.DELETE }
    ]
    const back = decodeCellBlock(encodeCellBlock(cells))
    expect(back.map((c) => [c.row.toString(), c.family.toString(), c.qualifier.toString(), c.value.toString(), c.timestamp, c.cellType]))
      .toEqual([['a', 'f', 'q1', 'one', 42, 4], ['b', 'ff', '', '', 2 ** 40 + 3, 8]])
  })

  test('tags after a value (never sent over RPC by KeyValueCodec) are skipped', () => {
    const one = handKeyValue({ row: b('r'), family: b('f'), qualifier: b('q'), timestamp: int64(1), type: 4, value: b('v') })
    const tags = Buffer.from([0, 3, 0, 1, 7])
    const withTags = Buffer.concat([int32(one.length - 4 + tags.length), one.subarray(4), tags])
    const cells = decodeCellBlock(Buffer.concat([withTags, one]))
    expect(cells.map((c) => c.value.toString())).toEqual(['v', 'v'])
  })

  test('truncated or inconsistent blocks fail with HBASE_PROTOCOL', () => {
    const one = handKeyValue({ row: b('r'), family: b('f'), qualifier: b('q'), timestamp: int64(1), type: 4, value: b('value') })
    expect(() => decodeCellBlock(one.subarray(0, one.length - 2))).toThrow(expect.objectContaining({ code: 'HBASE_PROTOCOL' }))
    expect(() => decodeCellBlock(one.subarray(0, 10))).toThrow(expect.objectContaining({ code: 'HBASE_PROTOCOL' }))
    const badKey = Buffer.from(one)
    badKey.writeInt32BE(3, 4) // key length shorter than its fixed parts
    expect(() => decodeCellBlock(badKey)).toThrow(expect.objectContaining({ code: 'HBASE_PROTOCOL' }))
    expect(() => decodeCellBlock(one, 0, one.length + 1)).toThrow(expect.objectContaining({ code: 'HBASE_PROTOCOL' }))
  })
})

describe('moveCellsToBlock', () => {
  test('Multi: puts and column/family deletes move, counted per mutation; gets and whole-row deletes stay', () => {
    const put = buildPut(b('p'), { f: { a: '1', b: '2' }, g: { c: '3' } }, { durability: 1 })
    const del = buildDelete(b('d'), { families: ['g'], columns: ['f:a'] })
    const rowDelete = buildDelete(b('w'))
    const get = { row: b('x') }
    const request = {
      regionAction: [
        { region: { type: 1, value: b('r1') }, action: [{ index: 0, mutation: put }, { index: 1, get }] },
        { region: { type: 1, value: b('r2') }, action: [{ index: 2, mutation: del }, { index: 3, mutation: rowDelete }] },
        { region: { type: 1, value: b('r3') }, action: [{ index: 4, get }] }
      ]
    }
    const before = JSON.stringify(request)
    const moved = moveCellsToBlock('Multi', request)
    expect(JSON.stringify(request)).toBe(before) // the caller's request is left as it was
    const [ra1, ra2, ra3] = moved.request.regionAction
    expect(ra1.action[0].mutation).toEqual({ row: b('p'), mutateType: 2, associatedCellCount: 3, durability: 1 })
    expect(ra1.action[1]).toBe(request.regionAction[0].action[1])
    expect(ra2.action[0].mutation).toEqual({ row: b('d'), mutateType: 3, associatedCellCount: 2 })
    expect(ra2.action[1].mutation).toBe(rowDelete)
    expect(ra3).toBe(request.regionAction[2])
    expect(moved.cells.map((c) => [c.row.toString(), c.family.toString(), String(c.qualifier || ''), c.type]))
      .toEqual([
        ['p', 'f', 'a', 4],
        ['p', 'f', 'b', 4],
        ['p', 'g', 'c', 4],
        ['d', 'g', '', TYPE.DELETE_FAMILY],
        ['d', 'f', 'a', TYPE.DELETE_COLUMN]
      ])
  })

  test('Mutate moves its one mutation; cell timestamps fall back to the mutation\'s; other methods are left alone', () => {
    const mutation = {
      ...buildPut(b('p'), [
        { family: 'f', qualifier: 'a', value: 'x', timestamp: 7 },
        { family: 'f', qualifier: 'b', value: 'y' }
      ]),
      timestamp: 9
    }
    const moved = moveCellsToBlock('Mutate', { region: {}, mutation })
    expect(moved.request.mutation).toEqual({ row: b('p'), mutateType: 2, associatedCellCount: 2, timestamp: 9 })
    expect(moved.cells.map((c) => c.timestamp)).toEqual([7, 9])
    const get = { region: {}, get: { row: b('p') } }
    expect(moveCellsToBlock('Get', get)).toEqual({ request: get, cells: [] })
    const onlyGets = { regionAction: [{ region: {}, action: [{ index: 0, get: { row: b('p') } }] }] }
    expect(moveCellsToBlock('Multi', onlyGets).request).toBe(onlyGets)
  })
})

describe('attachCells', () => {
  const cells = ['a', 'b', 'c', 'd', 'e'].map((v) => ({
    row: b('r' + v),
    family: b('f'),
    qualifier: b('q'),
    value: b(v),
    timestamp: 1,
    cellType: 4
  }))

  test('Multi: each Result takes its associated_cell_count, in response order; puts and errors take none', () => {
    const res = {
      regionActionResult: [
        { resultOrException: [{ index: 2, result: { associatedCellCount: 2 } }, { index: 0, result: {} }] },
        { resultOrException: [{ index: 1, exception: { name: 'x' } }, { index: 3, result: { associatedCellCount: 3 } }] }
      ]
    }
    attachCells('Multi', res, cells)
    expect(res.regionActionResult[0].resultOrException[0].result.cell.map((c) => c.value.toString())).toEqual(['a', 'b'])
    expect(res.regionActionResult[0].resultOrException[1].result.cell).toBeUndefined()
    expect(res.regionActionResult[1].resultOrException[1].result.cell.map((c) => c.value.toString())).toEqual(['c', 'd', 'e'])
  })

  test('Scan: cells_per_result and partial flags become Results; Get: its one Result', () => {
    const scan = { cellsPerResult: [1, 3, 1], partialFlagPerResult: [false, true, false], results: [] }
    attachCells('Scan', scan, cells)
    expect(scan.results.map((r) => [r.cell.length, r.partial])).toEqual([[1, false], [3, true], [1, false]])
    const get = { result: { associatedCellCount: 5 } }
    attachCells('Get', get, cells)
    expect(get.result.cell).toHaveLength(5)
  })

  test('counts that do not match the block fail with HBASE_PROTOCOL', () => {
    expect(() => attachCells('Get', { result: { associatedCellCount: 6 } }, cells)).toThrow(
      expect.objectContaining({ code: 'HBASE_PROTOCOL' })
    )
    expect(() => attachCells('Get', { result: { associatedCellCount: 4 } }, cells)).toThrow(
      expect.objectContaining({ code: 'HBASE_PROTOCOL' })
    )
  })
})

describe('frames with cell blocks', () => {
  const readDelimited = (type, buf) => {
    const reader = protobuf.Reader.create(buf)
    const header = types.RequestHeader.decodeDelimited(reader)
    const body = type.decodeDelimited(reader)
    return { header, body, rest: buf.subarray(reader.pos) }
  }

  test('a Multi of puts: header names the block length, the block follows the request in the frame', () => {
    const request = {
      regionAction: [
        {
          region: { type: 1, value: b('r') },
          action: [0, 1].map((i) => ({ index: i, mutation: buildPut(b('row' + i), { l: { e: 'v' + i } }) }))
        }
      ]
    }
    const frame = encodeCall(7, METHODS.ClientService.Multi, request, 1000, true)
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4)
    const { header, body, rest } = readDelimited(types.MultiRequest, frame.subarray(4))
    expect(header.cellBlockMeta.length).toBe(rest.length)
    expect(body.regionAction[0].action.map((a) => [a.mutation.associatedCellCount, a.mutation.columnValue.length])).toEqual([
      [1, 0],
      [1, 0]
    ])
    expect(rest).toEqual(
      encodeCellBlock([0, 1].map((i) => ({ row: b('row' + i), family: b('l'), qualifier: b('e'), value: b('v' + i), type: TYPE.PUT })))
    )
  })

  test('without cell blocks the frame carries the cells inline and no block', () => {
    const request = { region: { type: 1, value: b('r') }, mutation: buildPut(b('row'), { l: { e: 'v' } }) }
    const { header, body, rest } = readDelimited(
      types.MutateRequest,
      encodeCall(1, METHODS.ClientService.Mutate, request, 1000).subarray(4)
    )
    expect(header.cellBlockMeta).toBeNull()
    expect(body.mutation.columnValue[0].qualifierValue[0].value.toString()).toBe('v')
    expect(rest.length).toBe(0)
  })

  test('the connection header names KeyValueCodec only when asked', () => {
    const header = (cellBlocks) => types.ConnectionHeader.decode(connectionPreamble('ClientService', 'me', cellBlocks).subarray(10))
    expect(header(true).cellBlockCodecClass).toBe(KEY_VALUE_CODEC)
    expect(header(false).cellBlockCodecClass).toBe('')
  })

  test('a Get response with a cell block decodes to a Result with its cells', () => {
    const block = encodeCellBlock([{ row: b('r'), family: b('c'), qualifier: b('json'), value: b('{}'), timestamp: 3, type: TYPE.PUT }])
    const writer = protobuf.Writer.create()
    types.ResponseHeader.encodeDelimited({ callId: 5, cellBlockMeta: { length: block.length } }, writer)
    types.GetResponse.encodeDelimited({ result: { associatedCellCount: 1 } }, writer)
    const payload = Buffer.concat([writer.finish(), block])
    const { header, reader } = decodeResponseHeader(payload)
    const res = decodeResponseBody(METHODS.ClientService.Get, header, reader, payload)
    expect(res.result.cell.map((c) => [c.qualifier.toString(), c.value.toString(), c.timestamp])).toEqual([['json', '{}', 3]])
  })
})
