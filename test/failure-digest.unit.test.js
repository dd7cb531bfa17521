'use strict'
const { FailureDigest } = require('./support/failure-digest')

function digestOf (text, opts) {
  const digest = new FailureDigest(opts)
  for (const line of text.split('\n')) digest.add(line)
  return digest.report()
}

const RUN = `PASS main test/a.test.js
  ● Console

    console.log
      a line of a passing test
FAIL main test/b.test.js (12.5 s)
  ● b › answers 200

    expect(received).toBe(expected)

    Expected: 200
    Received: 500

      at Object.toBe (test/b.test.js:10:5)
PASS main test/d.test.js
  ● Console

    console.log
      a log of the failing file
PASS main test/c.test.js
Summary of all failing tests
FAIL main test/b.test.js (12.5 s)
  ● b › answers 200
Test Suites: 1 failed, 2 passed, 3 total`

test('keeps the failing file, the test and its assertion, not the console or the summary', () => {
  expect(digestOf(RUN)).toEqual([
    'FAIL main test/b.test.js (12.5 s)',
    '  ● b › answers 200',
    '    expect(received).toBe(expected)',
    '    Expected: 200',
    '    Received: 500',
    '      at Object.toBe (test/b.test.js:10:5)'
  ])
})

test('a passing run leaves an empty digest', () => {
  expect(digestOf('PASS main test/a.test.js\n  ● Console\n\n    console.log\n      fine')).toEqual([])
})

test('the cap keeps the first lines and counts the rest', () => {
  const report = digestOf(RUN, { maxLines: 2 })
  expect(report).toEqual(['FAIL main test/b.test.js (12.5 s)', '  ● b › answers 200', '(4 more lines above)'])
})
