'use strict'

// `endpoints.<name>.ofrep`, validated like every key: true/false or an object of options, the
// defaults of config/defaults.js, on by default for sample3 and sample5 only, and API keys read
// from the environment variable the settings name (never from the settings themselves).

const { loadSettings } = require('../../config')
const { loadError } = require('../support/settings')
const { OFREP_DEFAULTS } = require('../../config/defaults')
const { OFREP_LIMITS } = require('../../api/public/ofrep/limits')

const KEY = 'k-0123456789abcdef'
const withSample2 = (ofrep, env = {}) => ({ env, overrides: { endpoints: { sample2: { ofrep } } } })

test('on for sample3 and sample5 only, with the defaults; the limits of api/public/ofrep/ are those defaults', () => {
  const settings = loadSettings({ env: {} })
  const on = Object.entries(settings.endpoints).filter(([, e]) => e.ofrep).map(([name]) => name)
  expect(on).toEqual(['sample3', 'sample5'])
  expect(settings.endpoints.sample5.ofrep).toEqual(OFREP_DEFAULTS)
  // The change stream's settings are the wiring's alone (api/public/ofrep/routes.js); the rest are bounds.
  const { maxStreams, maxStreamsPerClient, heartbeatMs, maxStreamAgeSec, inactivityDelaySec, ...bounds } = OFREP_DEFAULTS
  expect(OFREP_LIMITS).toEqual(bounds)
  expect({ maxStreams, maxStreamsPerClient, heartbeatMs, maxStreamAgeSec, inactivityDelaySec })
    .toEqual({ maxStreams: 10000, maxStreamsPerClient: 1000, heartbeatMs: 15000, maxStreamAgeSec: 3600, inactivityDelaySec: 120 })
})

test('true, false and the object form; a layer can switch it off', () => {
  expect(loadSettings(withSample2(true)).endpoints.sample2.ofrep).toEqual(OFREP_DEFAULTS)
  expect(loadSettings(withSample2({ maxFlags: 10 })).endpoints.sample2.ofrep).toEqual({ ...OFREP_DEFAULTS, maxFlags: 10 })
  expect(loadSettings(withSample2(false)).endpoints.sample2.ofrep).toBeUndefined()
  expect(loadSettings({ env: {}, overrides: { endpoints: { sample5: { ofrep: false } } } }).endpoints.sample5.ofrep).toBeUndefined()
})

test('API keys come from the variable apiKeysEnv names, comma-separated, and are frozen', () => {
  const settings = loadSettings(withSample2({ apiKeysEnv: 'OFREP_KEYS' }, { OFREP_KEYS: ` ${KEY} , second-${KEY}` }))
  expect(settings.endpoints.sample2.ofrep).toEqual({ ...OFREP_DEFAULTS, apiKeysEnv: 'OFREP_KEYS', apiKeys: [KEY, `second-${KEY}`] })
  expect(Object.isFrozen(settings.endpoints.sample2.ofrep.apiKeys)).toBe(true)
})

test.each([
  ['a string', 'yes', /endpoints\.sample2\.ofrep must be true, false or an object like \{ "apiKeysEnv": "BEACON_OFREP_KEYS" \}/],
  ['an unknown key', { keys: [KEY] }, /endpoints\.sample2\.ofrep\.keys is not a known key/],
  ['the keys themselves', { apiKeys: [KEY] }, /endpoints\.sample2\.ofrep\.apiKeys is not a known key/],
  ['a body cap under 64 bytes', { maxBodyBytes: 10 }, /endpoints\.sample2\.ofrep\.maxBodyBytes must be >= 64/],
  ['a negative stream cap', { maxStreams: -1 }, /endpoints\.sample2\.ofrep\.maxStreams must be >= 0/],
  ['a heartbeat under 100 ms', { heartbeatMs: 10 }, /endpoints\.sample2\.ofrep\.heartbeatMs must be >= 100/],
  ['an inactivity delay of 0', { inactivityDelaySec: 0 }, /endpoints\.sample2\.ofrep\.inactivityDelaySec must be >= 1/],
  ['a fractional stream cap', { maxStreams: 1.5 }, /endpoints\.sample2\.ofrep\.maxStreams must be integer/],
  ['a bad variable name', { apiKeysEnv: 'MY KEYS' }, /endpoints\.sample2\.ofrep\.apiKeysEnv must be the name of an environment variable/],
  ['an unset variable', { apiKeysEnv: 'NOT_SET' }, /endpoints\.sample2\.ofrep\.apiKeysEnv names NOT_SET, which is not set/],
  ['a short key', { apiKeysEnv: 'SHORT' }, /env SHORT \(endpoints\.sample2\.ofrep\.apiKeysEnv\) must hold comma-separated API keys/]
])('%s: CONFIG_INVALID naming the key, never the secret', (name, ofrep, message) => {
  const err = loadError(withSample2(ofrep, { SHORT: 'secret-short', NOT_SET: '' }))
  expect(err.code).toBe('CONFIG_INVALID')
  expect(err.message).toMatch(message)
  expect(err.message).not.toContain('secret-short')
})
