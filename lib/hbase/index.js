'use strict'

const { HBaseClient, createHBaseClient } = require('./client')
const { HBaseError, CODES, mayHaveApplied } = require('./errors')
const { findCell } = require('./cells')
const filters = require('./filters')

module.exports = { HBaseClient, createHBaseClient, HBaseError, CODES, mayHaveApplied, findCell, filters }
