'use strict'

const { configEntry, contentVersion } = require('./entry')

/**
 * Config source that gives every id the same value from config/ (sample1). Synchronous, so the
 * data plane answers without a promise.
 * @param {{ value: object }} options
 * @returns {{ lookup: (id: string) => import('./entry').ConfigEntry }}
 */
function createFixedSource ({ value }) {
  const entry = configEntry(value, contentVersion('f', value), true)
  return { lookup: () => entry }
}

module.exports = { createFixedSource }
