'use strict'

// `logSinks.<name>.privacy` (logging/privacy.js): filled with its defaults in every sink, merged
// key by key across layers, and validated like every other key, with errors that name the key,
// the values allowed and where the bad one was set.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { loadSettings } = require('../../config')

const FULL = { ip: 'full', userAgent: 'full', honorOptOut: false }

test('every sink, declared by default or by the user, gets the defaults: store everything, opt-out not honoured', () => {
  const settings = loadSettings({ env: {}, overrides: { logSinks: { audit: { type: 'file', path: 'logs/audit.log' } } } })
  expect(settings.logSinks.file.privacy).toEqual(FULL)
  expect(settings.logSinks.hbase.privacy).toEqual(FULL)
  expect(settings.logSinks.audit.privacy).toEqual(FULL)
  expect(Object.isFrozen(settings.logSinks.file.privacy)).toBe(true)
})

test('a partial privacy object is completed; layers merge key by key', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-privacy-'))
  try {
    const file = path.join(dir, 'settings.json')
    fs.writeFileSync(file, JSON.stringify({ logSinks: { hbase: { privacy: { ip: 'hash' } }, file: { privacy: { userAgent: 'none' } } } }))
    const settings = loadSettings({
      env: {},
      file,
      overrides: {
        logSinks: { hbase: { privacy: { honorOptOut: true } }, extra: { type: 'hbase', table: 'x', privacy: { ip: 'truncate' } } }
      }
    })
    expect(settings.logSinks.hbase.privacy).toEqual({ ip: 'hash', userAgent: 'full', honorOptOut: true })
    expect(settings.logSinks.file.privacy).toEqual({ ip: 'full', userAgent: 'none', honorOptOut: false })
    expect(settings.logSinks.extra.privacy).toEqual({ ip: 'truncate', userAgent: 'full', honorOptOut: false })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test.each(['full', 'truncate', 'hash', 'none'])('ip: %s is accepted on both sink types', (ip) => {
  const settings = loadSettings({ env: {}, overrides: { logSinks: { file: { privacy: { ip } }, hbase: { privacy: { ip } } } } })
  expect(settings.logSinks.file.privacy.ip).toBe(ip)
  expect(settings.logSinks.hbase.privacy.ip).toBe(ip)
})

describe('bad values throw CONFIG_INVALID naming the key and its source', () => {
  test.each([
    [
      'unknown ip mode',
      { hbase: { privacy: { ip: 'anonymize' } } },
      /logSinks\.hbase\.privacy\.ip must be one of: "full", "truncate", "hash", "none" \(in overrides\)/
    ],
    [
      'unknown userAgent mode',
      { file: { privacy: { userAgent: 'truncate' } } },
      /logSinks\.file\.privacy\.userAgent must be one of: "full", "none"/
    ],
    [
      'honorOptOut not a boolean',
      { file: { privacy: { honorOptOut: 'yes' } } },
      /logSinks\.file\.privacy\.honorOptOut must be true or false/
    ],
    ['a misspelt key', { hbase: { privacy: { userAgnet: 'none' } } }, /logSinks\.hbase\.privacy\.userAgnet is not a known key/],
    ['privacy not an object', { file: { privacy: 'truncate' } }, /logSinks\.file\.privacy must be object/],
    ['ip case matters', { file: { privacy: { ip: 'Truncate' } } }, /logSinks\.file\.privacy\.ip must be one of/]
  ])('%s', (_, logSinks, message) => {
    const load = () => loadSettings({ env: {}, overrides: { logSinks } })
    expect(load).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(message) }))
  })
})
