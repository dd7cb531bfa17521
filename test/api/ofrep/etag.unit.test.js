'use strict'

// The bulk answer's ETag (a hash of its exact bytes) and If-None-Match (RFC 9110: a list, `*`,
// weak comparison).

const { etagOf, ifNoneMatch } = require('../../../api/public/ofrep/etag')
const { renderBulk } = require('../../../api/public/ofrep/responses')
const { flagsOf } = require('../../../api/public/ofrep/flags')
const { evaluateAll, REASONS } = require('../../../api/public/ofrep/evaluate')

const render = (config, version) => renderBulk(evaluateAll(flagsOf(config), REASONS.TARGETING_MATCH), { endpoint: 'sample5', version })

describe('etagOf', () => {
  test('a strong, quoted tag of 22 base64url characters', () => {
    expect(etagOf('{"flags":[]}')).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
  })

  test('the same config gives the same tag; a changed leaf, key, order, reason or version another', () => {
    const config = { variant: 'B', features: { search: true, ui: { theme: 'dark' } } }
    const tag = render(config, 'v1').etag
    expect(render(JSON.parse(JSON.stringify(config)), 'v1').etag).toBe(tag)
    const others = [
      render({ variant: 'B', features: { search: true, ui: { theme: 'light' } } }, 'v1'),
      render({ variant: 'B', features: { search: false, ui: { theme: 'dark' } } }, 'v1'),
      render({ variant: 'B', features: { search: true, ui: { theme: 'dark' }, extra: null } }, 'v1'),
      render({ features: { search: true, ui: { theme: 'dark' } }, variant: 'B' }, 'v1'),
      render(config, 'v2'),
      renderBulk(evaluateAll(flagsOf(config), REASONS.STATIC), { endpoint: 'sample5', version: 'v1' }),
      renderBulk(evaluateAll(flagsOf(config), REASONS.TARGETING_MATCH), { endpoint: 'sample4', version: 'v1' })
    ].map((r) => r.etag)
    expect(new Set([tag, ...others]).size).toBe(others.length + 1)
  })

  test('the tag is of the body as sent', () => {
    const { body, etag } = render({ a: 1 }, 'v1')
    expect(etagOf(body)).toBe(etag)
  })
})

describe('ifNoneMatch', () => {
  const tag = '"abc123"'

  test.each([
    ['the tag itself', '"abc123"'],
    ['the tag, weak', 'W/"abc123"'],
    ['in a list', '"x", "abc123", "y"'],
    ['in a list without spaces', '"x","abc123"'],
    ['weak, in a list', '"x", W/"abc123"'],
    ['*', '*'],
    ['* with spaces', ' * ']
  ])('%s: matches', (name, header) => {
    expect(ifNoneMatch(header, tag)).toBe(true)
  })

  test.each([
    ['absent', undefined],
    ['empty', ''],
    ['another tag', '"abc124"'],
    ['a prefix of it', '"abc12"'],
    ['unquoted', 'abc123'],
    ['another case', '"ABC123"'],
    ['a list of others', '"x", W/"y"'],
    ['* in a list (not the wildcard)', '"x", *'],
    ['an array (not what node gives)', ['"abc123"']]
  ])('%s: no match', (name, header) => {
    expect(ifNoneMatch(/** @type {any} */ (header), tag)).toBe(false)
  })

  test('a weak current tag matches its strong form (weak comparison both ways)', () => {
    expect(ifNoneMatch('"abc123"', 'W/"abc123"')).toBe(true)
  })

  test('a long hostile header is scanned in linear time', () => {
    const header = 'W/"'.repeat(100000) + ' ' + '",'.repeat(100000)
    const started = performance.now()
    expect(ifNoneMatch(header, tag)).toBe(false)
    expect(performance.now() - started).toBeLessThan(2000)
  })
})
