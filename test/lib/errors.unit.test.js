'use strict'

const { ERRORS, createError } = require('../../lib/errors')

describe('lib/errors', () => {
  test('the table: codes, statuses and fixed messages', () => {
    const statuses = Object.fromEntries(Object.entries(ERRORS).map(([code, E]) => [code, E.statusCode]))
    expect(statuses).toEqual({
      BAD_CALLBACK: 400,
      CALLBACK_NOT_ALLOWED: 400,
      BAD_ID: 400,
      MISSING_ID: 400,
      BAD_QUERY: 400,
      DUPLICATE_PARAM: 400,
      BAD_REQUEST: 400,
      URL_TOO_LONG: 414,
      METHOD_NOT_ALLOWED: 405,
      MISDIRECTED_REQUEST: 421,
      NOT_FOUND: 404,
      ENDPOINT_DISABLED: 404,
      ORIGIN_NOT_ALLOWED: 403,
      RATE_LIMITED: 429,
      BAD_EVENT: 400,
      UNSUPPORTED_MEDIA_TYPE: 415,
      STREAM_TOKEN_MISSING: 401,
      STREAM_TOKEN_WRONG: 403,
      TOO_MANY_IDS: 422,
      TOO_MANY_STREAMS: 503,
      UNAUTHORIZED: 401,
      ADMIN_DISABLED: 404,
      BAD_BODY: 400,
      BODY_TOO_LARGE: 413,
      BAD_CONFIG: 400,
      CONFIG_NOT_FOUND: 404,
      BAD_ROLLOUT: 400,
      ROLLOUT_NOT_FOUND: 404,
      NO_HISTORY: 404,
      FIXED_CONFIG: 409,
      STORE_UNAVAILABLE: 503,
      CONFIG_UNAVAILABLE: 503,
      CIRCUIT_OPEN: 503,
      LOOKUP_TIMEOUT: 503,
      BAD_TIME: 400,
      BAD_TIME_RANGE: 400,
      BAD_LOG_QUERY: 400,
      BAD_AUDIT_QUERY: 400,
      LOG_NOT_CONFIGURED: 404,
      LOG_UNAVAILABLE: 503,
      BAD_RETENTION: 400,
      CONFIG_INVALID: 500,
      INVALID_OPTION: 500,
      INTERNAL: 500
    })
    expect(ERRORS.BAD_CALLBACK.message).toBe('callback must be a JavaScript identifier path like EXAMPLE.process')
    expect(Object.isFrozen(ERRORS)).toBe(true)
    for (const [code, E] of Object.entries(ERRORS)) {
      expect(E.code).toBe(code)
      expect(E.message).not.toMatch(/[<>\u2028\u2029]/)
    }
  })

  test('instances are Errors with code, statusCode and the fixed message', () => {
    const err = new ERRORS.URL_TOO_LONG()
    expect(err).toBeInstanceOf(Error)
    expect(err).toBeInstanceOf(ERRORS.URL_TOO_LONG)
    expect(err).not.toBeInstanceOf(ERRORS.BAD_ID)
    expect(err).toMatchObject({ code: 'URL_TOO_LONG', statusCode: 414, message: 'the request URL is too long' })
    expect(err.stack).toMatch(/^BeaconError \[URL_TOO_LONG\]: the request URL is too long\n/)
  })

  test('a detail and a cause are for startup errors', () => {
    const cause = new Error('root')
    const err = new ERRORS.CONFIG_INVALID('port must be integer', { cause })
    expect(err.message).toBe('invalid settings: port must be integer')
    expect(err.cause).toBe(cause)
  })

  test('createError checks its arguments', () => {
    const Teapot = createError('TEAPOT', 'short and stout', 418)
    expect(new Teapot()).toMatchObject({ code: 'TEAPOT', statusCode: 418, message: 'short and stout' })
    expect(new (createError('X', 'y'))().statusCode).toBe(500)
    expect(() => createError('', 'm', 400)).toThrow(TypeError)
    expect(() => createError('X', '', 400)).toThrow(TypeError)
    expect(() => createError('X', 'm', 200)).toThrow(TypeError)
  })
})
