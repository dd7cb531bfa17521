'use strict'

// What the settings tests share.

const { loadSettings } = require('../../config')

/**
 * Runs loadSettings and returns the CONFIG_INVALID error it throws (fails when it does not).
 * @param {object} options loadSettings options; `env` defaults to none
 * @returns {Error & { code?: string, issues?: string[] }}
 */
function loadError (options) {
  try {
    loadSettings({ env: {}, ...options })
  } catch (err) {
    return err
  }
  throw new Error('expected loadSettings to throw')
}

module.exports = { loadError }
