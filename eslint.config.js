'use strict'

const neostandard = require('neostandard')

// Only one string literal (a test title, an error message) may make a line longer than 140 characters: the code around it
// stays short (at most 60 characters before it, 40 after), the line is no comment, and it is at most 300 characters long.
// A template literal counts as a string only while it interpolates plain names (`${a.b}`); one with calls or operators is code.
const quoted = (q) => String.raw`Q(?:[^Q\\]|\\.)*Q`.replaceAll('Q', q)
const TEMPLATE = String.raw`\x60(?:[^\x60\\$]|\\.|\$(?!\{)|\$\{[\w.]+\})*\x60`
const STRING_LITERAL = `(?:${quoted("'")}|${quoted('"')}|${TEMPLATE})`
const LONG_ONLY_BY_ONE_STRING = String.raw`^(?=.{0,300}$)(?!\s*(?:\*|//|/\*))[^'"\x60/]{0,60}` + STRING_LITERAL + '.{0,40}$'

module.exports = [
  ...neostandard({
    env: ['node', 'jest'],
    ignores: ['node_modules/**', '.state/**', 'coverage/**', 'test-output/**', 'tools/bench/results/**', 'tools/dev-hbase/java/**']
  }),
  {
    rules: {
      // Lines short enough to read: wrap code, never pack it into long lines (not even to stay under the 400-line file cap).
      '@stylistic/max-len': ['error', {
        code: 140,
        tabWidth: 2,
        ignorePattern: LONG_ONLY_BY_ONE_STRING
      }]
    }
  }
]
