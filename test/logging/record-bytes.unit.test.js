'use strict'

// An entry's record encoded once (logging/hbase-sink/journal/record-bytes.js): the line is the journal's record
// format byte for byte, and the row key and value the put sends are views of it.

const { createRecordEncoder, rowOf, valueOf, lineText, ownBytes } = require('../../logging/hbase-sink/journal/record-bytes')
const { formatRecord, parseRecord } = require('../../logging/hbase-sink/journal')
const { accessEntry, serializeEntry } = require('../../logging/access-entry')

const entry = (ua) => serializeEntry(accessEntry({ ts: 1764201600000, endpoint: 'sample5', id: '42', status: 200, ms: 0.25, ua }))

test('the line is the journal record and its newline; the row key and the value are views of it', () => {
  const encode = createRecordEncoder()
  const key = '03-1764201600000-w1-17'
  const value = entry('Mozilla/5.0')
  const record = { key, line: encode(key, value) }
  expect(record.line.equals(Buffer.from(formatRecord(key, value) + '\n'))).toBe(true)
  expect(rowOf(record.key, record.line).toString()).toBe(key)
  expect(valueOf(record.key, record.line).toString()).toBe(value)
  expect(lineText(record.line)).toBe(formatRecord(key, value))
  expect(parseRecord(lineText(record.line), true)).toEqual({ key, value })
  // Views, not copies: they share the line's memory.
  expect(valueOf(record.key, record.line).buffer).toBe(record.line.buffer)
})

test('values beyond ASCII (escaped or not, astral too) come back whole, byte for byte', () => {
  const encode = createRecordEncoder()
  for (const ua of ['Zoë’s браузер 浏览器', 'emoji 🚀 and \u2028 and "quotes" \\ and \u0001', '\ud800 lone']) {
    const key = 'k-' + ua.length
    const value = entry(ua)
    const record = { key, line: encode(key, value) }
    expect(valueOf(record.key, record.line).toString()).toBe(value)
    expect(JSON.parse(valueOf(record.key, record.line).toString()).ua).toBe(JSON.parse(value).ua)
    expect(record.line.equals(Buffer.from(formatRecord(key, value) + '\n'))).toBe(true)
  }
})

test('records fill one slab after another; every earlier record keeps its bytes', () => {
  const encode = createRecordEncoder()
  const records = []
  for (let i = 0; i < 2000; i++) {
    const key = `${String(i % 16).padStart(2, '0')}-1764201600000-w1-${i}`
    const value = entry('agent ' + 'x'.repeat(i % 300))
    records.push({ key, value, line: encode(key, value) })
  }
  // 2,000 records of up to ~500 bytes take many 64 KiB slabs.
  expect(new Set(records.map((r) => r.line.buffer)).size).toBeGreaterThan(5)
  for (const r of records) {
    expect(rowOf(r.key, r.line).toString()).toBe(r.key)
    expect(valueOf(r.key, r.line).toString()).toBe(r.value)
  }
})

test('a record too long for a slab gets bytes of its own', () => {
  const encode = createRecordEncoder()
  const key = 'long'
  const value = JSON.stringify({ ua: '\u0001'.repeat(2000) }) // escaped: 6 chars each
  const record = { key, line: encode(key, value) }
  expect(valueOf(record.key, record.line).toString()).toBe(value)
  expect(record.line.byteOffset).toBe(0)
  expect(record.line.length).toBe(Buffer.byteLength(formatRecord(key, value)) + 1)
})

test('ownBytes moves a line out of its slab (an entry waiting for a retry holds no slab)', () => {
  const encode = createRecordEncoder()
  const line = encode('k1', '{"a":1}')
  encode('k2', '{"a":2}')
  const own = ownBytes(line)
  expect(own.equals(line)).toBe(true)
  expect(own.buffer).not.toBe(line.buffer)
  expect(own.buffer.byteLength).toBe(line.length)
  expect(ownBytes(own)).toBe(own) // already its own: no copy
})
