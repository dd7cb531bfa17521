'use strict'

// What the CLI prints, word by word (issue 40): counts in the singular when there is one, and
// every option's help text in one column past the longest flag.

const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { eraseLine } = require('../../bin/log-lifecycle')

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')

test('an erase of one row in one minute says "1 row", "1 minute"', () => {
  const base = { id: '42', from: 'a', to: 'b', found: 1, deleted: 1, minutes: 1 }
  expect(eraseLine({ ...base, dryRun: true })).toBe('dry run: 1 row of id 42 in a .. b (1 minute); nothing deleted')
  expect(eraseLine({ ...base, dryRun: false })).toBe('erased 1 of 1 row of id 42 in a .. b; rollups of 1 minute counted again')
  expect(eraseLine({ ...base, found: 2, minutes: 0, dryRun: true })).toBe('dry run: 2 rows of id 42 in a .. b (0 minutes); nothing deleted')
})

test.each([['log', 'retention'], ['log', 'scan'], ['config', 'list']])('`beacon %s %s --help`: each option\'s help starts in one column, ' +
  'after a space', (...words) => {
  const help = execFileSync(process.execPath, [CLI, ...words, '--help'], { encoding: 'utf8', env: { PATH: process.env.PATH } })
  const options = help.split('\n\n').find((block) => block.startsWith('options:'))
  const lines = options.split('\n').slice(1).filter(Boolean)
  expect(lines.length).toBeGreaterThan(1)
  const columns = new Set(lines.map((line) => /^\s+(-\w, )?--\S+( <[^>]+>)?\s{2,}/.exec(line)?.[0].length))
  expect([...columns]).toHaveLength(1)
  expect(columns.has(undefined)).toBe(false)
})

test.each(['abc', '0', '-5', '1001', '2.5'])('`config list --limit %s` is a usage error (exit 1) before any server is asked', (limit) => {
  // Nobody listens on port 1: a request would fail with exit 2, not 1.
  let error
  try {
    execFileSync(process.execPath, [CLI, 'config', 'list', `--limit=${limit}`, '--url', 'http://127.0.0.1:1'],
      { encoding: 'utf8', env: { PATH: process.env.PATH }, stdio: 'pipe' })
  } catch (err) {
    error = err
  }
  expect(error).toMatchObject({ status: 1, stderr: `beacon: --limit must be a whole number from 1 to 1000, not "${limit}"\n` })
})
