'use strict'

// Every answer of the OFREP paths, held to the OFREP 0.3.0 shapes (test/support/ofrep-schema.js)
// and to what the JS providers read (js-sdk-contrib ofrep-core: a failure needs key + errorCode
// on the single path, errorCode on bulk; a bulk success needs a flags array of keyed items).

const { renderBulk, bulkResponse, flagResponse, errorResponse, flagSetMetadata } = require('../../../api/public/ofrep/responses')
const { OFREP_ERRORS } = require('../../../api/public/ofrep/errors')
const { flagsOf } = require('../../../api/public/ofrep/flags')
const { evaluateAll, evaluateOne, disabledItems, disabledItem, REASONS } = require('../../../api/public/ofrep/evaluate')
const { ofrepValidators } = require('../../support/ofrep-schema')

const strict = ofrepValidators()
const CONFIG = { variant: 'B', features: { search: true, ui: { theme: 'dark', size: 12, ratio: 0.5 } }, off: null }

const JSON_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store'
}

/** What ofrep-core's isEvaluationFailureResponse demands of a single-flag failure. */
const providerReadsFailure = (body) => typeof body.key === 'string' && typeof body.errorCode === 'string'

function expectJson (response, status) {
  expect(response.status).toBe(status)
  expect(response.headers).toMatchObject(JSON_HEADERS)
  expect(response.headers['Content-Length']).toBe(Buffer.byteLength(response.body))
  return JSON.parse(response.body)
}

describe('bulk', () => {
  const rendered = renderBulk(evaluateAll(flagsOf(CONFIG), REASONS.TARGETING_MATCH), { endpoint: 'sample5', version: '1732600000000' })

  test('200: the flags, flag-set metadata, an ETag; valid bulkEvaluationSuccess', () => {
    const response = bulkResponse(rendered, undefined)
    const body = expectJson(response, 200)
    expect(response.headers.ETag).toBe(rendered.etag)
    expect(body).toEqual({
      flags: [
        { key: 'variant', value: 'B', reason: 'TARGETING_MATCH' },
        { key: 'features', value: CONFIG.features, reason: 'TARGETING_MATCH' },
        { key: 'features.search', value: true, reason: 'TARGETING_MATCH' },
        { key: 'features.ui', value: CONFIG.features.ui, reason: 'TARGETING_MATCH' },
        { key: 'features.ui.theme', value: 'dark', reason: 'TARGETING_MATCH' },
        { key: 'features.ui.size', value: 12, reason: 'TARGETING_MATCH' },
        { key: 'features.ui.ratio', value: 0.5, reason: 'TARGETING_MATCH' },
        { key: 'off', reason: 'TARGETING_MATCH' }
      ],
      metadata: { endpoint: 'sample5', version: '1732600000000' }
    })
    expect(strict.bulkEvaluationSuccess(body)).toBeNull()
    expect(body.flags.every((f) => typeof f.key === 'string')).toBe(true) // the web provider drops keyless items
  })

  test('304 without a body when If-None-Match matches, with the ETag', () => {
    for (const header of [rendered.etag, 'W/' + rendered.etag, `"old", ${rendered.etag}`, '*']) {
      const notModified = { status: 304, headers: { ETag: rendered.etag, 'Cache-Control': 'no-store' }, body: null }
      expect(bulkResponse(rendered, header)).toEqual(notModified)
    }
    expect(bulkResponse(rendered, '"old"').status).toBe(200)
  })

  test('an unknown id (STATIC) and a rollout\'s answer (SPLIT, with its variant) are valid', () => {
    const body = JSON.parse(renderBulk(evaluateAll(flagsOf({ features: {} }), REASONS.STATIC), { endpoint: 'sample5' }).body)
    expect(body).toEqual({ flags: [{ key: 'features', value: {}, reason: 'STATIC' }], metadata: { endpoint: 'sample5' } })
    expect(strict.bulkEvaluationSuccess(body)).toBeNull()
    const split = JSON.parse(renderBulk(evaluateAll(flagsOf({ features: {} }), REASONS.SPLIT, 'B'), { endpoint: 'sample5' }).body)
    expect(split.flags).toEqual([{ key: 'features', value: {}, reason: 'SPLIT', variant: 'B' }])
    expect(strict.bulkEvaluationSuccess(split)).toBeNull()
  })

  test('a fixed endpoint (STATIC) and a disabled one (DISABLED, no values) are valid', () => {
    const fixed = JSON.parse(renderBulk(evaluateAll(flagsOf(CONFIG), REASONS.STATIC), { endpoint: 'sample1', version: 'fabc' }).body)
    expect(strict.bulkEvaluationSuccess(fixed)).toBeNull()
    const disabled = JSON.parse(renderBulk(disabledItems({ features: { a: 1 }, limit: 5 }), { endpoint: 'sample5' }).body)
    expect(disabled.flags).toEqual([
      { key: 'features', reason: 'DISABLED' }, { key: 'features.a', reason: 'DISABLED' }, { key: 'limit', reason: 'DISABLED' }
    ])
    expect(strict.bulkEvaluationSuccess(disabled)).toBeNull()
  })

  test('an array value is served as is; 0.3.0 says an object flag is an object, so it is off-schema', () => {
    const body = JSON.parse(renderBulk(evaluateAll(flagsOf({ list: [1, 2] }), REASONS.STATIC), { endpoint: 'e' }).body)
    expect(body.flags).toEqual([{ key: 'list', value: [1, 2], reason: 'STATIC' }])
    expect(strict.bulkEvaluationSuccess(body)).not.toBeNull()
  })

  test('no flags at all: an empty list, still valid', () => {
    expect(strict.bulkEvaluationSuccess(JSON.parse(renderBulk([], { endpoint: 'e' }).body))).toBeNull()
  })

  test('the body is script-safe JSON: markup escaped, the same values', () => {
    const config = { html: '</script><!--&', sep: '\u2028' }
    const { body } = renderBulk(evaluateAll(flagsOf(config), REASONS.STATIC), { endpoint: 'e' })
    expect(body).not.toMatch(/[<>&\u2028]/)
    expect(JSON.parse(body).flags.map((f) => f.value)).toEqual(['</script><!--&', '\u2028'])
  })

  test('flag-set metadata holds primitives only; an unknown version is left out', () => {
    expect(flagSetMetadata({ endpoint: 'e', version: 'v1' })).toEqual({ endpoint: 'e', version: 'v1' })
    expect(flagSetMetadata({ endpoint: 'e', version: 12 })).toEqual({ endpoint: 'e', version: 12 })
    for (const version of [undefined, null, NaN, Infinity, { v: 1 }, ['v']]) {
      expect(flagSetMetadata({ endpoint: 'e', version: /** @type {any} */ (version) })).toEqual({ endpoint: 'e' })
    }
  })
})

describe('one flag', () => {
  const flags = flagsOf(CONFIG)

  test.each([
    ['features.search', REASONS.TARGETING_MATCH, { value: true }],
    ['features.ui.theme', REASONS.STATIC, { value: 'dark' }],
    ['features.ui.size', REASONS.TARGETING_MATCH, { value: 12 }],
    ['features.ui.ratio', REASONS.TARGETING_MATCH, { value: 0.5 }],
    ['features', REASONS.TARGETING_MATCH, { value: CONFIG.features }],
    ['off', REASONS.TARGETING_MATCH, {}]
  ])('200 %s: {key, value?, reason}, valid evaluationSuccess', (key, reason, value) => {
    const body = expectJson(flagResponse(evaluateOne(flags, key, reason)), 200)
    expect(body).toEqual({ key, ...value, reason })
    expect(strict.evaluationSuccess(body)).toBeNull()
  })

  test('SPLIT: the variant beside the value, valid', () => {
    const body = JSON.parse(flagResponse(evaluateOne(flags, 'variant', REASONS.SPLIT, 'B')).body)
    expect(body).toMatchObject({ key: 'variant', reason: 'SPLIT', variant: 'B' })
    expect(strict.evaluationSuccess(body)).toBeNull()
  })

  test('DISABLED: no value, valid', () => {
    const body = expectJson(flagResponse(disabledItem('any.key')), 200)
    expect(body).toEqual({ key: 'any.key', reason: 'DISABLED' })
    expect(strict.evaluationSuccess(body)).toBeNull()
  })

  test('an unknown key: evaluateOne gives null, answered 404 flagNotFound with the key', () => {
    expect(evaluateOne(flags, 'features.nope', REASONS.TARGETING_MATCH)).toBeNull()
    const body = expectJson(errorResponse(OFREP_ERRORS.FLAG_NOT_FOUND, 'features.nope'), 404)
    expect(body).toEqual({ key: 'features.nope', errorCode: 'FLAG_NOT_FOUND', errorDetails: OFREP_ERRORS.FLAG_NOT_FOUND.errorDetails })
    expect(strict.flagNotFound(body)).toBeNull()
    expect(providerReadsFailure(body)).toBe(true)
  })
})

describe('errors', () => {
  const REQUEST_ERRORS = ['BAD_MEDIA_TYPE', 'BAD_JSON', 'BAD_KEY_ENCODING', 'BAD_CONTEXT', 'TARGETING_KEY_MISSING', 'BAD_TARGETING_KEY']

  test.each(REQUEST_ERRORS)('%s: 400, bulkEvaluationFailure on bulk, evaluationFailure on the single path', (name) => {
    const error = OFREP_ERRORS[name]
    const bulk = expectJson(errorResponse(error), 400)
    expect(bulk).toEqual({ errorCode: error.errorCode, errorDetails: error.errorDetails })
    expect(strict.bulkEvaluationFailure(bulk)).toBeNull()
    const single = expectJson(errorResponse(error, 'my-flag'), 400)
    expect(single).toEqual({ key: 'my-flag', errorCode: error.errorCode, errorDetails: error.errorDetails })
    expect(strict.evaluationFailure(single)).toBeNull()
    expect(providerReadsFailure(single)).toBe(true)
  })

  test('413: PARSE_ERROR in the failure shapes (0.3.0 names no 413)', () => {
    expect(strict.bulkEvaluationFailure(expectJson(errorResponse(OFREP_ERRORS.BODY_TOO_LARGE), 413))).toBeNull()
    expect(strict.evaluationFailure(expectJson(errorResponse(OFREP_ERRORS.BODY_TOO_LARGE, 'k'), 413))).toBeNull()
  })

  test('401 with a Bearer challenge, 403; bodies in the failure shapes', () => {
    const missing = errorResponse(OFREP_ERRORS.API_KEY_MISSING)
    expect(missing.headers['WWW-Authenticate']).toBe('Bearer')
    expect(strict.bulkEvaluationFailure(expectJson(missing, 401))).toBeNull()
    expect(strict.evaluationFailure(expectJson(errorResponse(OFREP_ERRORS.API_KEY_WRONG, 'k'), 403))).toBeNull()
  })

  test('503: Retry-After in integer seconds, GENERAL; a generalErrorResponse and a failure the providers read', () => {
    const bulk = errorResponse(OFREP_ERRORS.CONFIG_UNAVAILABLE)
    expect(bulk.headers['Retry-After']).toBe('1')
    expect(Number.parseInt(bulk.headers['Retry-After'], 10)).toBe(1)
    const bulkBody = expectJson(bulk, 503)
    expect(bulkBody.errorCode).toBe('GENERAL')
    expect(strict.generalErrorResponse(bulkBody)).toBeNull()
    expect(strict.bulkEvaluationFailure(bulkBody)).toBeNull()
    const single = expectJson(errorResponse(OFREP_ERRORS.CONFIG_UNAVAILABLE, 'k'), 503)
    expect(strict.evaluationFailure(single)).toBeNull()
    expect(providerReadsFailure(single)).toBe(true)
  })

  test('details are fixed text: the only input an error body carries is the key, escaped', () => {
    const key = '</script><img src=x onerror=alert(1)>'
    const response = errorResponse(OFREP_ERRORS.FLAG_NOT_FOUND, key)
    expect(response.body).not.toMatch(/[<>]/)
    expect(JSON.parse(response.body).key).toBe(key)
    for (const error of Object.values(OFREP_ERRORS)) {
      expect(errorResponse(error, 'k').body).toBe(errorResponse(error, 'k').body)
      expect(error.errorDetails).not.toMatch(/\$\{|%s/)
    }
  })

  test('the table is frozen, and every errorCode is one OFREP defines', () => {
    expect(Object.isFrozen(OFREP_ERRORS)).toBe(true)
    for (const [name, error] of Object.entries(OFREP_ERRORS)) {
      expect(Object.isFrozen(error) && Object.isFrozen(error.headers)).toBe(true)
      expect(error.name).toBe(name)
      expect(['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL', 'FLAG_NOT_FOUND']).toContain(error.errorCode)
    }
  })
})
