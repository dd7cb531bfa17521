'use strict'

// Every report kept in tools/bench/results names the command that made it and the commit it ran
// at, in the header that writeResult() puts atop a new report (issue 36 item 2).

const fs = require('node:fs')
const path = require('node:path')
const { provenanceHeader } = require('../lib/result-files')

const dir = path.join(__dirname, '..', 'results')
const reports = fs.readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md')
const HEADER = /^> Command: `([^`]+)` {2}\n> Commit: `([0-9a-f]{7,40}(?: \(dirty\))?)`\n\n/

/** @param {string} text a report's markdown @returns {{ command: string, commit: string } | null} */
function provenanceOf (text) {
  const m = HEADER.exec(text)
  return m && { command: m[1], commit: m[2] }
}

test('the results folder has reports to check', () => {
  expect(reports.length).toBeGreaterThan(10)
})

test.each(reports)('%s opens with its command and commit, as provenanceHeader writes them', (file) => {
  const text = fs.readFileSync(path.join(dir, file), 'utf8')
  const found = provenanceOf(text)
  expect(found).not.toBeNull()
  expect(text.startsWith(provenanceHeader(/** @type {{ command: string, commit: string }} */ (found)))).toBe(true)
})

test('a report without the header, or with a commit that is no hash, is caught', () => {
  expect(provenanceOf('# Beacon benchmark\n')).toBeNull()
  expect(provenanceOf('> Command: `npm run bench`  \n> Commit: `unknown`\n\n# x')).toBeNull()
  expect(provenanceOf(provenanceHeader({ command: 'npm run bench', commit: 'abc1234' }) + '# x'))
    .toEqual({ command: 'npm run bench', commit: 'abc1234' })
  expect(provenanceOf(provenanceHeader({ command: 'npm run bench', commit: 'abc1234 (dirty)' }))?.commit).toBe('abc1234 (dirty)')
})
