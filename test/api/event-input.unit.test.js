'use strict'

// What a page may send as events, checked strictly: every wrong type and shape is refused with
// a shared, input-free error; a valid batch comes back as { id, event, variant }.

const fc = require('fast-check')
const { parseEventBody, parseEventQuery, isEventMediaType, MAX_VARIANT_LENGTH } = require('../../api/public/event-input')

const RULES = { names: new Set(['exposure', 'click']), maxEvents: 3, maxIdLength: 64 }
const body = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8')

describe('POST bodies', () => {
  test('one event or a batch; variant optional or null', () => {
    expect(parseEventBody(body({ id: '42', event: 'exposure', variant: 'B' }), RULES)).toEqual({
      events: [{ id: '42', event: 'exposure', variant: 'B' }],
      error: null
    })
    expect(parseEventBody(body([{ id: 'a_b-1', event: 'click' }, { id: '7', event: 'exposure', variant: null }]), RULES).events).toEqual([
      { id: 'a_b-1', event: 'click', variant: null },
      { id: '7', event: 'exposure', variant: null }
    ])
    expect(parseEventBody(body('  {"id":"1","event":"click"}\n'), RULES).error).toBeNull()
  })

  test.each([
    ['not JSON', 'id=42&event=exposure', 'BAD_BODY'],
    ['empty', '', 'BAD_BODY'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'BAD_BODY'],
    ['cut short', '[{"id":"1","event":"click"}', 'BAD_BODY'],
    ['null', 'null', 'BAD_EVENT'],
    ['a number', '42', 'BAD_EVENT'],
    ['a string', '"exposure"', 'BAD_EVENT'],
    ['true', 'true', 'BAD_EVENT'],
    ['an empty batch', '[]', 'BAD_EVENT'],
    ['a batch over maxEvents', JSON.stringify(Array(4).fill({ id: '1', event: 'click' })), 'BAD_EVENT'],
    ['a nested batch', '[[{"id":"1","event":"click"}]]', 'BAD_EVENT'],
    ['no id', '{"event":"click"}', 'BAD_EVENT'],
    ['no event', '{"id":"1"}', 'BAD_EVENT'],
    ['a numeric id', '{"id":42,"event":"click"}', 'BAD_EVENT'],
    ['an id with a slash', '{"id":"../1","event":"click"}', 'BAD_EVENT'],
    ['an id too long', JSON.stringify({ id: 'a'.repeat(65), event: 'click' }), 'BAD_EVENT'],
    ['an empty id', '{"id":"","event":"click"}', 'BAD_EVENT'],
    ['an undeclared event', '{"id":"1","event":"purchase"}', 'BAD_EVENT'],
    ['an event of another case', '{"id":"1","event":"Exposure"}', 'BAD_EVENT'],
    ['an event as an array', '{"id":"1","event":["click"]}', 'BAD_EVENT'],
    ['a variant object', '{"id":"1","event":"click","variant":{"a":1}}', 'BAD_EVENT'],
    ['a variant number', '{"id":"1","event":"click","variant":2}', 'BAD_EVENT'],
    ['a variant with markup', '{"id":"1","event":"click","variant":"<b>"}', 'BAD_EVENT'],
    ['a variant too long', JSON.stringify({ id: '1', event: 'click', variant: 'v'.repeat(MAX_VARIANT_LENGTH + 1) }), 'BAD_EVENT'],
    ['an extra key', '{"id":"1","event":"click","ts":1}', 'BAD_EVENT'],
    ['a __proto__ key', '{"id":"1","event":"click","__proto__":{"x":1}}', 'BAD_EVENT'],
    ['one bad event in a batch', '[{"id":"1","event":"click"},{"id":"2","event":"nope"}]', 'BAD_EVENT']
  ])('%s: refused', (name, input, code) => {
    const result = parseEventBody(Buffer.isBuffer(input) ? input : body(input), RULES)
    expect(result.events).toBeNull()
    expect(result.error.code).toBe(code)
    expect(Object.isFrozen(result.error)).toBe(true)
  })

  test('whatever the bytes, an answer is either valid events or a coded error that reflects nothing', () => {
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), fc.json().map((s) => Buffer.from(s))), (bytes) => {
      const { events, error } = parseEventBody(Buffer.from(bytes), RULES)
      if (error) return ['BAD_BODY', 'BAD_EVENT'].includes(error.code) && events === null
      return events.length >= 1 && events.every((e) => RULES.names.has(e.event) && /^[A-Za-z0-9_-]+$/.test(e.id))
    }), { numRuns: 2000 })
  })
})

describe('the GIF query', () => {
  test('one event; other params ignored; escapes decoded', () => {
    expect(parseEventQuery('id=42&event=exposure&variant=B&_=1700000000000', RULES)).toEqual({
      events: [{ id: '42', event: 'exposure', variant: 'B' }],
      error: null
    })
    expect(parseEventQuery('%69d=4%32&event=click', RULES).events).toEqual([{ id: '42', event: 'click', variant: null }])
  })

  test.each([
    ['nothing', ''],
    ['no event', 'id=1'],
    ['an undeclared event', 'id=1&event=nope'],
    ['a duplicated id', 'id=1&id=2&event=click'],
    ['a duplicated event', 'id=1&event=click&event=exposure'],
    ['a bad id', 'id=%3Cscript%3E&event=click'],
    ['a malformed escape', 'id=%E0%A4%A&event=click'],
    ['a bad variant', 'id=1&event=click&variant=a+b']
  ])('%s: BAD_EVENT', (name, query) => {
    expect(parseEventQuery(query, RULES).error.code).toBe('BAD_EVENT')
  })
})

test('media types: text/plain (sendBeacon of a string) and application/json, UTF-8 only', () => {
  for (const ok of [
    'text/plain;charset=UTF-8', 'text/plain', 'application/json', 'Application/JSON; charset="utf-8"', 'text/plain; charset=utf8'
  ]) {
    expect({ ok, is: isEventMediaType(ok) }).toEqual({ ok, is: true })
  }
  for (const bad of [
    undefined, '', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/html', 'application/json; charset=latin1',
    'text/plainx', 'application/json5'
  ]) {
    expect({ bad, is: isEventMediaType(bad) }).toEqual({ bad, is: false })
  }
})
