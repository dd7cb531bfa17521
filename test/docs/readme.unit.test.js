'use strict'

// The documented tables of error codes are held to the code (fastify's habit): every code the
// code defines is listed with its status and fixed message, and no page lists a code that does not
// exist. beacon's table lives in docs/errors.md, the HBase client's beside its code in
// packages/hbase-client/README.md; README's page snippet is one that test/api/browser.test.js runs.

const fs = require('node:fs')
const path = require('node:path')
const { ERRORS } = require('../../lib/errors')
const { CODES } = require('@beacon/hbase-client')

const ROOT = path.join(__dirname, '..', '..')
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8')

/** Rows `| CODE | ... |` of the table that follows `heading` in `text`, as arrays of cells. */
function tableAfter (text, heading) {
  const start = text.indexOf(heading)
  expect(start).toBeGreaterThanOrEqual(0)
  const lines = text.slice(start).split('\n')
  const first = lines.findIndex((l) => l.startsWith('| code |'))
  expect(first).toBeGreaterThanOrEqual(0)
  const rows = []
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()))
  }
  return rows
}

/** The fenced blocks of `text` in language `lang`, after `heading` (up to the next `## `). */
function blocksAfter (text, heading, lang) {
  const start = text.indexOf(heading)
  expect(start).toBeGreaterThanOrEqual(0)
  const end = text.indexOf('\n## ', start + 1)
  const section = text.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter(([, l]) => l === lang).map(([, , body]) => body)
}

test("docs/errors.md's beacon error table lists every code with its status and message, and nothing else", () => {
  const rows = tableAfter(read('docs/errors.md'), '# Error codes')
  expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(ERRORS).sort())
  for (const [code, status, message] of rows) {
    expect({ code, status: Number(status), message }).toEqual({ code, status: ERRORS[code].statusCode, message: ERRORS[code].message })
  }
})

test("packages/hbase-client/README.md's HBase client error table lists every code of the library, and nothing else", () => {
  const rows = tableAfter(read('packages/hbase-client/README.md'), 'Errors are `HBaseError`s')
  expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(CODES).sort())
})

test("README's page snippet is the script tag of docs/page.md that the browser test runs", () => {
  const [readme] = blocksAfter(read('README.md'), '## Use it from a page', 'html')
  const page = blocksAfter(read('docs/page.md'), '## Three snippets', 'html')
  expect(page).toHaveLength(3)
  expect(readme).toBe(page[0])
})
