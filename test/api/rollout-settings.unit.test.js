'use strict'

// A rollout declared in the settings file: checked in full as the endpoints are built, served
// from the start (before any stored rollout is read), with an ETag from its content.

const { loadSettings } = require('../../config')
const { buildEndpoints } = require('../../api/public/endpoints')

const rollout = { salt: 's', variants: [{ name: 'A', weight: 0, config: { a: 1 } }, { name: 'B', weight: 100, config: { b: 2 } }] }
const sinks = new Map([['file', { write () {} }], ['hbase', { write () {} }]])
const build = (declared) => {
  const settings = loadSettings({ env: {}, overrides: { endpoints: { sample3: { rollout: declared } } } })
  return buildEndpoints({ settings, store: /** @type {any} */ ({}), sinks: /** @type {any} */ (sinks) })
}

test('a declared rollout serves its variants from the start', () => {
  const endpoints = build(rollout)
  const sample3 = /** @type {any} */ (endpoints.get('/api/sample3.js'))
  expect(sample3.acceptsRollout).toBe(true)
  const entry = sample3.rollout.entryFor('anyone')
  expect(entry).toMatchObject({ found: false, variant: 'B', json: '{"b":2}', etag: expect.stringMatching(/^"s[A-Za-z0-9_-]+-B"$/) })
  expect(/** @type {any} */ (endpoints.get('/api/sample1.js')).acceptsRollout).toBe(false)
})

test('a declared rollout that is not valid stops the start, naming the setting and the problem', () => {
  expect(() => build({ ...rollout, salt: '' })).toThrow('endpoints.sample3.rollout: salt must be a string of 1-128 characters')
})
