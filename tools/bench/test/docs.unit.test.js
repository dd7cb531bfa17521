'use strict'

const fs = require('node:fs')
const { rebase, headlineOf, render, build, OUT } = require('../docs')

test('docs/benchmarks.md is what tools/bench/docs.js builds from the template and the reports', () => {
  // Fails after a report or the template changed without `npm run bench:docs`.
  expect(fs.readFileSync(OUT, 'utf8')).toBe(build())
})

const REPORT = [
  '> Command: `npm run bench -- --label x`  ',
  '> Commit: `abc1234`',
  '',
  '# Beacon benchmark',
  '',
  '| endpoint | req/s |',
  '|---|---:|',
  '| sample1 | 10 |',
  '| sample2 ([chart](x-sweep.svg), [why](#notes), [seed](https://example.com/s)) | 7 |',
  '',
  '## Config part',
  '',
  'Some text | with a bar.',
  '',
  '| size | hit ratio |',
  '|---|---:|',
  '| 10k | 0.5 |',
  'after the table'
].join('\n')

test('the headline is the first table, its relative links made relative to docs/', () => {
  expect(headlineOf(REPORT)).toBe([
    '| endpoint | req/s |',
    '|---|---:|',
    '| sample1 | 10 |',
    '| sample2 ([chart](../tools/bench/results/x-sweep.svg), [why](#notes), [seed](https://example.com/s)) | 7 |'
  ].join('\n'))
})

test('or the first table after the heading the template names', () => {
  expect(headlineOf(REPORT, 'Config part')).toBe('| size | hit ratio |\n|---|---:|\n| 10k | 0.5 |')
  expect(headlineOf(REPORT, 'No such part')).toBeNull()
  expect(headlineOf('# A report\n\nno table | here\n')).toBeNull()
})

test("the template's links, written from tools/bench/, are made relative to docs/", () => {
  expect(rebase('[a](README.md#x), [b](#y), [c](https://e.org/z), [d](../../docs/page.md)', 'tools/bench', 'docs'))
    .toBe('[a](../tools/bench/README.md#x), [b](#y), [c](https://e.org/z), [d](page.md)')
})

test('the page: the template with its directives gone and one section per report', () => {
  const template = 'Intro.\n\n<!-- headline b.md: Config part -->\n<!-- bench:reports -->\n'
  const report = { scenario: 'x', date: '2026-11-27 04:38:15 UTC', command: 'npm run bench -- --label x', commit: 'abc1234' }
  const page = render(template, [{ ...report, file: 'b.md', markdown: REPORT }])
  expect(page).toContain('Intro.\n\n### x — 2026-11-27 04:38:15 UTC\n\n[b.md](../tools/bench/results/b.md), commit `abc1234`; ' +
    'command: `npm run bench -- --label x`\n\n| size | hit ratio |')
  expect(page).not.toContain('<!-- headline')
  expect(() => render(template, [{ ...report, file: 'c.md', markdown: '# no table\n' }])).toThrow(/c\.md: no headline/)
  expect(() => render('no marker\n', [])).toThrow(/bench:reports/)
})
