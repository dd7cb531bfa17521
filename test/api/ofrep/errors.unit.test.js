'use strict'

// docs/openfeature.md lists the OFREP error table (api/public/ofrep/errors.js) case by case: status,
// errorCode, fixed details and extra headers; nothing more, nothing less (fastify's habit, as
// test/docs/readme.unit.test.js does for beacon's own table).

const fs = require('node:fs')
const path = require('node:path')
const { OFREP_ERRORS } = require('../../../api/public/ofrep/errors')

const DOC = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'openfeature.md'), 'utf8')

/** The rows of the table that follows `heading`, as arrays of cells. */
function tableAfter (text, heading) {
  const lines = text.slice(text.indexOf(heading)).split('\n')
  const first = lines.findIndex((l) => l.startsWith('| case |'))
  expect(first).toBeGreaterThan(0)
  const rows = []
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    rows.push(line.split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '')))
  }
  return rows
}

const headersCell = (headers) => Object.entries(headers).map(([k, v]) => '`' + k + ': ' + v + '`').join(', ') || '—'

test("docs/openfeature.md's error table is the code's, row for row", () => {
  const rows = tableAfter(DOC, '### Errors')
  expect(rows.map((r) => r[0])).toEqual(Object.keys(OFREP_ERRORS))
  for (const [name, status, errorCode, errorDetails, headers] of rows) {
    const e = OFREP_ERRORS[name]
    expect({ name, status: Number(status), errorCode, errorDetails, headers })
      .toEqual({ name, status: e.status, errorCode: e.errorCode, errorDetails: e.errorDetails, headers: headersCell(e.headers) })
  }
})

test('the limits the page states are the defaults of api/public/ofrep/limits.js', () => {
  const { OFREP_LIMITS } = require('../../../api/public/ofrep/limits')
  expect(OFREP_LIMITS).toEqual({ maxBodyBytes: 8192, maxKeyLength: 256, maxDepth: 8, maxFlags: 1000 })
  for (const stated of ['8 KiB', 'longer than 256 characters', 'at most **8 segments**', 'at most **1,000 flags**']) {
    expect(DOC).toContain(stated)
  }
})
