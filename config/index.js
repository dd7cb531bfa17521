'use strict'

/** Settings: defaults, the schema and the loader. See config/load.js. */

const { loadSettings, describeEndpoints } = require('./load')
const { DEFAULTS, ENV_VARS, CONFIG_FILE_ENV } = require('./defaults')
const { schema } = require('./schema')

module.exports = { loadSettings, describeEndpoints, DEFAULTS, ENV_VARS, CONFIG_FILE_ENV, schema }
