'use strict'

// Property tests for the JSONP security core: whatever a client sends as `id` or `callback`, the
// request is either refused with a coded error whose body echoes nothing, or the body is a
// script that parses, cannot break out of a <script> element, and calls the callback once.

const vm = require('node:vm')
const fc = require('fast-check')
const { parseBeaconQuery, RESERVED_WORDS } = require('../../api/public/query')
const { renderBody, renderError } = require('../../api/public/jsonp')
const { serializeConfig } = require('../../lib/toggles/script-json')
const { ERRORS } = require('../../lib/errors')

const RUNS = { numRuns: 2000 }
const LIMITS = { maxIdLength: 64, maxCallbackLength: 128 }
const CONFIG = { html: '</script><script>alert(1)</script>', comment: '<!--', ls: 'a\u2028b', ps: 'c\u2029d', amp: 'a&b' }
const CONFIG_JSON = serializeConfig(CONFIG)
// Arbitrary strings: graphemes from all of Unicode, raw code points including lone surrogates,
// and a mix weighted towards what breaks out of scripts and query strings.
const identifierChars = [...'abcxyzABCXYZ_$019.']
const breakoutChars = [...'<>"\'\\/;()[]{}=&%+#?!*-,:` \n\r\t\u2028\u2029\u0000\u00e9\u0430\u200b']
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))
const mixedChar = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...identifierChars) },
  { weight: 3, arbitrary: fc.constantFrom(...breakoutChars) },
  { weight: 1, arbitrary: loneSurrogate },
  { weight: 1, arbitrary: fc.constantFrom(...RESERVED_WORDS) }
)
const segment = fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,6}$/)
const identifierPath = fc.array(fc.oneof({ weight: 5, arbitrary: segment }, { weight: 1, arbitrary: fc.constantFrom(...RESERVED_WORDS) }), {
  minLength: 1,
  maxLength: 4
})
  .map((segments) => segments.join('.'))
const anyString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // full Unicode (fast-check 4's fullUnicodeString)
  fc.string({ unit: mixedChar, maxLength: 40 }),
  identifierPath,
  fc.string({ unit: mixedChar, minLength: 120, maxLength: 400 }) // around and beyond the limits
)

/** How the value travels in the query: percent-encoded like a browser would, or raw. */
const encoding = fc.constantFrom('encoded', 'raw')

/** @returns {{ text: string, exact: boolean }} exact: the parser must give back `value` itself */
function inQuery (value, how) {
  if (how === 'raw') return { text: value, exact: false }
  try {
    return { text: encodeURIComponent(value), exact: true }
  } catch {
    return { text: value, exact: false } // lone surrogates cannot be encoded; send them raw
  }
}

// One context for every run: each run installs its own stub path and removes it afterwards.
const sandbox = {}
const context = vm.createContext(sandbox)

/** Runs `body` with a function stubbed at `callbackPath`; returns the arguments of each call. */
function runWithStub (body, callbackPath) {
  const calls = []
  const segments = callbackPath.split('.')
  let holder = sandbox
  segments.forEach((name, i) => {
    const value = i === segments.length - 1 ? (...args) => calls.push(args) : {}
    // defineProperty, so names like __proto__ become plain own properties
    Object.defineProperty(holder, name, { value, writable: true, configurable: true, enumerable: true })
    holder = value
  })
  try {
    new vm.Script(body).runInContext(context)
  } finally {
    delete sandbox[segments[0]]
  }
  return calls
}

function expectScriptSafe (body) {
  expect(() => new vm.Script(body)).not.toThrow()
  expect(body).not.toMatch(/[<\u2028\u2029]/)
}

function expectRefusal (error) {
  expect(error).toBeInstanceOf(ERRORS[error.code])
  expect(error.statusCode).toBe(400)
  for (const scriptContext of [true, false]) {
    const body = renderError(error, { callback: null, scriptContext })
    // Nothing reflected: the body is the one rendered for the code alone, without the input. (A
    // substring search for the input would flag inputs that happen to be part of the fixed text.)
    expect(body).toBe(renderError(new ERRORS[error.code](), { scriptContext }))
    if (scriptContext) expectScriptSafe(body)
    else expect(JSON.parse(body).error.code).toBe(error.code)
  }
}

function expectServed ({ id, callback }, isDefault) {
  const body = renderBody({ id, isDefault, configJson: CONFIG_JSON, callback })
  expectScriptSafe(body)
  const calls = runWithStub(body, callback)
  expect(calls).toHaveLength(1)
  expect(calls[0]).toHaveLength(1)
  expect(JSON.parse(JSON.stringify(calls[0][0]))).toEqual({ id, default: isDefault, config: CONFIG })
}

test('any callback: refused with a coded error, or a safe script that calls it once', () => {
  fc.assert(fc.property(anyString, encoding, fc.boolean(), (input, how, isDefault) => {
    const sent = inQuery(input, how)
    const result = parseBeaconQuery('id=42&callback=' + sent.text + '&_=1', LIMITS)
    if (result.error) {
      expectRefusal(result.error)
      return
    }
    expect(result.id).toBe('42')
    expect(result.callback).toMatch(/^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/)
    expect(result.callback.length).toBeLessThanOrEqual(LIMITS.maxCallbackLength)
    if (sent.exact) expect(result.callback).toBe(input)
    expectServed(result, isDefault)
  }), RUNS)
})

test('any id: refused with a coded error, or a safe script carrying exactly that id', () => {
  const anyId = fc.oneof(anyString, fc.stringMatching(/^[A-Za-z0-9_-]{1,70}$/))
  fc.assert(fc.property(anyId, encoding, fc.boolean(), (input, how, isDefault) => {
    const sent = inQuery(input, how)
    const result = parseBeaconQuery('callback=EXAMPLE.process&id=' + sent.text, LIMITS)
    if (result.error) {
      expectRefusal(result.error)
      return
    }
    expect(result.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    if (sent.exact) expect(result.id).toBe(input)
    expectServed(result, isDefault)
  }), RUNS)
})

test('any query string: parsing never throws, and whatever it yields renders safely', () => {
  const query = fc.oneof(
    fc.string({ unit: mixedChar, maxLength: 80 }),
    fc.tuple(anyString, anyString).map(([a, b]) => `id=${a}&callback=${b}`),
    fc.string({ unit: 'binary', maxLength: 80 })
  )
  fc.assert(fc.property(query, (q) => {
    const result = parseBeaconQuery(q, LIMITS)
    if (result.error) {
      expect(result.error).toBeInstanceOf(ERRORS[result.error.code])
      expectScriptSafe(renderError(result.error, { callback: result.callback, scriptContext: true }))
      return
    }
    if (result.callback === null) {
      const json = renderBody({ id: result.id, isDefault: false, configJson: CONFIG_JSON, callback: null })
      expect(JSON.parse(json)).toEqual({ id: result.id, default: false, config: CONFIG })
      expect(json).not.toMatch(/[<\u2028\u2029]/)
    } else {
      expectServed(result, false)
    }
  }), RUNS)
})

test('any config: the page sees exactly the JSON data (minus __proto__ keys), and it cannot close a script element', () => {
  const config = fc.dictionary(fc.string({ unit: mixedChar, maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }))
  fc.assert(fc.property(config, (value) => {
    const json = serializeConfig(value)
    expect(json).not.toMatch(/[<>&\u2028\u2029]/)
    const expected = JSON.parse(JSON.stringify(value, (key, v) => (key === '__proto__' ? undefined : v)))
    expect(JSON.parse(json)).toEqual(expected)
    const body = renderBody({ id: '1', isDefault: false, configJson: json, callback: 'EXAMPLE.process' })
    const calls = runWithStub(body, 'EXAMPLE.process')
    expect(JSON.parse(JSON.stringify(calls[0][0].config))).toEqual(expected)
  }), RUNS)
})
