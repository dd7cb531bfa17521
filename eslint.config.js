'use strict'

const neostandard = require('neostandard')

module.exports = [
  ...neostandard({
    env: ['node', 'jest'],
    ignores: ['node_modules/**', '.state/**', 'coverage/**', 'test-output/**', 'bench/results/**', 'infra/hbase/java/**']
  })
]
