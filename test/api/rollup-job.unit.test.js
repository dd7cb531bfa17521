'use strict'

// When the primary forks the rollup process (api/rollup-job.js keepsRollups) and with what heap
// cap (settings.rollupJob), from settings alone: no JVM.

const { loadSettings } = require('../../config')
const { keepsRollups } = require('../../api/rollup-job')

const load = (env) => loadSettings({ env: { BEACON_HBASE_BOOTSTRAP: '127.0.0.1:16020', ...env } })

test('a rollup process when a sink in use keeps rollups (the default), none when they are off', () => {
  expect(keepsRollups(load({}))).toBe(true)
  expect(keepsRollups(load({ BEACON_ACCESS_ROLLUPS: '0' }))).toBe(false)
})

test('its heap cap: 128 MiB by default, BEACON_ROLLUP_MAX_OLD_SPACE_MIB, at least 16', () => {
  expect(load({}).rollupJob).toEqual({ maxOldSpaceMiB: 128, maxGroups: 50000, maxAttempts: 5 })
  expect(load({ BEACON_ROLLUP_MAX_OLD_SPACE_MIB: '256' }).rollupJob.maxOldSpaceMiB).toBe(256)
  expect(load({ BEACON_ROLLUP_MAX_GROUPS: '200000' }).rollupJob.maxGroups).toBe(200000)
  expect(() => load({ BEACON_ROLLUP_MAX_GROUPS: '10' })).toThrow(/maxGroups/)
  expect(() => load({ BEACON_ROLLUP_MAX_OLD_SPACE_MIB: '8' })).toThrow(/maxOldSpaceMiB/)
})
