'use strict'

const { HBaseClient, createHBaseClient } = require('./client')
const { HBaseError, CODES, mayHaveApplied } = require('./errors')
const { findCell } = require('./cells')
const filters = require('./filters')

/**
 * The types a caller names, so that nothing outside the package reaches into lib/.
 * @typedef {import('./cells').Cell} Cell
 * @typedef {import('./cells').Row} Row
 * @typedef {import('./scan').ScanOptions} ScanOptions
 * @typedef {import('./filters').Filter} Filter
 * @typedef {import('./traffic').TrafficStats} TrafficStats
 * @typedef {import('./options').ClientConfig} ClientConfig
 */

module.exports = { HBaseClient, createHBaseClient, HBaseError, CODES, mayHaveApplied, findCell, filters }
