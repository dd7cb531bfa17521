'use strict'

const { planLines, luaScript } = require('../lib/wrk')

describe('wrk plan', () => {
  test('one tab-separated line per request: method, path, headers, body', () => {
    const text = planLines([
      { path: '/api/sample1.js?id=1&callback=EXAMPLE.process' },
      { path: '/api/sample3/ofrep/v1/evaluate/flags', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' }
    ])
    expect(text.split('\n')).toEqual([
      'GET\t/api/sample1.js?id=1&callback=EXAMPLE.process\t\t',
      'POST\t/api/sample3/ofrep/v1/evaluate/flags\tContent-Type: application/json\t{"a":1}',
      ''
    ])
  })

  test('a request the line format cannot carry is refused, not sent garbled', () => {
    expect(() => planLines([{ path: '/a\tb' }])).toThrow(/tab or newline/)
    expect(() => planLines([{ path: '/a', body: 'x\ny' }])).toThrow(/tab or newline/)
  })

  test('the script reads the plan file it is given and prints one summary line', () => {
    const lua = luaScript('/tmp/x "y"/plan.tsv')
    expect(lua).toContain('io.lines("/tmp/x \\"y\\"/plan.tsv")')
    expect(lua).toContain('WRK_JSON {')
  })
})
