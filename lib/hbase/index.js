'use strict'

const { HBaseClient, createHBaseClient } = require('./client')
const { HBaseError, CODES } = require('./errors')
const { findCell } = require('./cells')

module.exports = { HBaseClient, createHBaseClient, HBaseError, CODES, findCell }
