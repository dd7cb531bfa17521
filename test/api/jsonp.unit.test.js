'use strict'

const vm = require('node:vm')
const { renderBody, renderError, contentType, callbackAllowlist } = require('../../api/public/jsonp')
const { serializeConfig } = require('../../lib/toggles/script-json')
const { parseBeaconQuery } = require('../../api/public/query')
const { ERRORS } = require('../../lib/errors')

const LIMITS = { maxIdLength: 64, maxCallbackLength: 128 }
const CONFIG = { variant: 'A', features: { search: true, chat: false } }

/** Runs a body as a classic script with EXAMPLE.process and console stubbed; returns the calls. */
function run (body) {
  const calls = []
  const logged = []
  const context = vm.createContext({
    EXAMPLE: { process: (payload) => calls.push(payload) },
    console: { error: (line) => logged.push(line) }
  })
  new vm.Script(body).runInContext(context)
  return { calls: JSON.parse(JSON.stringify(calls)), logged }
}

describe('serializeConfig', () => {
  test('plain JSON when nothing needs escaping', () => {
    expect(serializeConfig(CONFIG)).toBe('{"variant":"A","features":{"search":true,"chat":false}}')
  })

  test('escapes <, >, &, U+2028 and U+2029 and still round-trips', () => {
    const nasty = { a: '</script><script>alert(1)</script>', b: '<!-- x -->', c: 'line\u2028sep\u2029para', d: 'a&b' }
    const json = serializeConfig(nasty)
    expect(json).toBe('{"a":"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e","b":"\\u003c!-- x --\\u003e",' +
      '"c":"line\\u2028sep\\u2029para","d":"a\\u0026b"}')
    expect(json).not.toMatch(/[<>&\u2028\u2029]/)
    expect(JSON.parse(json)).toEqual(nasty)
  })

  test('escapes keys too', () => {
    expect(serializeConfig({ '</script>': 1 })).toBe('{"\\u003c/script\\u003e":1}')
  })

  test('leaves out __proto__ keys, which a script literal would turn into a prototype', () => {
    const value = JSON.parse('{"a":{"__proto__":{"admin":true},"b":1},"__proto__":null,"c":"__proto__"}')
    const json = serializeConfig(value)
    expect(json).toBe('{"a":{"b":1},"c":"__proto__"}')
    const seen = vm.runInNewContext('(' + json + ')')
    expect(Object.getPrototypeOf(seen.a)).not.toBeNull()
    expect(seen.a.admin).toBeUndefined()
  })

  test('refuses a value with no JSON form', () => {
    expect(() => serializeConfig(undefined)).toThrow(TypeError)
  })
})

describe('renderBody', () => {
  const configJson = serializeConfig(CONFIG)

  test('with a callback: guarded call after the Rosetta Flash comment', () => {
    const body = renderBody({ id: '7', isDefault: false, configJson, callback: 'EXAMPLE.process' })
    expect(body).toBe("/**/ typeof EXAMPLE.process === 'function' && EXAMPLE.process(" +
      '{"id":"7","default":false,"config":{"variant":"A","features":{"search":true,"chat":false}}});')
    expect(run(body).calls).toEqual([{ id: '7', default: false, config: CONFIG }])
  })

  test('a default config says so', () => {
    const body = renderBody({ id: 'no-such-id', isDefault: true, configJson: '{"features":{}}', callback: 'EXAMPLE.process' })
    expect(body).toBe("/**/ typeof EXAMPLE.process === 'function' && " +
      'EXAMPLE.process({"id":"no-such-id","default":true,"config":{"features":{}}});')
  })

  test('without a callback: the payload as JSON', () => {
    const body = renderBody({ id: '7', isDefault: false, configJson, callback: null })
    expect(body).toBe('{"id":"7","default":false,"config":{"variant":"A","features":{"search":true,"chat":false}}}')
    expect(JSON.parse(body)).toEqual({ id: '7', default: false, config: CONFIG })
  })

  test('a page without the function: no error', () => {
    const body = renderBody({ id: '7', isDefault: false, configJson, callback: 'EXAMPLE.missing' })
    expect(() => run(body)).not.toThrow()
  })

  test('a config that tries to break out of the script stays data', () => {
    const evil = { html: '</script><script>alert(1)</script>', comment: '<!--', ls: 'a\u2028b', ps: 'c\u2029d' }
    const body = renderBody({ id: '1', isDefault: false, configJson: serializeConfig(evil), callback: 'EXAMPLE.process' })
    expect(body).toBe("/**/ typeof EXAMPLE.process === 'function' && EXAMPLE.process({\"id\":\"1\",\"default\":false,\"config\":" +
      '{"html":"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e","comment":"\\u003c!--","ls":"a\\u2028b","ps":' +
        '"c\\u2029d"}});')
    expect(body).not.toMatch(/[<>\u2028\u2029]/)
    expect(run(body).calls).toEqual([{ id: '1', default: false, config: evil }])
  })

  test('refuses an id or callback that was not validated', () => {
    expect(() => renderBody({ id: '"+alert(1)+"', isDefault: false, configJson, callback: null })).toThrow(TypeError)
    expect(() => renderBody({ id: '', isDefault: false, configJson, callback: null })).toThrow(TypeError)
    expect(() => renderBody({ id: 7, isDefault: false, configJson, callback: null })).toThrow(TypeError)
    expect(() => renderBody({ id: '7', isDefault: false, configJson, callback: 'alert(1);x' })).toThrow(TypeError)
  })
})

describe('renderError', () => {
  test('script context: logs the code and fixed text to the console', () => {
    const body = renderError(new ERRORS.BAD_CALLBACK(), { callback: null, scriptContext: true })
    expect(body).toBe('/**/ typeof console === \'object\' && console.error("beacon: BAD_CALLBACK: callback must be a JavaScript ' +
      'identifier path like EXAMPLE.process");')
    expect(run(body).logged).toEqual(['beacon: BAD_CALLBACK: callback must be a JavaScript identifier path like EXAMPLE.process'])
  })

  test('no script context: JSON error object', () => {
    const body = renderError(new ERRORS.BAD_ID(), { scriptContext: false })
    expect(body).toBe('{"error":{"status":400,"code":"BAD_ID","message":"id must be letters, digits, _ or - and not longer than the ' +
      'configured limit"}}')
    expect(renderError(new ERRORS.MISSING_ID())).toBe(renderError(new ERRORS.MISSING_ID(), { scriptContext: false }))
  })

  test('CONFIG_UNAVAILABLE with a valid callback calls the page back with the error', () => {
    const body = renderError(new ERRORS.CONFIG_UNAVAILABLE(), { callback: 'EXAMPLE.process', scriptContext: true })
    expect(body).toBe("/**/ typeof EXAMPLE.process === 'function' && EXAMPLE.process(" +
      '{"error":{"status":503,"code":"CONFIG_UNAVAILABLE","message":"the configuration store is unavailable; retry shortly"}});')
    expect(run(body).calls).toEqual([
      { error: { status: 503, code: 'CONFIG_UNAVAILABLE', message: 'the configuration store is unavailable; retry shortly' } }
    ])
  })

  test('CONFIG_UNAVAILABLE without a usable callback logs instead', () => {
    const logged = renderError(new ERRORS.CONFIG_UNAVAILABLE(), { scriptContext: true })
    expect(logged).toMatch(/^\/\*\*\/ typeof console === 'object' && console\.error\("beacon: CONFIG_UNAVAILABLE: /)
    expect(renderError(new ERRORS.CONFIG_UNAVAILABLE(), { callback: 'alert(1)//', scriptContext: true })).toBe(logged)
    expect(renderError(new ERRORS.CONFIG_UNAVAILABLE(), { callback: 'new.x', scriptContext: true })).toBe(logged)
  })

  test('a client error never calls the page back, even with a valid callback', () => {
    const body = renderError(new ERRORS.BAD_ID(), { callback: 'EXAMPLE.process', scriptContext: true })
    expect(body).not.toContain('EXAMPLE')
  })

  test('writes only the table text: never the error message, the id or the callback', () => {
    const err = new ERRORS.BAD_ID('</script><script>alert(1)</script>')
    for (const scriptContext of [true, false]) {
      const body = renderError(err, { callback: '</script>', scriptContext })
      expect(body).not.toContain('script>')
      expect(body).not.toContain('alert')
    }
  })

  test('the bodies for real bad requests echo nothing of the request', () => {
    const queries = [
      'id=%3Cscript%3Ealert(1)%3C%2Fscript%3E&callback=x',
      'id=1&callback=alert(document.cookie)//',
      'id=1&callback=%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      'id=1&id=%3Cimg%20src%3Dx%3E',
      'id=%E0%A4%A&callback=evil',
      'callback=evil'
    ]
    for (const query of queries) {
      const { error } = parseBeaconQuery(query, LIMITS)
      expect(error).not.toBeNull()
      for (const scriptContext of [true, false]) {
        const body = renderError(error, { callback: null, scriptContext })
        expect(body).not.toMatch(/alert|script>|img|evil|cookie|</i)
        if (scriptContext) expect(() => new vm.Script(body)).not.toThrow()
        else expect(JSON.parse(body).error.code).toBe(error.code)
      }
    }
  })

  test('an error without a known code is written as INTERNAL', () => {
    const internal = '{"error":{"status":500,"code":"INTERNAL","message":"internal error"}}'
    expect(renderError(new Error('db password is hunter2'))).toBe(internal)
    expect(renderError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(internal)
    expect(renderError(null)).toBe(internal)
    expect(renderError(null, { callback: 'EXAMPLE.process', scriptContext: true })).toMatch(/console\.error\("beacon: INTERNAL: /)
    expect(renderError(undefined, { scriptContext: true })).toBe(
      '/**/ typeof console === \'object\' && console.error("beacon: INTERNAL: internal error");'
    )
  })

  test('every coded error renders as valid JSON and valid script', () => {
    for (const [code, ErrorClass] of Object.entries(ERRORS)) {
      const json = JSON.parse(renderError(new ErrorClass(), { scriptContext: false }))
      expect(json).toEqual({ error: { status: ErrorClass.statusCode, code, message: ErrorClass.message } })
      const script = renderError(new ErrorClass(), { scriptContext: true })
      expect(run(script).logged).toEqual([`beacon: ${code}: ${ErrorClass.message}`])
    }
  })
})

test('contentType', () => {
  expect(contentType(true)).toBe('application/javascript; charset=utf-8')
  expect(contentType(false)).toBe('application/json; charset=utf-8')
})

test('callbackAllowlist: exact names and prefixes ending in *; no list allows every valid callback', () => {
  expect(callbackAllowlist(undefined)).toBeNull()
  const allows = callbackAllowlist(['EXAMPLE.process', 'jQuery*', 'cb'])
  for (const ok of ['EXAMPLE.process', 'jQuery3710_1700000000000', 'jQuery', 'cb']) expect(allows(ok)).toBe(true)
  for (const no of ['EXAMPLE.processX', 'EXAMPLE', 'window.opener.document.forms.0.submit', 'cb2', 'jquery1', 'alert']) {
    expect(allows(no)).toBe(false)
  }
  expect(callbackAllowlist([])('cb')).toBe(false)
})
