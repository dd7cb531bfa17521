'use strict'

// The hand-written Multi encoder (lib/multi-encoder.js) against protobufjs: randomized
// requests of puts and gets must encode to the same bytes, frame included, with cells inline and
// in a cell block, and decode back to the request; what it does not cover must fall back to
// protobufjs unchanged. No HBase needed.

const protobuf = require('protobufjs')
const { planMulti } = require('../lib/multi-encoder')
const { types, METHODS, encodeCall } = require('../lib/protocol')
const { TYPE, encodeCellBlock, decodeCellBlock, moveCellsToBlock } = require('../lib/cell-block')
const { toBytes, buildPut, buildGet, buildDelete } = require('../lib/cells')
// A seeded generator (mulberry32), so a failure names the seed of the request that failed.
const { createRandom } = require('./support/random')

const MULTI = METHODS.ClientService.Multi
const LATEST = 2 ** 63 - 1 // what decodeCellBlock reads for LATEST_TIMESTAMP (as a double)

/** Random request material: UTF-8 of 1 to 4 bytes a char, lengths whose varints take 1 to 3 bytes. */
function generator (seed) {
  const rand = createRandom(seed)
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))
  const pick = (xs) => xs[int(0, xs.length - 1)]
  const chance = (p) => rand() < p
  const CHARS = ['a', 'Z', '7', '{', '"', 'é', 'ß', '€', '中', '😀', '\u0000']
  // Long texts and byte strings repeat a random stretch of up to 64: random enough, and quick.
  const text = (chars) => {
    const stretch = Array.from({ length: Math.min(chars, 64) }, () => pick(CHARS)).join('')
    return stretch.repeat(Math.ceil(chars / 64)).slice(0, chars)
  }
  const bytes = (n) => {
    const stretch = Buffer.from(Array.from({ length: Math.min(n, 64) }, () => int(0, 255)))
    return Buffer.alloc(n, stretch.length ? stretch : 0)
  }
  // Most values short (1-byte length), some over 127 (2 bytes), a few over 16383 (3 bytes).
  const valueChars = () => pick([0, int(1, 40), int(1, 40), int(40, 300), int(130, 4000), int(16384, 24000)])
  const value = () => (chance(0.5) ? text(valueChars()) : bytes(valueChars()))
  const row = () => toBytes(chance(0.7) ? text(int(1, 60)) : bytes(int(100, 300)), 'row')
  const timestamp = () => pick([0, int(1, 127), int(128, 2 ** 31), 1_764_000_000_000 + int(0, 1e9), 2 ** 53 - 1])
  const families = ['l', 'c', 'fam', 'ü']
  const qualifiers = ['e', 'json', 'q€', '', 'x'.repeat(130)]

  function put () {
    let cells
    if (chance(0.5)) {
      cells = {}
      for (let f = int(1, 2); f > 0; f--) {
        const columns = (cells[pick(families)] = {})
        for (let q = int(1, 2); q > 0; q--) columns[pick(qualifiers)] = value()
      }
    } else {
      cells = Array.from({ length: int(1, 3) }, () => {
        const cell = { family: pick(families), qualifier: pick(qualifiers), value: value() }
        if (chance(0.5)) cell.timestamp = timestamp()
        return cell
      })
    }
    const mutation = buildPut(row(), cells, chance(0.3) ? { durability: int(0, 4) } : {})
    if (chance(0.2)) mutation.timestamp = timestamp()
    return mutation
  }

  function get () {
    const opts = {}
    if (chance(0.4)) opts.families = [pick(families)]
    if (chance(0.4)) opts.columns = [`${pick(families)}:${pick(qualifiers) || 'q'}`, 'c:other']
    if (chance(0.3)) opts.maxVersions = pick([1, 3, 200])
    const g = buildGet(row(), opts)
    if (chance(0.2)) g.cacheBlocks = chance(0.5)
    if (chance(0.2)) g.existenceOnly = chance(0.5)
    return g
  }

  /** A MultiRequest as batch.js builds one: a RegionAction per region, actions by index. */
  function request () {
    let index = pick([0, 100, 16000, 3_000_000])
    const regionAction = Array.from({ length: int(1, 5) }, () => {
      const ra = {
        region: {
          type: pick([1, 2]),
          value: Buffer.from(`access_log,${text(int(0, 3))},${int(1, 1e13)}.${'0123456789abcdef'.repeat(2)}.`)
        },
        action: Array.from({ length: int(1, 12) }, () => {
          const action = chance(0.9) ? { index: index++ } : {}
          if (chance(0.2)) action.get = get()
          else action.mutation = put()
          return action
        })
      }
      if (chance(0.2)) ra.atomic = chance(0.5)
      return ra
    })
    return { regionAction }
  }

  return { request, int }
}

/** The frame encodeCall wrote before multi-encoder.js: protobufjs, and the block codec for cells. */
function protobufjsFrame (callId, request, timeout, cellBlocks) {
  const moved = cellBlocks ? moveCellsToBlock('Multi', request) : { request, cells: [] }
  const block = moved.cells.length ? encodeCellBlock(moved.cells) : Buffer.alloc(0)
  const header = { callId, methodName: 'Multi', requestParam: true, timeout }
  if (block.length) header.cellBlockMeta = { length: block.length }
  const body = Buffer.concat([
    types.RequestHeader.encodeDelimited(header).finish(),
    types.MultiRequest.encodeDelimited(moved.request).finish(),
    block
  ])
  const length = Buffer.alloc(4)
  length.writeUInt32BE(body.length)
  return Buffer.concat([length, body])
}

/** What planMulti + write produce alone: the delimited request, then the cell block. */
function fastBytes (request, cellBlocks) {
  const plan = planMulti(request, cellBlocks)
  expect(plan).not.toBeNull()
  const buf = Buffer.alloc(plan.length + 3, 0xee)
  expect(plan.write(buf, 3)).toBe(3 + plan.length)
  return { bytes: buf.subarray(3), plan }
}

const asPlain = (message) => types.MultiRequest.toObject(message, { longs: Number })

/**
 * A message as the wire can hold it, for toEqual: no empty repeated fields (a whole family's
 * `qualifier: []` is no field), and bytes as hex (jest compares a Buffer byte by byte, slowly).
 */
function comparable (value) {
  if (Array.isArray(value)) return value.map(comparable)
  if (Buffer.isBuffer(value)) return 'hex:' + value.toString('hex')
  if (!value || typeof value !== 'object') return value
  const out = {}
  for (const [key, v] of Object.entries(value)) if (!(Array.isArray(v) && v.length === 0)) out[key] = comparable(v)
  return out
}

/** Lengths of the bytes fields of a request's puts, as their varints take: 1, 2 or 3 bytes. */
function lengthVarintSizes (request) {
  const sizes = new Set()
  for (const ra of request.regionAction) {
    for (const a of ra.action) {
      for (const cv of (a.mutation && a.mutation.columnValue) || []) {
        for (const qv of cv.qualifierValue) sizes.add(qv.value.length < 128 ? 1 : qv.value.length < 16384 ? 2 : 3)
      }
    }
  }
  return sizes
}

describe('hand-written Multi encoder against protobufjs', () => {
  const SEEDS = Array.from({ length: 150 }, (_, i) => 1000 + i)

  test.each([false, true])('cellBlocks %s: randomized requests encode byte for byte as protobufjs does, frame included', (cellBlocks) => {
    const seen = new Set()
    for (const seed of SEEDS) {
      const { request, int } = generator(seed)
      const req = request()
      for (const n of lengthVarintSizes(req)) seen.add(n)
      const moved = cellBlocks ? moveCellsToBlock('Multi', req) : { request: req, cells: [] }
      const { bytes, plan } = fastBytes(req, cellBlocks)
      const block = moved.cells.length ? encodeCellBlock(moved.cells) : Buffer.alloc(0)
      const expected = Buffer.concat([types.MultiRequest.encodeDelimited(moved.request).finish(), block])
      if (!bytes.equals(expected)) throw new Error(`seed ${seed}: ${bytes.length} bytes differ from protobufjs's ${expected.length}`)
      expect(plan.blockSize).toBe(block.length)
      const callId = int(0, 2 ** 32 - 1)
      const timeout = int(1, 120000)
      if (!encodeCall(callId, MULTI, req, timeout, cellBlocks).equals(protobufjsFrame(callId, req, timeout, cellBlocks))) {
        throw new Error(`seed ${seed}: the frame differs from protobufjs's`)
      }
    }
    // The generator did reach every length-varint size it is meant to.
    expect([...seen].sort()).toEqual([1, 2, 3])
  })

  test('the bytes decode with protobufjs back to the request; with cell blocks, the block to the cells', () => {
    for (const seed of SEEDS.slice(0, 40)) {
      const req = generator(seed).request()
      const inline = protobuf.Reader.create(fastBytes(req, false).bytes)
      expect(comparable(asPlain(types.MultiRequest.decodeDelimited(inline)))).toEqual(comparable(req))

      const moved = moveCellsToBlock('Multi', req)
      const { bytes } = fastBytes(req, true)
      const reader = protobuf.Reader.create(bytes)
      const decoded = asPlain(types.MultiRequest.decodeDelimited(reader))
      expect(comparable(decoded)).toEqual(comparable(moved.request))
      const puts = decoded.regionAction.flatMap((ra) => ra.action).filter((a) => a.mutation)
      expect(puts.length).toBeGreaterThan(0)
      for (const a of puts) {
        expect(a.mutation.columnValue).toBeUndefined()
        expect(a.mutation.associatedCellCount).toBeGreaterThan(0)
      }
      const cells = decodeCellBlock(bytes, reader.pos)
      expect(comparable(cells.map((c) => [c.row, c.family, c.qualifier, c.value, c.timestamp, c.cellType])))
        .toEqual(comparable(moved.cells.map((c) => [c.row, c.family, c.qualifier, c.value, c.timestamp ?? LATEST, TYPE.PUT])))
    }
  })

  test('lengths on each side of the varint boundaries (127/128, 16383/16384, 2^21 - 1/2^21), and the messages around them', () => {
    for (const boundary of [128, 16384, 2 ** 21]) {
      for (let n = boundary - 8; n <= boundary + 1; n++) {
        const value = Buffer.alloc(n, n & 0xff)
        const req = {
          regionAction: [{
            region: { type: 1, value: Buffer.alloc(n & 0x7f, 1) },
            action: [{ index: n, mutation: buildPut(Buffer.from(`r${n}`), [{ family: 'l', qualifier: 'e', value, timestamp: n }]) }]
          }]
        }
        for (const cellBlocks of [false, true]) {
          if (!encodeCall(n, MULTI, req, n, cellBlocks).equals(protobufjsFrame(n, req, n, cellBlocks))) {
            throw new Error(`value of ${n} bytes, cellBlocks ${cellBlocks}: the frame differs`)
          }
        }
      }
    }
  })

  test('the access log\'s shape: one cell l:e a put, values of every length-varint size', () => {
    const values = ['{"ts":1}', 'é'.repeat(100), '€'.repeat(5462), 'x'.repeat(16384), '']
    const req = {
      regionAction: [{
        region: { type: 1, value: Buffer.from('access_log,,1.abc.') },
        action: values.map((v, i) => ({ index: i, mutation: buildPut(toBytes(`0${i}1764000000000w1-${i}`), { l: { e: v } }) }))
      }]
    }
    for (const cellBlocks of [false, true]) {
      expect(encodeCall(9, MULTI, req, 60000, cellBlocks)).toEqual(protobufjsFrame(9, req, 60000, cellBlocks))
    }
  })
})

describe('what the hand-written encoder does not cover goes to protobufjs', () => {
  const region = { type: 1, value: Buffer.from('t,,1.r.') }
  const put = () => buildPut(Buffer.from('row'), { l: { e: 'v' } })
  const multi = (action, extra = {}) => ({ regionAction: [{ region, action: [{ index: 0, ...action }] }], ...extra })

  test.each([
    ['a delete', multi({ mutation: buildDelete(Buffer.from('row'), { families: ['l'] }) })],
    ['a whole-row delete', multi({ mutation: buildDelete(Buffer.from('row')) })],
    ['a get with a time range', multi({ get: { row: Buffer.from('row'), timeRange: { from: 1, to: 5 } } })],
    ['a nonce group', multi({ mutation: put() }, { nonceGroup: 7 })],
    ['a Long timestamp', multi({ mutation: { ...put(), timestamp: protobuf.util.Long.fromNumber(5, true) } })],
    ['a negative durability (10-byte varint)', multi({ mutation: { ...put(), durability: -1 } })],
    ['an index that is not an integer', multi({ index: 1.5, mutation: put() })],
    ['a timestamp past 2^53', multi({ mutation: { ...put(), timestamp: 2 ** 60 } })],
    [
      'a string as bytes (base64 to protobufjs)',
      { regionAction: [{ region: { type: 1, value: 'AAEC' }, action: [{ index: 0, mutation: put() }] }] }
    ],
    ['a Uint8Array row', multi({ mutation: { ...put(), row: new Uint8Array([1, 2, 3]) } })],
    ['a put already counting cells', multi({ mutation: { row: Buffer.from('r'), mutateType: 2, associatedCellCount: 0 } })]
  ])('%s', (name, request) => {
    expect(planMulti(request, false)).toBeNull()
    expect(planMulti(request, true)).toBeNull()
    expect(encodeCall(3, MULTI, request, 1000, false)).toEqual(protobufjsFrame(3, request, 1000, false))
  })

  test('one delete among puts sends the whole request through protobufjs, cell block included', () => {
    const request = {
      regionAction: [
        {
          region,
          action: [
            { index: 0, mutation: put() },
            { index: 1, mutation: buildDelete(Buffer.from('row'), { columns: ['l:e'] }) }
          ]
        }
      ]
    }
    expect(planMulti(request, true)).toBeNull()
    expect(encodeCall(4, MULTI, request, 1000, true)).toEqual(protobufjsFrame(4, request, 1000, true))
  })

  test('a row too long for a cell block is a bad argument with cell blocks, as before, and fine inline', () => {
    const request = multi({ mutation: buildPut(Buffer.alloc(32768, 1), { l: { e: 'v' } }) })
    expect(() => encodeCall(5, MULTI, request, 1000, true)).toThrow(expect.objectContaining({ code: 'HBASE_BAD_ARGUMENT' }))
    expect(encodeCall(5, MULTI, request, 1000, false)).toEqual(protobufjsFrame(5, request, 1000, false))
  })

  test('an empty request and a put without cells (which stays inline) match too', () => {
    const noCells = { row: Buffer.from('r'), mutateType: 2, columnValue: [{ family: Buffer.from('l'), qualifierValue: [] }] }
    for (const request of [{}, { regionAction: [] }, multi({ mutation: noCells })]) {
      for (const cellBlocks of [false, true]) {
        expect(planMulti(request, cellBlocks)).not.toBeNull()
        expect(encodeCall(6, MULTI, request, 1000, cellBlocks)).toEqual(protobufjsFrame(6, request, 1000, cellBlocks))
      }
    }
  })
})
