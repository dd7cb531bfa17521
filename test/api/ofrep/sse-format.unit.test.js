'use strict'

// The bytes of a change stream: what an EventSource makes of them (parsed here the way the HTML
// spec says), OFREP's event shape, and the stamps a Last-Event-ID carries back.

const { HEARTBEAT, stampOf, parseStamp, openingBytes, refetchEvent } = require('../../../api/public/ofrep/sse-format')
const { parseSse } = require('../../support/sse-client')
const { ofrepValidators } = require('../../support/ofrep-schema')

const schema = ofrepValidators()
const AT = 1764150000123 // epoch ms

test('a refetch event: an id (the stamp) and OFREP data, dispatched as `message` (no event field)', () => {
  const { blocks, rest } = parseSse(refetchEvent(AT, AT - 5000))
  expect(rest).toBe('')
  expect(blocks).toEqual([{ id: String(AT), data: '{"type":"refetchEvaluation","lastModified":1764149995}' }])
  const data = JSON.parse(blocks[0].data)
  expect(schema.sseEventData(data)).toBeNull()
  expect(Number.isInteger(data.lastModified)).toBe(true) // epoch seconds, as OFREP recommends
})

test('without a known change time there is no lastModified', () => {
  for (const at of [null, NaN, Infinity]) {
    expect(parseSse(refetchEvent(AT, at)).blocks).toEqual([{ id: String(AT), data: '{"type":"refetchEvaluation"}' }])
  }
})

test('the opening: a retry delay and a stamp with no data (sets Last-Event-ID, dispatches nothing)', () => {
  expect(openingBytes(2500.7, AT)).toBe(`retry: 2500\nid: ${AT}\n\n`)
  expect(parseSse(openingBytes(1000, AT)).blocks).toEqual([{ retry: '1000', id: String(AT) }])
})

test('a heartbeat is a comment and a blank line: nothing is dispatched', () => {
  expect(HEARTBEAT).toBe(':\n\n')
  const blocks = parseSse(HEARTBEAT.repeat(3) + refetchEvent(AT)).blocks
  expect(blocks.map((b) => Object.keys(b))).toEqual([['comment'], ['comment'], ['comment'], ['id', 'data']])
})

test('stamps: what a stream writes is what parseStamp reads back; anything else is not ours', () => {
  expect(parseStamp(stampOf(AT + 0.9))).toBe(AT)
  expect(parseStamp(` ${AT} `)).toBe(AT)
  for (const other of [undefined, '', 'evt-1234', '-1', '1e12', '0x10', '1'.repeat(16), '12.5', ['1']]) {
    expect({ other, stamp: parseStamp(/** @type {any} */ (other)) }).toEqual({ other, stamp: null })
  }
})
