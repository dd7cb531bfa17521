'use strict'

// Three projects, over test/, the workspace packages' own tests (packages/*/test/) and the
// tools' (tools/*/test/):
// - `unit`: pure logic, no JVM (`*.unit.test.js`): `npm run test:unit`, well under a minute;
// - `main`: everything else that runs against the shared test HBase (started by globalSetup);
// - `faults`: stops, kills and restarts HBase instances of its own, so never the shared one.
// `npm test` is test/lanes.js: `unit` first, while the shared test HBase starts (a broken build
// fails in seconds), then lint, and `main` and `faults` in two lanes at once, each lane one jest
// at a time, in band. Plain CommonJS on node: no project needs babel-jest's transform, which cost a
// clean clone's unit run 15 CPU-s of its 56.
const plain = { testEnvironment: 'node', transform: {} }
const withHBase = {
  ...plain,
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js'
}

module.exports = {
  testTimeout: 60000,
  testSequencer: '<rootDir>/test/support/test-sequencer.js',
  projects: [
    { ...plain, displayName: 'unit', testMatch: ['<rootDir>/{test,packages/*/test,tools/*/test}/**/*.unit.test.js'] },
    {
      ...withHBase,
      displayName: 'main',
      testMatch: ['<rootDir>/{test,packages/*/test,tools/*/test}/**/*.test.js'],
      testPathIgnorePatterns: ['/node_modules/', '\\.unit\\.test\\.js$', '<rootDir>/test/faults/']
    },
    { ...withHBase, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.test.js'] }
  ]
}
