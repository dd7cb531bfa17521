'use strict'

// README's tables of error codes are held to the code (fastify's habit): every code the code
// defines is listed with its status and fixed message, and README lists no code that does not
// exist.

const fs = require('node:fs')
const path = require('node:path')
const { ERRORS } = require('../../lib/errors')
const { CODES } = require('../../lib/hbase')

const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8')

/** Rows `| CODE | ... |` of the table that follows `heading`, as arrays of cells. */
function tableAfter (heading) {
  const start = README.indexOf(heading)
  expect(start).toBeGreaterThanOrEqual(0)
  const lines = README.slice(start).split('\n')
  const first = lines.findIndex((l) => l.startsWith('| code |'))
  const rows = []
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()))
  }
  return rows
}

test("README's beacon error table lists every code with its status and message, and nothing else", () => {
  const rows = tableAfter('### Error codes')
  expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(ERRORS).sort())
  for (const [code, status, message] of rows) {
    expect({ code, status: Number(status), message }).toEqual({ code, status: ERRORS[code].statusCode, message: ERRORS[code].message })
  }
})

test("README's HBase client error table lists every code of the library, and nothing else", () => {
  const rows = tableAfter('Errors are `HBaseError`s')
  expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(CODES).sort())
})
