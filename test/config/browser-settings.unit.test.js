'use strict'

// The settings of the browser-facing features, validated like every key: `endpoints.<name>.cors`
// (exact origins, "*" alone) and `endpoints.<name>.events` (declared names, existing sinks,
// caps), their defaults from config/defaults.js, and the errors that name the bad key.

const { loadSettings } = require('../../config')
const { loadError } = require('../support/settings')
const { CORS_DEFAULTS, EVENT_DEFAULTS } = require('../../config/defaults')

const withSample5 = (sample5) => ({ env: {}, overrides: { endpoints: { sample5 } } })

test('no endpoint declares cors or events by default', () => {
  const settings = loadSettings({ env: {} })
  for (const endpoint of Object.values(settings.endpoints)) {
    expect(endpoint.cors).toBeUndefined()
    expect(endpoint.events).toBeUndefined()
  }
})

test('declared, they get their defaults and are frozen', () => {
  const settings = loadSettings(
    withSample5({
      cors: { origins: ['https://shop.example', 'http://127.0.0.1:8080', 'http://[::1]:3000'] },
      events: { names: ['exposure'], sinks: ['hbase'] }
    })
  )
  const { cors, events } = settings.endpoints.sample5
  expect(cors).toEqual({ origins: ['https://shop.example', 'http://127.0.0.1:8080', 'http://[::1]:3000'], ...CORS_DEFAULTS })
  expect(events).toEqual({ names: ['exposure'], sinks: ['hbase'], ...EVENT_DEFAULTS })
  expect(Object.isFrozen(events.names)).toBe(true)
  expect(loadSettings(withSample5({ cors: { origins: ['*'], maxAgeSeconds: 0 } })).endpoints.sample5.cors).toEqual({
    origins: ['*'],
    maxAgeSeconds: 0
  })
})

test.each([
  [
    'an origin with a path',
    { cors: { origins: ['https://shop.example/'] } },
    /endpoints\.sample5\.cors\.origins\[0\] must be an origin like https:\/\/shop\.example/
  ],
  ['an origin in upper case', { cors: { origins: ['https://Shop.example'] } }, /cors\.origins\[0\] must be an origin/],
  ['a bare host', { cors: { origins: ['shop.example'] } }, /cors\.origins\[0\] must be an origin/],
  ['a header injection', { cors: { origins: ['https://a.example\r\nSet-Cookie: x=1'] } }, /cors\.origins\[0\] must be an origin/],
  ['the "null" origin', { cors: { origins: ['null'] } }, /cors\.origins\[0\] must be an origin/],
  ['a wildcard subdomain', { cors: { origins: ['https://*.shop.example'] } }, /cors\.origins\[0\] must be an origin/],
  [
    '"*" among others',
    { cors: { origins: ['*', 'https://shop.example'] } },
    /endpoints\.sample5\.cors\.origins: "\*" \(any origin\) must stand alone/
  ],
  ['no origins', { cors: { origins: [] } }, /cors\.origins must NOT have fewer than 1 items/],
  ['credentials', { cors: { origins: ['https://shop.example'], credentials: true } }, /cors\.credentials is not a known key/],
  ['a negative max-age', { cors: { origins: ['*'], maxAgeSeconds: -1 } }, /cors\.maxAgeSeconds must be >= 0/],
  ['cors as a string', { cors: 'https://shop.example' }, /endpoints\.sample5\.cors must be object/],
  ['events without names', { events: { sinks: ['hbase'] } }, /endpoints\.sample5\.events\.names is required/],
  ['events without sinks', { events: { names: ['exposure'] } }, /endpoints\.sample5\.events\.sinks is required/],
  [
    'an unknown sink',
    { events: { names: ['exposure'], sinks: ['kafka'] } },
    /endpoints\.sample5\.events\.sinks names unknown sink "kafka" \(declared sinks: file, hbase\)/
  ],
  ['an event name with a space', { events: { names: ['add to cart'], sinks: ['hbase'] } }, /events\.names\[0\] must match pattern/],
  ['a batch cap of 0', { events: { names: ['exposure'], sinks: ['hbase'], maxEvents: 0 } }, /events\.maxEvents must be >= 1/],
  [
    'a body cap over 64 KiB',
    { events: { names: ['exposure'], sinks: ['hbase'], maxBodyBytes: 65537 } },
    /events\.maxBodyBytes must be <= 65536/
  ],
  ['gif as a string', { events: { names: ['exposure'], sinks: ['hbase'], gif: 'yes' } }, /events\.gif must be boolean/],
  ['an unknown events key', { events: { names: ['exposure'], sinks: ['hbase'], props: true } }, /events\.props is not a known key/]
])('%s: CONFIG_INVALID naming the key', (name, sample5, message) => {
  const err = loadError(withSample5(sample5))
  expect(err.code).toBe('CONFIG_INVALID')
  expect(err.message).toMatch(message)
})
