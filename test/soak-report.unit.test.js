'use strict'

// The soak's report (test/soak.js, test/support/soak-report.js): audits read back, a jest
// failure's first lines found, the markdown tables.

const { parseAudits, firstErrorLines, soakMarkdown } = require('./support/soak-report')

const JEST_FAILURE = `  console.log
    signals: something

FAIL faults test/faults/server-signals.test.js (60 s)
  \u001b[31m✕\u001b[39m SIGTERM under load (5000 ms)

  ● SIGTERM under load without any crash: every answered request is logged, exactly

    expect(received).toEqual(expected) // deep equality

    - Array []
    + Array [
    +   "/tmp/x/journal/j-1-w-1.ndjson: journal, 12 lines",
    + ]

      at Object.<anonymous> (test/faults/server-signals.test.js:170:18)
`

test('audit records are read back; a line cut short by a killed run is skipped', () => {
  const good = { test: 't', answered: 3, rows: 3, left: { files: 0, lines: 0 }, files: [] }
  expect(parseAudits(`${JSON.stringify(good)}\n{"test":"cut`)).toEqual([good])
})

test('the first failure of a jest run: its name and the first lines of its message', () => {
  expect(firstErrorLines(JEST_FAILURE, 4)).toEqual([
    '  ● SIGTERM under load without any crash: every answered request is logged, exactly',
    '    expect(received).toEqual(expected) // deep equality',
    '    - Array []',
    '    + Array ['
  ])
  expect(firstErrorLines('PASS faults test/faults/x.test.js\n  ● Console\n\n    console.log\n')).toEqual([])
})

test('one table per file, a row per audit, the failing runs\' first error lines', () => {
  const run = (n, passed, ms, errors, audits) => ({
    run: n, passed, code: passed ? 0 : 1, signal: null, timedOut: false, ms, log: `/tmp/s-${n}.log`, errors, audits
  })
  const lines = soakMarkdown({
    started: '2026-01-01T00:00:00.000Z',
    runs: 2,
    files: [{
      name: 'server-signals',
      results: [
        run(1, true, 61400, [], [
          { test: 'a | b', answered: 10, rows: 10, left: { files: 0, lines: 0 }, files: [] },
          { test: 'running', answered: 5, rows: 5, left: null, files: null }
        ]),
        run(2, false, 70000, ['  ● a', '    boom'], [
          { test: 'a', answered: 10, rows: null, left: { files: 2, lines: 12 }, files: ['x'] }
        ])
      ]
    }]
  })
  expect(lines).toContain('| server-signals | 2 | 1 |')
  expect(lines).toContain('## server-signals: 2 runs, 1 failed')
  expect(lines).toContain('| 1 | pass | 61 | a \\| b | 10 | 10 | 0 |')
  expect(lines).toContain('| | | | running | 5 | 5 | host running, gauges 0 |')
  expect(lines).toContain('| 2 | FAIL (exit 1) | 70 | a | 10 | not counted | 2 files, 12 lines |')
  expect(lines).toContain('- run 2 (FAIL (exit 1), output in `/tmp/s-2.log`):')
  expect(lines).toContain('      boom')
})
